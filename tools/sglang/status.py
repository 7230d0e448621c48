"""server_status: is a server up, what does it run, how loaded is it, what accept length does it see."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..hosts import HostError, PortNotListening
from ..inputs import Port
from ..registry import tool
from .server_http import (
    LOAD_PATHS,
    ServerInfoSummary,
    get_json_first,
    get_text,
    health_status,
    parse_metrics,
    raw_server_info,
)

T = TypeVar("T")


class StatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str | None = Field(
        default=None, max_length=16, description="The id launch_server returned (e.g. 's1'); else look at `port`"
    )
    port: Port = 30000


class ServerStatus(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    port: int
    up: bool = Field(description="/health answered 200")
    health_status: int | None = Field(description="/health's status code; None when nothing answered")
    process_running: bool | None = Field(description="With a handle: whether its process is alive")
    info: ServerInfoSummary | None
    accept_length: float | None = Field(
        description="The server's average speculative accept length since start or its last /flush_cache (DP rank 0)"
    )
    running_requests: int | None
    queued_requests: int | None
    gen_throughput_tok_s: float | None = Field(
        description="Last decode throughput the server logged (/metrics or server info)"
    )
    source: str = Field(description="Where the load figures came from: v1/loads, get_load, metrics or none")
    log_path: str | None = Field(default=None, description="With a handle: the server's log on the host")


@tool("server_status", mutates=False)
def server_status(ctx: ToolContext, args: StatusArgs) -> ServerStatus:
    """Whether an SGLang server answers, its server info and log, accept length, running and queued requests."""
    server = ctx.handles.server(args.server) if args.server is not None else None
    port = server.port if server is not None else args.port
    host = ctx.host
    running = host.is_running(server.process) if server is not None else None
    code = health_status(host, port)
    if code is None:
        return ServerStatus(
            port=port,
            up=False,
            health_status=None,
            process_running=running,
            info=None,
            accept_length=None,
            running_requests=None,
            queued_requests=None,
            gen_throughput_tok_s=None,
            source="none",
            log_path=server.log_path if server else None,
        )
    raw_info = _quietly(lambda: raw_server_info(host, port))
    info = ServerInfoSummary.from_server_info(raw_info) if isinstance(raw_info, dict) and raw_info else None
    accept = info.avg_spec_accept_length[0] if info and info.avg_spec_accept_length else None
    throughput = None
    if isinstance(raw_info, dict):
        states = [s for s in raw_info.get("internal_states") or [] if isinstance(s, dict)]
        if states and states[0].get("last_gen_throughput") is not None:
            throughput = float(states[0]["last_gen_throughput"])
    running_reqs = queued = None
    source = "none"
    # /v1/loads (every modelled release), else /get_load (gone in 0.5.23), else the Prometheus gauges.
    found = _quietly(lambda: get_json_first(host, port, LOAD_PATHS))
    path, load = found if found is not None else (None, None)
    ranks = (
        load.get("loads") if path == "/v1/loads" and isinstance(load, dict) else load if path == "/get_load" else None
    )
    ranks = [r for r in ranks if isinstance(r, dict)] if isinstance(ranks, list) else []
    if path == "/v1/loads" and ranks:
        running_reqs = sum(int(r.get("num_running_reqs", 0)) for r in ranks)
        queued = sum(int(r.get("num_waiting_reqs", 0)) for r in ranks)
        spec = ranks[0].get("speculative")
        if accept is None and isinstance(spec, dict) and spec.get("accept_length") is not None:
            accept = float(spec["accept_length"])
        if throughput is None and any(r.get("gen_throughput") is not None for r in ranks):
            throughput = sum(float(r.get("gen_throughput") or 0.0) for r in ranks)
        source = "v1/loads"
    elif path == "/get_load" and ranks:
        # num_reqs counts running and waiting requests together (SGLang's GetLoadReqOutput).
        queued = sum(int(r.get("num_waiting_reqs", 0)) for r in ranks)
        running_reqs = sum(int(r.get("num_reqs", 0)) for r in ranks) - queued
        source = "get_load"
    else:
        metrics = _quietly(lambda: parse_metrics(get_text(host, port, "/metrics")))
        if metrics:
            running_reqs = (
                int(sum(metrics.get("sglang:num_running_reqs", []))) if "sglang:num_running_reqs" in metrics else None
            )
            queued = int(sum(metrics.get("sglang:num_queue_reqs", []))) if "sglang:num_queue_reqs" in metrics else None
            if accept is None and metrics.get("sglang:spec_accept_length"):
                accept = metrics["sglang:spec_accept_length"][0]
            if throughput is None and metrics.get("sglang:gen_throughput"):
                throughput = sum(metrics["sglang:gen_throughput"])
            source = "metrics"
    return ServerStatus(
        port=port,
        up=code == 200,
        health_status=code,
        process_running=running,
        info=info,
        accept_length=accept,
        running_requests=running_reqs,
        queued_requests=queued,
        gen_throughput_tok_s=throughput,
        source=source,
        log_path=server.log_path if server else None,
    )


def _quietly(fetch: Callable[[], T]) -> T | None:
    """What `fetch` returns, or None when the endpoint is missing or the server does not answer."""
    try:
        return fetch()
    except (httpx.HTTPError, PortNotListening, HostError, ValueError):
        return None
