"""A server that dies under a benchmark level (sim fault crash_under_load: an NCCL watchdog timeout) on sim:seed-ct200.

The level is reported invalid with the cause read from the server's log (found
through its launch record under ~/.specops/sglang), a remedy that names
--max-running-requests, no figures from the broken requests, and the levels
after it not run. Following the remedy (fewer running requests) makes the same
level valid.
"""

from __future__ import annotations

import pytest

from specops.sim.faults import CrashUnderLoad
from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.context import ToolContext
from specops.tools.sglang.handle import write_record

from .test_benchmark_sim import PROFILE, launch
from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(180), pytest.mark.serial, pytest.mark.slow]
TIME_SCALE = 50.0
FAST_LOAD = PROFILE.model_copy(
    update={
        "serving": PROFILE.serving.model_copy(
            update={"target": PROFILE.serving.target.model_copy(update={"load_seconds": 2 * TIME_SCALE})}
        )
    }
)
AT_RUNNING = 6  # the server hangs (then the watchdog kills it) once this many requests run at once
ARGS = {"input_len": 64, "output_len": 64, "rounds": 1}


@pytest.fixture(scope="module")
def sim_world():
    faults = [CrashUnderLoad(at_running=AT_RUNNING, speculative_only=False)]
    with start_world(FAST_LOAD, faults=faults, time_scale=TIME_SCALE) as world:
        yield world


def test_a_level_the_server_died_in_is_invalid_with_the_cause_from_its_log_and_a_remedy(sim_world):
    with reach(sim_world, "sim") as host:
        ctx = ToolContext.for_host(host)
        home = str(sim_world.layout.home)
        server = launch(host, home, "logs/sglang-crash.log", "--watchdog-timeout", "30")
        write_record(ctx, server)  # as launch_server does: how the benchmark finds the server's log
        try:
            result = run_benchmark(ctx, BenchmarkArgs(levels=[2, 8, 16], **ARGS))
        finally:
            host.stop(server)
        ok, died = result.levels
        assert ok.valid and ok.requests_completed == 2 and ok.server_failure is None and ok.invalid_reason is None
        assert not died.valid and died.concurrency == 8
        failure = died.server_failure
        assert failure is not None and failure.state == "died" and failure.cause == "crash"
        assert "NCCL watchdog timeout" in failure.cause_words and "NCCL watchdog timeout" in died.invalid_reason
        assert any("Watchdog caught collective operation timeout" in line for line in failure.log_lines)
        assert failure.log_path.endswith("logs/sglang-crash.log")
        assert "--max-running-requests" in died.remedy and "below 8" in died.remedy
        # No figures from broken requests: a stream the server broke off is failed, its tokens and latencies not counted.
        assert died.requests_completed == 0 and died.requests_failed >= AT_RUNNING
        assert died.total_output_tokens == 0 and died.tpot.samples == 0 and died.e2e.samples == 0
        assert result.levels_not_run == [16] and result.best_at_concurrency == 2
        assert any(w.startswith("levels [16] were not run") for w in result.warnings)
        assert any(
            w.startswith("C=8: NOT VALID") and "Remedy:" in w and "--max-running-requests" in w for w in result.warnings
        )

        # The remedy: fewer running requests than the level that crashed it. The same level now queues and is valid.
        fixed = launch(host, home, "logs/sglang-capped.log", "--max-running-requests", "4")
        write_record(ctx, fixed)
        try:
            again = run_benchmark(ctx, BenchmarkArgs(levels=[8], **ARGS))
        finally:
            host.stop(fixed)
    level = again.levels[0]
    assert level.valid and level.requests_completed == 8 and level.requests_failed == 0 and again.levels_not_run == []
    assert any("at most 4 requests at once" in w and "compare levels up to 4" in w for w in again.warnings)


def test_without_a_launch_record_the_cause_is_unknown_and_the_remedy_says_where_to_look(sim_world):
    with reach(sim_world, "sim") as host:
        ctx = ToolContext.for_host(host)
        server = launch(
            host, str(sim_world.layout.home), "logs/sglang-by-hand.log", "--watchdog-timeout", "30", port=30001
        )
        try:
            result = run_benchmark(ctx, BenchmarkArgs(port=30001, levels=[8, 16], **ARGS))
        finally:
            host.stop(server)
    (died,) = result.levels
    assert not died.valid and died.server_failure.state == "died" and died.server_failure.cause is None
    assert "no launch record" in died.server_failure.cause_words
    assert "read the server's log" in died.remedy and "--max-running-requests" in died.remedy
    assert result.levels_not_run == [16]
