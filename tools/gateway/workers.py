"""The router's list of workers (GET /workers): which of ours it has registered, and which are healthy.

sglang-router 0.3.2 answers `{"workers": [{"url", "model_id", "is_healthy", "worker_type", "metadata", ...}],
"total", "stats"}`; a worker appears only once its registration (a health check first) succeeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import httpx

from ..hosts import Host, HostError, PortNotListening
from ..sglang.server_http import get_json
from .models import GatewayWorker, GatewayWorkerState

if TYPE_CHECKING:
    from ..sglang.handle import RunningServer


def worker_for(host: Host, server: RunningServer) -> GatewayWorker:
    """A server this run launched on `host`, as a gateway on the same host reaches it: the host's own loopback
    port for it (a simulated host maps its virtual port), and the GPUs its configuration holds."""
    return GatewayWorker(url=f"http://127.0.0.1:{host.port_on_host(server.port)}", gpus=server.config.gpus)


def normal_url(url: str) -> str:
    return url.rstrip("/")


def listed_workers(body: Any, wanted: Sequence[GatewayWorker]) -> list[GatewayWorkerState]:
    """Our workers as the router's /workers body lists them (those it does not list are left out)."""
    gpus = {normal_url(w.url): w.gpus for w in wanted}
    rows = body.get("workers") if isinstance(body, dict) else None
    states = []
    for row in rows if isinstance(rows, list) else []:
        url = normal_url(str(row.get("url", ""))) if isinstance(row, dict) else ""
        if url in gpus:
            model = row.get("model_id")
            states.append(
                GatewayWorkerState(
                    url=url,
                    healthy=row.get("is_healthy") is True,
                    model=model if isinstance(model, str) else None,
                    gpus=gpus[url],
                )
            )
    return states


def read_workers(host: Host, port: int, wanted: Sequence[GatewayWorker]) -> list[GatewayWorkerState] | None:
    """Our workers as the router on `port` lists them now; None while it does not answer."""
    try:
        return listed_workers(get_json(host, port, "/workers"), wanted)
    except (PortNotListening, HostError, httpx.HTTPError, ValueError):
        return None


def all_healthy(states: Sequence[GatewayWorkerState] | None, wanted: Sequence[GatewayWorker]) -> bool:
    if states is None:
        return False
    healthy = {s.url for s in states if s.healthy}
    return all(normal_url(w.url) in healthy for w in wanted)
