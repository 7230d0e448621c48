"""Serving faults: a crash while loading, CUDA graphs failing with the drafter, a crash under load."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from specops.sim.faults import CrashUnderLoad, CudaGraphDrafter, ServerCrashAtStart
from specops.sim.world.ports import resolve_port

from .serving_world import build_world, launch_args, run_launch, start_server, stop_server, wait_ready

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


def test_crash_at_start_happens_the_given_number_of_times(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "w", faults=[ServerCrashAtStart(after_fraction=0.5, times=1)])
    first = run_launch(layout, launch_args(layout, "--ep", "4", "--port", "30000"))
    assert first.returncode != 0
    assert "Traceback" in first.stderr + first.stdout
    assert "fired up" not in first.stdout + first.stderr
    # The fault was for one launch: the next one comes up.
    log = tmp_path / "second.log"
    proc = start_server(layout, launch_args(layout, "--ep", "4", "--port", "30000"), log)
    try:
        wait_ready(proc, log)
    finally:
        stop_server(proc)


def test_cuda_graph_crash_with_the_drafter_and_the_way_out(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "w", faults=[CudaGraphDrafter(mode="crash")])
    with_graphs = run_launch(layout, launch_args(layout, "--ep", "4", "--port", "30000", dflash=True))
    output = with_graphs.stdout + with_graphs.stderr
    assert with_graphs.returncode != 0
    assert "Capture cuda graph failed" in output
    # Autoregressive launches are not affected, and DFlash without CUDA graphs comes up.
    log = tmp_path / "no-graphs.log"
    proc = start_server(
        layout, launch_args(layout, "--ep", "4", "--port", "30000", "--disable-cuda-graph", dflash=True), log
    )
    try:
        wait_ready(proc, log)
    finally:
        stop_server(proc)


async def _generate(base: str, prompt: str, tokens: int) -> dict:
    async with aiohttp.ClientSession() as session:
        body = {"text": prompt, "sampling_params": {"max_new_tokens": tokens, "temperature": 0, "ignore_eos": True}}
        async with session.post(f"{base}/generate", json=body) as resp:
            assert resp.status == 200, await resp.text()
            return (await resp.json())["meta_info"]


def test_cuda_graph_collapse_serves_with_acceptance_one(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "w", faults=[CudaGraphDrafter(mode="collapse")])
    log = tmp_path / "collapse.log"
    proc = start_server(layout, launch_args(layout, "--ep", "4", "--port", "30000", dflash=True), log)
    try:
        wait_ready(proc, log)
        base = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
        meta = asyncio.run(_generate(base, "Solve 12 * 7 + 3 step by step.", 64))
        assert meta["completion_tokens"] == 64
        # Every verify step gains its bonus token alone; the prefill gave the first (as SGLang's does): 64 / 63.
        assert meta["spec_verify_ct"] == 63 and meta["spec_accept_length"] == pytest.approx(64 / 63)
    finally:
        stop_server(proc)


def test_crash_under_load_kills_the_server_with_a_watchdog_timeout(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "w", faults=[CrashUnderLoad(at_running=4)])
    log = tmp_path / "load.log"
    proc = start_server(
        layout, launch_args(layout, "--ep", "4", "--port", "30000", "--watchdog-timeout", "30", dflash=True), log
    )
    try:
        wait_ready(proc, log)
        base = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
        # One request at a time is fine ...
        assert asyncio.run(_generate(base, "Hello there", 16))["completion_tokens"] == 16

        async def four_at_once() -> list:
            return await asyncio.gather(
                *(_generate(base, f"Write a poem {i}", 4000) for i in range(4)), return_exceptions=True
            )

        # ... four at once hang the batch until the watchdog kills the process.
        results = asyncio.run(four_at_once())
        assert all(isinstance(r, Exception) for r in results)
        assert proc.wait(timeout=30) != 0
        text = log.read_text()
        assert "Watchdog caught collective operation timeout" in text
        assert not list(layout.gpu_dir.glob("*.json")), "a dead server holds no GPU memory"
    finally:
        stop_server(proc)
