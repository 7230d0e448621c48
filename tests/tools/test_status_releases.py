"""server_status against each release's routes: /server_info first, /v1/loads first, /get_load and /metrics as fallbacks.

The simulator's own HTTP app for each modelled release (tests/sim/test_serving_releases's
in-process server) runs on a local port, reached through LocalHost; a pared-down
copy with only the old names proves the fallbacks.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from aiohttp import web

from specops.sim.serving.http_api import Api, build_app
from specops.tools.context import ToolContext
from specops.tools.hosts import LocalHost
from specops.tools.sglang import server_http
from specops.tools.sglang.status import StatusArgs, server_status

from ..sim.test_serving_releases import CHAT, VERSIONS, _state

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


@contextmanager
def serving(version: str, *, only: tuple[str, ...] | None = None) -> Iterator[int]:
    """The simulator's app for `version` on a free port; `only`: keep just these paths."""
    state = _state(version, decode_log_interval=1)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    loop = asyncio.new_event_loop()

    async def start() -> web.AppRunner:
        state.engine.start()
        app = build_app(state)
        if only is not None:
            kept = web.Application()
            for route in app.router.routes():
                if route.resource is not None and route.resource.canonical in only:
                    kept.router.add_route(route.method, route.resource.canonical, route.handler)
            app = kept
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        # One finished request, so a decode interval is logged and the server has an average to report.
        api = Api(state)
        await api.run_internal(CHAT, 12, {"max_new_tokens": 48, "ignore_eos": True, "temperature": 0})
        return runner

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=20)
    try:
        yield port
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        asyncio.run_coroutine_threadsafe(state.engine.stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@pytest.mark.parametrize("version", VERSIONS)
def test_status_reads_server_info_and_v1_loads(version):
    with serving(version) as port, LocalHost() as host:
        status = server_status(ToolContext.for_host(host), StatusArgs(port=port))
        model = server_http.model_info(host, port)
    assert status.up and status.source == "v1/loads" and status.running_requests == 0 and status.queued_requests == 0
    assert status.info is not None and status.info.speculative_algorithm == "DFLASH" and status.info.block_size == 8
    assert status.accept_length is not None and status.accept_length > 1.0
    assert model["model_path"] == "/models/Kimi-K2.6"


def test_the_old_names_are_the_fallbacks():
    old = ("/health", "/get_server_info", "/get_model_info", "/get_load", "/metrics")
    with serving("0.5.11", only=old) as port, LocalHost() as host:
        status = server_status(ToolContext.for_host(host), StatusArgs(port=port))
        model = server_http.model_info(host, port)
    assert status.source == "get_load" and status.running_requests == 0 and status.queued_requests == 0
    assert status.info is not None and status.info.version == "0.5.11" and model["model_path"] == "/models/Kimi-K2.6"
    with serving("0.5.23", only=("/health", "/server_info", "/metrics")) as port, LocalHost() as host:
        status = server_status(ToolContext.for_host(host), StatusArgs(port=port))
    assert status.source == "metrics" and status.running_requests == 0
