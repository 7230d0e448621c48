"""Per-level acceptance of the benchmark on sim:seed-ct200's DFlash server: within 0.05 of the simulator's truth.

The server first answers an acceptance eval (math and code prompts: higher
acceptance than the sweep's random ids, which the simulator serves as chat) and
each level a warm-up; the level's accept length must still be its own: counted
from that level's requests (meta_info on the native API, the Prometheus counter
differences on the OpenAI API and around SGLang's own bench_serving, where the
release exports sglang:spec_verify_calls_total), never the server's running
average, which stays apart as accept_length_lifetime.

Truth: sim.serving.truth.level_accept_length, the expected sum(tokens) / sum(verify
steps) of requests of the level's length drawn as the simulator draws them.
A request's own tau scatters by ~0.4 (the profile's spread 0.35 and its binomial
steps), so a level of 384 requests still misses its truth by 0.025 (one sd); at
1536 requests the sd is ~0.01 and 0.05 holds with room. Acceptance does not
depend on timing, so the world runs at time scale 200.
"""

from __future__ import annotations

import pytest

from specops.sglang_releases import facts
from specops.sim.serving.performance import Launch
from specops.sim.serving.truth import level_accept_length
from specops.tools.acceptance import AcceptanceArgs, measure_acceptance
from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.context import ToolContext

from .test_acceptance_sim import DFLASH, PROFILE, _launch
from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(300), pytest.mark.serial, pytest.mark.slow]

TIME_SCALE = 200.0
FAST_LOAD = PROFILE.model_copy(
    update={
        "serving": PROFILE.serving.model_copy(
            update={"target": PROFILE.serving.target.model_copy(update={"load_seconds": 2 * TIME_SCALE})}
        )
    }
)
OUTPUT = 64
REQUESTS = 1536
LEVELS = [8, 32]
RELEASE = facts.for_version(FAST_LOAD.software.sglang or facts.LATEST)
COUNTERS = "sglang:spec_verify_calls_total" in RELEASE.metrics
TRUTH = level_accept_length(
    FAST_LOAD.serving,
    Launch(tp=8, ep=4, speculative_algorithm="DFLASH"),
    block_size=8,
    output_tokens=OUTPUT,
    prompt_kind="chat",
)
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def dflash():
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world, reach(world, "sim") as host:
        home = str(world.layout.home)
        host.run(
            ["hf", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", "--local-dir", f"{home}/models/dflash"], timeout=120
        ).check()
        server = _launch(
            host,
            home,
            "--speculative-algorithm",
            "DFLASH",
            "--speculative-draft-model-path",
            f"{home}/models/dflash",
            "--max-running-requests",
            "256",
            "--enable-metrics",
        )
        try:
            ctx = ToolContext.for_host(host)
            # Before any sweep: an acceptance eval on prompts the drafter predicts better than the sweep's.
            eval_result = measure_acceptance(
                ctx,
                AcceptanceArgs(
                    categories=["math", "code"], prompts_per_category=12, max_new_tokens=256, thinking="raw"
                ),
            )
            yield ctx, eval_result
        finally:
            host.stop(server)


def test_the_truth_is_below_the_profiles_mean_by_the_spread_and_the_cut_last_step():
    assert DFLASH.name == "dflash_ep4" and TRUTH is not None
    assert 3.3 < TRUTH < DFLASH.accept_length["chat"]
    longer = level_accept_length(
        FAST_LOAD.serving,
        Launch(tp=8, ep=4, speculative_algorithm="DFLASH"),
        block_size=8,
        output_tokens=4 * OUTPUT,
        prompt_kind="chat",
    )
    assert TRUTH < longer < DFLASH.accept_length["chat"]  # a longer answer wastes less of its last step


def test_native_levels_report_their_own_acceptance_from_meta_info(dflash):
    ctx, eval_result = dflash
    assert eval_result.overall.token_weighted > TRUTH + 0.15  # math and code: well above the sweep's chat
    result = run_benchmark(
        ctx,
        BenchmarkArgs(
            levels=LEVELS,
            prompts="random",
            input_len=64,
            output_len=OUTPUT,
            requests_per_level=REQUESTS,
            warmup_requests=4,
            api="sglang",
        ),
    )
    assert result.speculative_algorithm == "DFLASH" and "never the server's lifetime average" in result.method
    for level in result.levels:
        assert level.requests_completed == REQUESTS and level.total_output_tokens == REQUESTS * OUTPUT
        assert level.accept_length_source == "meta_info" and level.accept_verify_steps
        assert level.accept_length == pytest.approx(TRUTH, abs=TOLERANCE), f"C={level.concurrency}"
        assert level.accept_length == pytest.approx(level.total_output_tokens / level.accept_verify_steps)
        assert level.accept_length_lifetime is not None  # the server's own figure, kept apart


def test_openai_levels_use_the_counter_differences_where_the_release_has_them(dflash):
    ctx, _ = dflash
    result = run_benchmark(
        ctx,
        BenchmarkArgs(
            levels=[16],
            prompts="random",
            input_len=64,
            output_len=OUTPUT,
            requests_per_level=REQUESTS,
            warmup_requests=2,
            api="openai",
        ),
    )
    level = result.levels[0]
    if not COUNTERS:
        assert level.accept_length is None and any("no accept length of their own" in w for w in result.warnings)
        return
    assert level.accept_length_source == "metrics_counters"
    assert level.accept_length == pytest.approx(TRUTH, abs=TOLERANCE)


def test_bench_serving_levels_use_the_counter_differences_too(dflash):
    ctx, _ = dflash
    result = run_benchmark(
        ctx,
        BenchmarkArgs(
            levels=[16],
            prompts="random",
            input_len=64,
            output_len=OUTPUT,
            requests_per_level=REQUESTS,
            warmup_requests=1,
            client="bench_serving",
        ),
    )
    level = result.levels[0]
    assert level.requests_completed == REQUESTS and level.requests_failed == 0
    assert level.accept_length_lifetime is not None  # bench_serving's own accept_length: the server's running average
    if not COUNTERS:
        assert level.accept_length is None
        return
    assert level.accept_length_source == "metrics_counters"
    # The run's one warm-up request (32 tokens) is in the difference too: a small pull down, inside the tolerance.
    assert level.accept_length == pytest.approx(TRUTH, abs=TOLERANCE)
