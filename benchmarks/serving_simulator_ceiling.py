"""How many streamed tokens/s and chunks/s the serving simulator emits on this machine.

Launches the simulator as a real `launch_server` process on a throwaway sim host
with a time scale so high that the model asks for more than any machine gives,
and reads C concurrent /generate streams from this (separate) process for a few
seconds. The chunk rate is the ceiling: past it the engine keeps the token rate
by putting more tokens in each chunk, so tests must keep modelled rate x
time_scale under the chunk ceiling when they need one token per chunk.

    .venv/bin/python benchmarks/serving_simulator_ceiling.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specops.sim.world.ports import resolve_port  # noqa: E402
from tests.sim.serving_client import measure_throughput  # noqa: E402
from tests.sim.serving_world import build_world, launch_args, start_server, stop_server, wait_ready  # noqa: E402

SECONDS = 4.0


def run(concurrency: int, time_scale: float, dflash: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        layout = build_world(Path(tmp) / "host", time_scale=time_scale, load_seconds=time_scale * 0.5)
        log = Path(tmp) / "server.log"
        flags = [
            "--ep",
            "4",
            "--incremental-streaming-output",
            "--max-running-requests",
            "512",
            "--decode-log-interval",
            "100000",
        ]
        proc = start_server(layout, launch_args(layout, *flags, dflash=dflash), log)
        try:
            wait_ready(proc, log, timeout=30)
            url = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
            tok_s, per_chunk = asyncio.run(
                measure_throughput(url, concurrency, SECONDS, ["Tell me a story about the sea."])
            )
            return tok_s, tok_s / per_chunk
        finally:
            stop_server(proc)


def main() -> None:
    print(f"serving simulator ceiling, client in a separate process, {SECONDS:.0f} s per row")
    print(f"{'mode':<14}{'C':>5}{'time_scale':>12}{'asked tok/s':>13}{'tok/s':>10}{'chunks/s':>10}{'tok/chunk':>10}")
    rows = [(1, 2000.0, False), (64, 200.0, False), (256, 100.0, False), (64, 200.0, True)]
    for c, scale, dflash in rows:
        asked = {1: 69.0, 64: 974.8, 256: 1530.5}[c] * scale if not dflash else 1010.0 * scale
        tok_s, chunks_s = run(c, scale, dflash)
        mode = "dflash_ep4" if dflash else "ep4"
        print(f"{mode:<14}{c:>5}{scale:>12.0f}{asked:>13.0f}{tok_s:>10.0f}{chunks_s:>10.0f}{tok_s / chunks_s:>10.2f}")


if __name__ == "__main__":
    main()
