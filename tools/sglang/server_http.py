"""Talking to a server on the host through host.forward(port): health, server info, load, metrics.

Every request goes through the host's port forward (SSH on a remote host), so
the server never has to listen beyond 127.0.0.1. Transport errors (a forward
torn down, a connection reset) are retried a few times: they are the link's,
not the server's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from ..hosts import Host, PortNotListening

REQUEST_TIMEOUT_S = 10.0


@contextmanager
def server_url(host: Host, port: int) -> Iterator[str]:
    """A base URL on this machine that reaches port `port` on the host while the context is open.

    Raises PortNotListening when nothing listens there.
    """
    with host.forward(port) as (address, local_port):
        yield f"http://{address}:{local_port}"


_transient = retry(
    retry=retry_if_exception_type(httpx.TransportError),
    stop=stop_after_attempt(3),
    wait=wait_exponential(multiplier=0.2, max=2),
    reraise=True,
)


@_transient
def _get(base: str, path: str) -> httpx.Response:
    return httpx.get(base + path, timeout=REQUEST_TIMEOUT_S)


def health_status(host: Host, port: int) -> int | None:
    """GET /health: its status code; None when nothing listens or the server does not answer."""
    try:
        with server_url(host, port) as base:
            return _get(base, "/health").status_code
    except (PortNotListening, httpx.HTTPError):
        return None


def get_json(host: Host, port: int, path: str) -> Any:
    """GET `path` and decode JSON; raises httpx.HTTPStatusError, PortNotListening."""
    with server_url(host, port) as base:
        response = _get(base, path)
        response.raise_for_status()
        return response.json()


def get_text(host: Host, port: int, path: str) -> str:
    with server_url(host, port) as base:
        response = _get(base, path)
        response.raise_for_status()
        return response.text


class ServerInfoSummary(BaseModel):
    """What /server_info (or /get_server_info) says about a running server that a planner acts on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str | None
    model_path: str | None
    served_model_name: str | None
    tp: int | None
    ep: int | None
    dp: int | None
    pp: int | None
    enable_dp_attention: bool | None
    cuda_graphs: bool | None
    cuda_graph_max_bs: int | None
    mem_fraction_static: float | None
    max_running_requests: int | None
    max_total_num_tokens: int | None
    context_length: int | None
    speculative_algorithm: str | None
    drafter_path: str | None
    block_size: int | None = Field(description="speculative_num_draft_tokens: positions verified per step")
    speculative_num_steps: int | None
    speculative_eagle_topk: int | None
    avg_spec_accept_length: list[float] = Field(
        description="Per DP rank, since start or the last /flush_cache (internal_states); not any one run's"
    )

    @classmethod
    def from_server_info(cls, info: dict[str, Any]) -> ServerInfoSummary:
        def pick(*names: str) -> Any:
            return next((info[n] for n in names if info.get(n) is not None), None)

        states = info.get("internal_states") or []
        # 0.5.23 reports DP attention as attn_dp_size N with dp_size 1 (the replicas); the configuration's dp is N.
        attn_dp = pick("attn_dp_size")
        attn_dp_wide = isinstance(attn_dp, int) and attn_dp > 1
        # 0.5.23 resolves the CUDA graphs per phase in cuda_graph_config: --cuda-graph-backend-decode disabled
        # leaves disable_cuda_graph false, and the cap in force is decode.max_bs (cuda_graph_max_bs_decode is
        # only what was given). Older releases: disable_cuda_graph and cuda_graph_max_bs.
        decode = (info.get("cuda_graph_config") or {}).get("decode")
        decode = decode if isinstance(decode, dict) else {}
        disable_graphs = info.get("disable_cuda_graph")
        if decode.get("backend") is not None:
            cuda_graphs: bool | None = decode["backend"] != "disabled"
        else:
            cuda_graphs = None if disable_graphs is None else not disable_graphs
        return cls(
            version=info.get("version"),
            model_path=info.get("model_path"),
            served_model_name=info.get("served_model_name"),
            tp=pick("tp_size"),
            ep=pick("ep_size"),
            dp=attn_dp if attn_dp_wide else pick("dp_size"),
            pp=pick("pp_size"),
            enable_dp_attention=True if attn_dp_wide else info.get("enable_dp_attention"),
            cuda_graphs=cuda_graphs,
            cuda_graph_max_bs=decode.get("max_bs") or pick("cuda_graph_max_bs", "cuda_graph_max_bs_decode"),
            mem_fraction_static=pick("mem_fraction_static"),
            max_running_requests=pick("max_running_requests"),
            max_total_num_tokens=pick("max_total_num_tokens"),
            context_length=pick("context_length"),
            speculative_algorithm=pick("speculative_algorithm"),
            drafter_path=pick("speculative_draft_model_path"),
            block_size=pick("speculative_num_draft_tokens", "speculative_dflash_block_size"),
            speculative_num_steps=pick("speculative_num_steps"),
            speculative_eagle_topk=pick("speculative_eagle_topk"),
            avg_spec_accept_length=[
                float(s["avg_spec_accept_length"])
                for s in states
                if isinstance(s, dict) and s.get("avg_spec_accept_length") is not None
            ],
        )


# Every modelled release serves /server_info and /model_info beside the deprecated /get_ names; the new names
# come first, the old ones are the fallback for a server that has only them.
SERVER_INFO_PATHS = ("/server_info", "/get_server_info")
MODEL_INFO_PATHS = ("/model_info", "/get_model_info")
# /v1/loads in every modelled release; /get_load up to 0.5.11 only.
LOAD_PATHS = ("/v1/loads", "/get_load")


def get_json_first(host: Host, port: int, paths: tuple[str, ...]) -> tuple[str, Any]:
    """(path, JSON) of the first of `paths` the server has; a 404 moves on, any other error is raised."""
    for path in paths[:-1]:
        try:
            return path, get_json(host, port, path)
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code != 404:
                raise
    return paths[-1], get_json(host, port, paths[-1])


def raw_server_info(host: Host, port: int) -> dict[str, Any]:
    """/server_info, falling back to /get_server_info."""
    _, info = get_json_first(host, port, SERVER_INFO_PATHS)
    return info if isinstance(info, dict) else {}


def model_info(host: Host, port: int) -> dict[str, Any]:
    """/model_info, falling back to /get_model_info."""
    _, info = get_json_first(host, port, MODEL_INFO_PATHS)
    return info if isinstance(info, dict) else {}


def server_info(host: Host, port: int) -> ServerInfoSummary:
    return ServerInfoSummary.from_server_info(raw_server_info(host, port))


_METRIC = re.compile(r"^(sglang:[a-z_]+)(\{[^}]*\})?\s+([-+0-9.eE]+|NaN)\s*$")


def parse_metrics(text: str) -> dict[str, list[float]]:
    """Prometheus text to {name: [value per label set]} (one label set per rank) for sglang: gauges and counters."""
    values: dict[str, list[float]] = {}
    for line in text.splitlines():
        match = _METRIC.match(line.strip())
        if match and match.group(3) != "NaN":
            values.setdefault(match.group(1), []).append(float(match.group(3)))
    return values
