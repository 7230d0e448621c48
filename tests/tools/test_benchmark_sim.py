"""The benchmark tool against the serving simulator on sim:seed-ct200: numbers within 3% of the profile's truth.

Truth: the profile's throughput curve for the configuration the simulator
chooses (specops.sim.serving.performance); the client on a sim host reads the
modelled host's clock (the host's python gives it, sim/host/host_time.py), so
its figures are the modelled host's and the tool converts nothing. At time
scale 3 the simulator streams under ~4.5k chunks/s (its ceiling here is ~25k),
leaving the two cores room for the client too, and throughput is read over the
steady window (the ramp at a level's start, ~1 request per 2 ms, is left out).
"""

from __future__ import annotations

import pytest

from specops.sim.profiles import load_profile
from specops.sim.serving.performance import Launch, build_performance_model
from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.benchmark.sweep import client_config, run_client, server_url
from specops.tools.context import ToolContext

from .worlds import reach, start_world, wait_until_ready

pytestmark = [pytest.mark.timeout(120), pytest.mark.serial, pytest.mark.slow]

TIME_SCALE = 3.0
OUTPUT = 256
PROFILE = load_profile("seed-ct200")
# The seed host's profile with a 2 s (modelled 20 s) load, so a test launch is ready at once.
FAST_LOAD = PROFILE.model_copy(
    update={
        "serving": PROFILE.serving.model_copy(
            update={"target": PROFILE.serving.target.model_copy(update={"load_seconds": 2 * TIME_SCALE})}
        )
    }
)


def launch(host, home: str, log: str, *extra: str, port: int = 30000):
    """The simulated SGLang (TP8, EP4) started by hand on `port`, waited for until its log says it is ready."""
    server = host.start_detached(
        [
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            f"{home}/models/Kimi-K2.6",
            "--tp",
            "8",
            "--ep",
            "4",
            "--port",
            str(port),
            *extra,
        ],
        log_path=log,
    )
    return wait_until_ready(host, server, log)


@pytest.fixture(scope="module")
def sim_world():
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world:
        yield world


def test_throughput_at_every_level_is_within_3_percent_of_the_profile(sim_world):
    truth = build_performance_model(PROFILE.serving, Launch(tp=8, ep=4), 1)
    assert truth.choice.parallel.name == "ep4"
    with reach(sim_world, "sim") as host:
        server = launch(host, str(sim_world.layout.home), "logs/sglang-ep4.log", "--max-running-requests", "256")
        try:
            result = run_benchmark(
                ToolContext.for_host(host),
                BenchmarkArgs(levels=[1, 16, 32, 64, 128], input_len=128, output_len=OUTPUT, rounds=1),
            )
        finally:
            host.stop(server)
    assert result.api == "sglang" and result.server_version == PROFILE.software.sglang and result.client == "host"
    for level in result.levels:
        expected = truth.step_time.throughput(level.concurrency)
        measured = level.output_tok_s  # the host's seconds, as the client on it measured them
        assert measured == pytest.approx(expected, rel=0.03), f"C={level.concurrency}: {measured:.1f} vs {expected:.1f}"
        assert level.requests_completed == level.concurrency and level.requests_failed == 0
        assert level.total_output_tokens == OUTPUT * level.concurrency  # the server's counts, ignore_eos
        assert level.total_input_tokens == 128 * level.concurrency  # random ids: exact input lengths
        assert level.achieved_concurrency == pytest.approx(level.concurrency, rel=0.05)
        assert level.cache_flushed is True and level.accept_length is None and level.accept_length_lifetime is None
        # Autoregressive: a step is C / T(C) modelled seconds, and TPOT is that step.
        assert level.tpot.p50_ms / 1e3 == pytest.approx(level.concurrency / expected, rel=0.05)
    assert result.best_at_concurrency == 128
    assert "faster than the host it models" not in result.method
    assert "its times in the host's seconds" in result.method


