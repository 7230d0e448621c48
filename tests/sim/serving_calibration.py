"""Shared parts of the calibration tests: one server per configuration, measured windows."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from specops.sim.profiles import load_profile
from specops.sim.world.clock import WorldClock
from specops.sim.world.ports import resolve_port

from .serving_client import measure_throughput
from .serving_world import build_world, launch_args, start_server, stop_server, wait_ready

# Modelled rate x TIME_SCALE stays well under the ~25k chunks/s this machine streams
# (benchmarks/serving_simulator_ceiling.py), and each level still takes under a second.
TIME_SCALE = 10.0
PROFILE = load_profile("seed-ct200")
MATH = [
    "Janet has 16 eggs and eats 3. How many eggs are left? Solve step by step.",
    "Compute the sum of 123 + 456 and find the remainder when divided by 7.",
]
CODE = [
    "Write a python function def is_prime(n) that returns True for prime integers.",
    "Implement a JavaScript function to reverse a string and return it.",
]
CHAT = [
    "Tell me about the history of the city of Kyoto and its temples.",
    "What should I pack for a week of hiking in the mountains in autumn?",
]

AR_FLAGS = {
    "tp8_no_graphs": ["--disable-cuda-graph"],
    "tp8_tuned": [],
    "pp8": ["--tp", "1", "--pp-size", "8"],
    "ep8": ["--ep", "8"],
    "ep4": ["--ep", "4"],
}


def window(c: int, tok_s: float) -> float:
    """~100 decode steps (a step is C / T(C) modelled seconds), at least 0.5 s: the window's
    edges cut a step, so fewer steps would cost more than a percent of accuracy."""
    return max(0.4, 100 * c / tok_s / TIME_SCALE)


def serve(tmp_path: Path, flags: list[str], dflash: bool = False):
    layout = build_world(tmp_path / "host", time_scale=TIME_SCALE, load_seconds=4)
    log = tmp_path / "server.log"
    proc = start_server(layout, launch_args(layout, *flags, "--incremental-streaming-output", dflash=dflash), log)
    wait_ready(proc, log)
    return proc, f"http://127.0.0.1:{resolve_port(layout, 30000)}", WorldClock(layout.sim_dir).now


def check_autoregressive_calibration(tmp_path: Path, name: str) -> None:
    config = PROFILE.serving.config(name)
    proc, url, host_clock = serve(tmp_path, AR_FLAGS[name])
    try:
        for c, expected in config.throughput.known_points():
            modelled, _ = asyncio.run(measure_throughput(url, c, window(c, expected), CHAT, clock=host_clock))
            assert modelled == pytest.approx(expected, rel=0.05), f"{name} C={c}: {modelled:.1f} vs {expected}"
    finally:
        stop_server(proc)
