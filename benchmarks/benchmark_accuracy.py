"""How close the benchmark tool comes to the truth, at every calibrated level of sim:seed-ct200.

The simulator knows the truth: the profile's throughput curve for the configuration
it serves (specops.sim.serving.performance). Each configuration is launched on one
sim world at time scale 3 (the simulator stays far below its chunk ceiling and
leaves the client room on two cores) and swept by the benchmark tool, client on the
host, at C = 1, 32, 64, 128, 192, 256 with one round of 256-token answers per level.
Printed per level: truth, measured, error, the tool's own 95% interval, and
whether the level was flagged unstable or client-bound.

Random-id prompts are chat to the simulator, so a DFlash server's truth is its
curve scaled by the chat acceptance over the mean one (the curve is stated at the
mean over prompt kinds).

    .venv/bin/python benchmarks/benchmark_accuracy.py [--configs ep4,dflash_ep4] [--time-scale 3]
        [--duration S --output-len N]   # timed levels, as the agent's quick runs use (time scale 8, 0.5 s)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specops.sim.profiles import load_profile  # noqa: E402
from specops.sim.serving.performance import Launch  # noqa: E402
from specops.sim.serving.truth import modelled_tok_s  # noqa: E402
from specops.sim.world.world import SimWorld  # noqa: E402
from specops.tools.benchmark import BenchmarkArgs, LevelResult, run_benchmark  # noqa: E402
from specops.tools.context import ToolContext  # noqa: E402
from specops.tools.hosts import open_host  # noqa: E402
from specops.tools.sglang import LaunchArgs, ServerConfig, StopArgs, launch_server, stop_server  # noqa: E402

LEVELS = [1, 32, 64, 128, 192, 256]
OUTPUT = 256
# name: the server's layout (ServerConfig fields); the Launch the simulator sees follows from it.
CONFIGS: dict[str, dict[str, Any]] = {
    "ep4": {"tp": 8, "ep": 4},
    "ep8": {"tp": 8, "ep": 8},
    "tp8_tuned": {"tp": 8},
    "pp8": {"pp": 8},
    "dflash_ep4": {"tp": 8, "ep": 4, "speculative_algorithm": "DFLASH"},
}


def _launch(layout: dict[str, Any]) -> Launch:
    return Launch(
        tp=layout.get("tp", 1),
        ep=layout.get("ep", 1),
        pp=layout.get("pp", 1),
        speculative_algorithm=layout.get("speculative_algorithm"),
    )


def sweep(ctx: ToolContext, name: str, options: argparse.Namespace) -> list[LevelResult]:
    layout = CONFIGS[name]
    drafter = {"drafter_path": "models/dflash"} if layout.get("speculative_algorithm") else {}
    config = ServerConfig(model_path="models/Kimi-K2.6", max_running_requests=256, **layout, **drafter)
    server = launch_server(ctx, LaunchArgs(config=config))
    try:
        sizing = {"duration_s": options.duration, "warmup_requests": 0} if options.duration else {"rounds": 1}
        args = BenchmarkArgs(levels=LEVELS, input_len=128, output_len=options.output_len, **sizing)
        started = time.monotonic()
        levels = run_benchmark(ctx, args).levels
        print(f"{name}: sweep took {time.monotonic() - started:.1f} s")
        return levels
    finally:
        stop_server(ctx, StopArgs(server=server.id))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma separated, of: " + ", ".join(CONFIGS))
    parser.add_argument("--time-scale", type=float, default=3.0)
    parser.add_argument("--duration", type=float, help="timed levels of this many client seconds (default: one round)")
    parser.add_argument("--output-len", type=int, default=OUTPUT)
    options = parser.parse_args()
    profile = load_profile("seed-ct200")
    # Loading takes 2 s of wall time whatever the time scale, so the sweep is what is timed.
    fast_load = profile.model_copy(
        update={
            "serving": profile.serving.model_copy(
                update={"target": profile.serving.target.model_copy(update={"load_seconds": 2 * options.time_scale})}
            )
        }
    )
    sizing = f"{options.duration:g} s per level" if options.duration else "one round per level"
    print(
        f"benchmark tool vs the simulator's truth on seed-ct200, time scale {options.time_scale:g}, "
        f"{options.output_len}-token answers, {sizing}, client on the host"
    )
    print(f"{'config':<12}{'C':>5}{'truth':>9}{'measured':>10}{'error':>8}{'95% interval':>18}  flags")
    worst = 0.0
    with SimWorld.start(fast_load, time_scale=options.time_scale) as world, open_host(world.host_spec) as host:
        home = str(world.layout.home)
        host.run(
            ["hf", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", "--local-dir", f"{home}/models/dflash"], timeout=300
        ).check()
        ctx = ToolContext.for_host(host)
        for name in options.configs.split(","):
            for level in sweep(ctx, name, options):
                expected = modelled_tok_s(
                    profile.serving, _launch(CONFIGS[name]), level.concurrency, block_size=8
                )  # random ids: chat acceptance
                error = level.output_tok_s / expected - 1
                worst = max(worst, abs(error))
                ci = level.output_tok_s_ci95
                interval = f"{ci[0]:.0f}-{ci[1]:.0f}" if ci else "-"
                flags = [
                    f
                    for f, on in (("unstable", level.unstable), ("client-bound", level.client and level.client.limited))
                    if on
                ]
                print(
                    f"{name:<12}{level.concurrency:>5}{expected:>9.1f}{level.output_tok_s:>10.1f}{100 * error:>+7.1f}%"
                    f"{interval:>18}  {','.join(flags) or '-'}"
                )
    print(f"largest error: {100 * worst:.1f}%")


if __name__ == "__main__":
    main()
