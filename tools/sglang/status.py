"""server_status: is a server up, what does it run, how loaded is it, what accept length does it see."""

from __future__ import annotations

import httpx
from pydantic import BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..hosts import HostError, PortNotListening
from ..inputs import Port
from ..registry import tool
from .handle import RunningServer
from .server_http import ServerInfoSummary, get_json, get_text, health_status, parse_metrics, server_info


class StatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: RunningServer | None = Field(default=None, description="A handle from launch_server; else look at `port`")
    port: Port = 30000


class ServerStatus(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    port: int
    up: bool = Field(description="/health answered 200")
    health_status: int | None = Field(description="/health's status code; None when nothing answered")
    process_running: bool | None = Field(description="With a handle: whether its process is alive")
    info: ServerInfoSummary | None
    accept_length: float | None = Field(description="Average speculative accept length since start (DP rank 0)")
    running_requests: int | None
    queued_requests: int | None
    gen_throughput_tok_s: float | None = Field(description="Last decode throughput the server logged (/metrics or server info)")
    source: str = Field(description="Where the load figures came from: get_load, metrics or none")


@tool("server_status", mutates=False)
def server_status(ctx: ToolContext, args: StatusArgs) -> ServerStatus:
    """Whether an SGLang server answers, its server info, accept length, and running and queued requests."""
    port = args.server.port if args.server is not None else args.port
    host = ctx.host
    running = host.is_running(args.server.process) if args.server is not None else None
    code = health_status(host, port)
    if code is None:
        return ServerStatus(port=port, up=False, health_status=None, process_running=running, info=None,
                            accept_length=None, running_requests=None, queued_requests=None,
                            gen_throughput_tok_s=None, source="none")
    info = _quietly(lambda: server_info(host, port))
    accept = info.avg_spec_accept_length[0] if info and info.avg_spec_accept_length else None
    throughput = None
    raw_info = _quietly(lambda: get_json(host, port, "/get_server_info"))
    if isinstance(raw_info, dict):
        states = [s for s in raw_info.get("internal_states") or [] if isinstance(s, dict)]
        if states and states[0].get("last_gen_throughput") is not None:
            throughput = float(states[0]["last_gen_throughput"])
    running_reqs = queued = None
    source = "none"
    load = _quietly(lambda: get_json(host, port, "/get_load"))
    if isinstance(load, list) and load:
        running_reqs = sum(int(r.get("num_reqs", 0)) for r in load if isinstance(r, dict))
        queued = sum(int(r.get("num_waiting_reqs", 0)) for r in load if isinstance(r, dict))
        source = "get_load"
    else:
        metrics = _quietly(lambda: parse_metrics(get_text(host, port, "/metrics")))
        if metrics:
            running_reqs = int(sum(metrics.get("sglang:num_running_reqs", []))) if "sglang:num_running_reqs" in metrics else None
            queued = int(sum(metrics.get("sglang:num_queue_reqs", []))) if "sglang:num_queue_reqs" in metrics else None
            if accept is None and metrics.get("sglang:spec_accept_length"):
                accept = metrics["sglang:spec_accept_length"][0]
            if throughput is None and metrics.get("sglang:gen_throughput"):
                throughput = sum(metrics["sglang:gen_throughput"])
            source = "metrics"
    return ServerStatus(port=port, up=code == 200, health_status=code, process_running=running, info=info,
                        accept_length=accept, running_requests=running_reqs, queued_requests=queued,
                        gen_throughput_tok_s=throughput, source=source)


def _quietly(fetch):  # noqa: ANN001, ANN202 - one helper for "this endpoint may be missing"
    try:
        return fetch()
    except (httpx.HTTPError, PortNotListening, HostError, ValueError):
        return None
