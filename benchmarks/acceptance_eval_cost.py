"""What an acceptance eval costs: prompts needed for a +-0.1 (and +-0.05) 95% interval, per category.

The width of the request-mean interval is t * sd / sqrt(n), so the prompts needed
follow from the spread of per-request acceptance: n = (t(n-1) * sd / half)^2,
solved for the smallest n. This script measures that spread with every shipped
prompt (32 per category, thinking on) on a speculative server, and prints, per
category: the spread, the prompts needed, and what the measurement cost here.

By default it starts sim:seed-ct200 with DFlash on EP4 (time scale 20); there the
spread is the profile's modelled one (accept_spread), so the figure says what the
eval needs on a host like the seed's. Point it at any running speculative SGLang
server to measure that server instead:

    .venv/bin/python benchmarks/acceptance_eval_cost.py
    .venv/bin/python benchmarks/acceptance_eval_cost.py --host ssh://me@gpu-box --port 30000
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specops.sim.profiles import load_profile  # noqa: E402
from specops.sim.world.world import SimWorld  # noqa: E402
from specops.tools.acceptance import AcceptanceArgs, measure_acceptance  # noqa: E402
from specops.tools.acceptance_intervals import t975  # noqa: E402
from specops.tools.context import ToolContext  # noqa: E402
from specops.tools.hosts import Host, open_host  # noqa: E402
from specops.tools.sglang import LaunchArgs, ServerConfig, StopArgs, launch_server, stop_server  # noqa: E402

MAX_NEW_TOKENS = 512


def prompts_needed(sd: float, half_width: float) -> int:
    """The smallest n whose 95% t-interval half-width t(n-1) * sd / sqrt(n) is within half_width."""
    n = 2
    while t975(n - 1) * sd / math.sqrt(n) > half_width:
        n += 1
    return n


def spread(low_high: tuple[float, float], n: int) -> float:
    """The per-request sd behind a reported t-interval."""
    return (low_high[1] - low_high[0]) / 2 * math.sqrt(n) / t975(n - 1)


def start_sim(stack: ExitStack, time_scale: float) -> Host:
    """sim:seed-ct200 with the drafter downloaded and DFlash on EP4 launched; closed by `stack`."""
    profile = load_profile("seed-ct200")
    fast_load = profile.model_copy(
        update={
            "serving": profile.serving.model_copy(
                update={"target": profile.serving.target.model_copy(update={"load_seconds": 2 * time_scale})}
            )
        }
    )
    world = stack.enter_context(SimWorld.start(fast_load, time_scale=time_scale))
    host = stack.enter_context(open_host(world.host_spec))
    host.run(
        ["hf", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", "--local-dir", "models/dflash"],
        timeout=300,
        cwd=str(world.layout.home),
    ).check()
    ctx = ToolContext.for_host(host)
    config = ServerConfig(
        model_path="models/Kimi-K2.6",
        tp=8,
        ep=4,
        max_running_requests=64,
        speculative_algorithm="DFLASH",
        drafter_path="models/dflash",
    )
    server = launch_server(ctx, LaunchArgs(config=config))
    stack.callback(stop_server, ctx, StopArgs(server=server))
    return host


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="a host with a running speculative server (default: start sim:seed-ct200)")
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--time-scale", type=float, default=20.0, help="for the simulated host")
    options = parser.parse_args()
    with ExitStack() as stack:
        host = stack.enter_context(open_host(options.host)) if options.host else start_sim(stack, options.time_scale)
        started = time.monotonic()
        result = measure_acceptance(
            ToolContext.for_host(host),
            AcceptanceArgs(port=options.port, max_new_tokens=MAX_NEW_TOKENS, concurrency=16, thinking="auto"),
        )
        wall = time.monotonic() - started
    scale = 1.0 if options.host else options.time_scale
    total = sum(c.prompts for c in result.categories)
    tokens = sum(c.completion_tokens for c in result.categories)
    print(
        f"acceptance eval on {result.host} port {result.port}: {total} prompts, {tokens} tokens generated, "
        f"{wall:.1f} s here" + (f" ({wall * scale:.0f} s on the modelled host)" if scale != 1.0 else "")
    )
    print(f"{'category':<22}{'n':>4}{'mean':>7}{'sd':>7}{'+-95% now':>11}{'n for +-0.1':>13}{'n for +-0.05':>14}")
    for c in [*result.categories, *(result.overall_by_thinking or [result.overall])]:
        label = f"{c.category}, thinking {c.thinking}" if c.thinking else c.category
        assert c.request_mean_ci95 is not None, f"{label}: no interval (fewer than two prompts)"
        sd = spread(c.request_mean_ci95, c.prompts)
        half = (c.request_mean_ci95[1] - c.request_mean_ci95[0]) / 2
        print(
            f"{label:<22}{c.prompts:>4}{c.request_mean:>7.2f}{sd:>7.2f}{half:>11.3f}"
            f"{prompts_needed(sd, 0.1):>13}{prompts_needed(sd, 0.05):>14}"
        )
    per_prompt = wall * scale / total
    print(
        f"cost per prompt: {tokens / total:.0f} generated tokens, {per_prompt:.2f} s at concurrency 16 "
        f"({'modelled host' if scale != 1.0 else 'this host'})"
    )


if __name__ == "__main__":
    main()