def test_a_timed_level_ends_with_its_steady_window(sim_world):
    """The default end: once the first answer finishes past the duration, the rest are cut there, at once.

    That answer is where the level's concurrency stops being held, so the steady window the figure is read
    over has closed: the figure stays within 3% of the truth, without waiting for the slowest answers.
    Answers end on their own (no ignore_eos; the simulator's EOS is seeded by the prompt), so they finish at
    different steps whatever this machine's load: with ignore_eos a level's requests all arrive at one moment of
    the host's clock and finish at one step, and nothing is left to cut.
    """
    truth = build_performance_model(PROFILE.serving, Launch(tp=8, ep=4), 1)
    args = BenchmarkArgs(
        levels=[32, 64], input_len=128, output_len=256, ignore_eos=False, duration_s=1.0, warmup_requests=0
    )
    assert args.end == "window"
    with reach(sim_world, "sim") as host:
        server = launch(host, str(sim_world.layout.home), "logs/sglang-ep4-timed.log", "--max-running-requests", "256")
        try:
            ctx = ToolContext.for_host(host)
            with server_url(host, args.port, args.client) as url:
                raw = run_client(ctx, args, client_config(args, url))
            result = run_benchmark(ctx, args)
        finally:
            host.stop(server)
    for level in raw["levels"]:
        requests = level["requests"]
        cut = [r for r in requests if r["cut"]]
        last_start = max(r["start_s"] for r in requests)
        # No request starts after the duration, so the first to finish after the last start is the first past it.
        window_end = min(r["end_s"] for r in requests if not r["cut"] and r["end_s"] > last_start)
        assert cut and all(r["error"] is None for r in requests)
        # Cut at once, not waited on: within a fifth of the window's own length (a ratio in this run, so a busy
        # machine that takes longer to close sixty streams does not fail it).
        slack = 0.2 * window_end
        assert max(r["end_s"] for r in requests) < window_end + slack
        assert all(r["end_s"] == pytest.approx(window_end, abs=slack) for r in cut)
    for level in result.levels:
        expected = truth.step_time.throughput(level.concurrency)
        assert level.output_tok_s == pytest.approx(expected, rel=0.03), (
            f"C={level.concurrency}: {level.output_tok_s:.1f} vs {expected:.1f}"
        )
        assert level.requests_cut > 0 and level.requests_failed == 0


def test_open_loop_rates_arrive_on_the_clock_and_goodput_is_judged_against_the_targets_given(sim_world):
    # Modelled requests/s: the tool turns them into the host's clock at its time scale, and back.
    args = BenchmarkArgs(
        levels=[64],
        rates=[4.0, 8.0],
        arrival="constant",
        requests_per_level=12,
        input_len=128,
        output_len=32,
        warmup_requests=0,
        tpot_target_ms=1.0,  # no answer streams a token a millisecond: none is good
    )
    with reach(sim_world, "sim") as host:
        server = launch(host, str(sim_world.layout.home), "logs/sglang-ep4-open.log", "--max-running-requests", "256")
        try:
            result = run_benchmark(ToolContext.for_host(host), args)
        finally:
            host.stop(server)
    assert [level.arrival_rate_per_s for level in result.levels] == [pytest.approx(4.0), pytest.approx(8.0)]
    for level in result.levels:
        assert level.requests_completed == 12 and level.requests_failed == 0 and level.steady_window_s is None
        # 12 arrivals a constant 1/rate apart: the last is sent 11 gaps after the first (modelled seconds).
        starts = sorted(level.requests.start_s)
        assert starts[-1] - starts[0] == pytest.approx(11 / level.arrival_rate_per_s, rel=0.05)
        assert level.good_requests == 0 and level.goodput_tok_s == 0.0
    assert result.goodput_targets.tpot_ms == 1.0 and "Open loop, constant arrivals at 4, 8 requests/s" in result.method


def test_a_standard_dataset_fetched_on_the_host_is_the_benchmarks_prompts(sim_world):
    args = BenchmarkArgs(levels=[4], prompts="mt-bench", output_len=32, requests_per_level=8, warmup_requests=0)
    with reach(sim_world, "sim") as host:
        server = launch(host, str(sim_world.layout.home), "logs/sglang-ep4-dataset.log", "--max-running-requests", "64")
        try:
            result = run_benchmark(ToolContext.for_host(host), args)
        finally:
            host.stop(server)
    [level] = result.levels
    assert level.requests_completed == 8 and level.requests_failed == 0
    assert result.prompts.startswith("HuggingFaceH4/mt_bench_prompts (MT-Bench, split train)")
    assert "raw text (no chat template)" in result.prompts and result.input_len is None
