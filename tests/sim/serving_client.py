"""A plain asyncio client for the serving tests: steady-state throughput of C concurrent streams.

Each of C streams asks /generate for far more tokens than the window lasts; once
every stream has its first chunk the window opens, tokens are counted from the
server's cumulative `meta_info.completion_tokens`, and after `window_s` all
streams are closed (the server aborts them). Rate = tokens in the window / its length
on `clock`: the host's clock (WorldClock.now) for a server on a simulated host, whose
time is not this machine's.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import aiohttp


async def _stream(
    session: aiohttp.ClientSession, url: str, prompt: str, state: dict, idx: int, max_new_tokens: int = 200000
) -> None:
    body = {
        "text": prompt,
        "stream": True,
        "sampling_params": {"max_new_tokens": max_new_tokens, "ignore_eos": True, "temperature": 0},
    }
    last = 0
    async with session.post(url, json=body) as resp:
        assert resp.status == 200, await resp.text()
        async for line in resp.content:
            if not line.startswith(b"data: {"):
                continue
            tokens = json.loads(line[6:])["meta_info"]["completion_tokens"]
            if idx not in state["started"]:
                state["started"].add(idx)
                if len(state["started"]) == state["c"]:
                    state["t0"] = state["clock"]()
                    state["open"].set()
            elif state["t0"] is not None and state["t1"] is None:
                state["tokens"] += tokens - last
                state["chunks"] += 1
            last = tokens


async def measure_throughput(
    base_url: str,
    concurrency: int,
    window_s: float,
    prompts: list[str],
    max_new_tokens: int = 200000,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[float, float]:
    """(tok/s on `clock`, tokens per chunk) over the steady-state window (`window_s` of this machine's time);
    `max_new_tokens` must fit the model's context."""
    state = {
        "clock": clock,
        "c": concurrency,
        "started": set(),
        "t0": None,
        "t1": None,
        "tokens": 0,
        "chunks": 0,
        "open": asyncio.Event(),
    }
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, read_bufsize=2**20) as session:
        tasks = [
            asyncio.create_task(
                _stream(session, f"{base_url}/generate", prompts[i % len(prompts)], state, i, max_new_tokens)
            )
            for i in range(concurrency)
        ]
        await asyncio.wait_for(state["open"].wait(), timeout=30)
        await asyncio.sleep(window_s)
        state["t1"] = clock()
        tokens, chunks = state["tokens"], state["chunks"]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return tokens / (state["t1"] - state["t0"]), tokens / max(chunks, 1)


async def generate(
    session: aiohttp.ClientSession, base_url: str, prompt: str, max_new_tokens: int, ignore_eos: bool = True
) -> dict:
    body = {
        "text": prompt,
        "sampling_params": {"max_new_tokens": max_new_tokens, "ignore_eos": ignore_eos, "temperature": 0},
    }
    async with session.post(f"{base_url}/generate", json=body) as resp:
        assert resp.status == 200, await resp.text()
        return await resp.json()
