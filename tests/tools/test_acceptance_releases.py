"""The acceptance tool against each release's /generate replies: all three key sets, replies without a verify step.

A scripted SGLang stand-in (aiohttp, on a local port, reached through LocalHost)
answers as a given release does: its meta_info names for the draft counts
(0.5.10.post1: spec_accept_token_num / spec_draft_token_num, 0.5.11:
spec_accepted_drafts / spec_proposed_drafts, 0.5.23: spec_num_correct_drafts /
spec_num_proposed_drafts), and no speculative keys at all on a request that had no
verify step (as SGLang's _calculate_spec_decoding_metrics). Such replies are counted
and reported, never fatal; NotSpeculative only for a server without a drafter.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aiohttp import web

from specops.sglang_releases import facts
from specops.tools.acceptance import (
    AcceptanceArgs,
    AcceptanceRequestsFailed,
    NotSpeculative,
    measure_acceptance,
    spec_counts,
)
from specops.tools.context import ToolContext
from specops.tools.hosts import LocalHost

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

BLOCK = 8
NAMES = {
    "0.5.10.post1": ("spec_accept_token_num", "spec_draft_token_num"),
    "0.5.11": ("spec_accepted_drafts", "spec_proposed_drafts"),
    "0.5.23": ("spec_num_correct_drafts", "spec_num_proposed_drafts"),
}


def _meta(version: str, index: int, *, speculative: bool, verify: bool) -> dict[str, Any]:
    """A finished request's meta_info as `version` writes it: 60 tokens in 20 + index % 5 verify steps."""
    tokens, steps = 60, 20 + index % 5
    meta: dict[str, Any] = {
        "id": f"{index:032x}",
        "finish_reason": {"type": "length", "length": tokens},
        "prompt_tokens": 12,
        "completion_tokens": tokens,
        "cached_tokens": 0,
        "e2e_latency": 0.5,
    }
    if not (speculative and verify):
        return meta
    accepted, proposed = tokens - steps, steps * (BLOCK - 1)
    values = {
        "spec_accept_rate": accepted / proposed,
        "spec_accept_length": tokens / steps,
        "spec_verify_ct": steps,
        NAMES[version][0]: accepted,
        NAMES[version][1]: proposed,
    }
    keys = facts.load(version).meta_info_speculative_keys
    return {**meta, **{k: values[k] for k in keys if k in values}}


@contextmanager
def scripted_server(
    version: str,
    *,
    speculative: bool = True,
    every_nth_without_verify: int = 0,
    info_paths: tuple[str, ...] = ("/server_info", "/get_server_info"),
) -> Iterator[int]:
    """A stand-in SGLang on a free local port for the duration of the block."""
    count = [0]

    async def generate(request: web.Request) -> web.Response:
        await request.json()
        count[0] += 1
        verify = not every_nth_without_verify or count[0] % every_nth_without_verify != 0
        return web.json_response(
            {"text": "x", "meta_info": _meta(version, count[0], speculative=speculative, verify=verify)}
        )

    async def info(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "version": version,
                "model_path": "/models/m",
                "speculative_num_draft_tokens": BLOCK,
                "speculative_algorithm": "DFLASH" if speculative else None,
                "internal_states": [{"avg_spec_accept_length": 2.9} if speculative else {}],
            }
        )

    async def flush(request: web.Request) -> web.Response:
        return web.Response(text="Cache flushed.")

    app = web.Application()
    app.router.add_post("/generate", generate)
    app.router.add_post("/flush_cache", flush)
    for path in info_paths:
        app.router.add_get(path, info)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


def _measure(port: int, **kwargs: Any):
    with LocalHost() as host:
        args = AcceptanceArgs(port=port, categories=["math", "chat"], prompts_per_category=10, thinking="raw", **kwargs)
        return measure_acceptance(ToolContext.for_host(host), args)


@pytest.mark.parametrize("version", sorted(NAMES))
def test_each_releases_keys_are_read(version):
    counts = spec_counts(_meta(version, 3, speculative=True, verify=True))
    assert counts is not None and (counts.completion_tokens, counts.verify_ct) == (60, 23)
    assert (counts.accepted_drafts, counts.proposed_drafts) == (60 - 23, 23 * (BLOCK - 1))
    assert spec_counts(_meta(version, 3, speculative=True, verify=False)) is None
    with scripted_server(version) as port:
        result = _measure(port)
    assert result.overall.prompts == 20 and result.no_verify_requests == 0 and result.notes == []
    steps = [20 + i % 5 for i in range(2, 22)]  # request 1 is the warm-up
    assert result.overall.token_weighted == pytest.approx(20 * 60 / sum(steps))
    assert result.overall.draft_accept_rate == pytest.approx(sum(60 - s for s in steps) / (sum(steps) * (BLOCK - 1)))
    assert result.block_size == BLOCK and result.server_version == version and result.server_avg_accept_length == 2.9
    assert "spec_accepted_drafts" in result.method and "spec_num_correct_drafts" in result.method


def test_replies_without_a_verify_step_are_counted_not_fatal():
    with scripted_server("0.5.23", every_nth_without_verify=4) as port:
        result = _measure(port)
    assert result.no_verify_requests == 5 and result.failed_requests == 0  # replies 4, 8, ..., 20 of the eval's 20
    assert result.overall.prompts == 15 and result.overall.no_verify == 5
    assert sum(c.no_verify for c in result.categories) == 5 and sum(c.prompts for c in result.categories) == 15
    assert any("no speculative fields" in note for note in result.notes)


def test_the_old_server_info_name_is_the_fallback():
    with scripted_server("0.5.10.post1", info_paths=("/get_server_info",)) as port:
        result = _measure(port)
    assert (
        result.block_size == BLOCK
        and result.speculative_algorithm == "DFLASH"
        and result.server_version == "0.5.10.post1"
    )


def test_not_speculative_only_when_the_server_runs_no_drafter():
    with (
        scripted_server("0.5.23", speculative=False) as port,
        pytest.raises(NotSpeculative, match="no speculative algorithm"),
    ):
        _measure(port)
    # A drafter that never verified a step (every reply bare) is a failed eval, not a missing drafter.
    with (
        scripted_server("0.5.23", every_nth_without_verify=1) as port,
        pytest.raises(AcceptanceRequestsFailed, match="had no verify step"),
    ):
        _measure(port)
