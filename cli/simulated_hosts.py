"""Offering the built-in simulated hosts: `sim:` specs, and the benchmark client a quick run's time scale is
measured with.

The simulator imports no tool (a quick run measures how fast this machine serves the benchmark client, but the
client is the tools'): this module, above both, hands the client in. Every entry point that opens `sim:` hosts
(the CLI, the golden recorder, the eval runner, the tests) offers them through here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from ..sim.hosting import register
from ..sim.world.calibration import Level, use_level_client
from ..tools.benchmark.models import BenchmarkArgs
from ..tools.benchmark.sweep import CLIENT_SCRIPT, client_config

CLIENT_TIMEOUT_S = 120


def benchmark_level(url: str, level: Level) -> dict[str, Any]:
    """One level of the benchmark tool's client against `url`, run on this machine as the tool runs it: raw output."""
    sizing: dict[str, Any] = (
        {"duration_s": level.duration_s, "end": level.end}
        if level.duration_s
        else {"requests_per_level": level.requests}
    )
    args = BenchmarkArgs(
        levels=[level.concurrency],
        input_len=level.input_len,
        output_len=level.output_len,
        warmup_requests=0,
        flush_cache=False,
        client="local",
        request_timeout_s=60,
        **sizing,
    )
    done = subprocess.run(
        [sys.executable, str(CLIENT_SCRIPT)],
        input=json.dumps(client_config(args, url)),
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
    )
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"the benchmark client failed in calibration: {done.stderr[-500:]}") from None
    if "fatal" in out or not out.get("levels"):
        raise RuntimeError(f"the benchmark client failed in calibration: {out.get('fatal')}")
    measured: dict[str, Any] = out["levels"][0]
    return measured


def offer_simulated_hosts() -> None:
    """Make `sim:` hosts open and provision, with quick runs calibrated against the benchmark client (idempotent)."""
    use_level_client(benchmark_level)
    register()
