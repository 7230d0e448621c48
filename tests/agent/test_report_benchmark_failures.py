"""A benchmark level the server died in: a row of the failure table (cause and remedy from the level), not a row
of the throughput table; a later valid level at that concurrency recovers it."""

from __future__ import annotations

from specops.agent.report import build_report
from specops.tools.benchmark.models import BenchmarkResult, ServerFailure

from .test_report_scenario import Transcript, level, running, server_config, sweep

FAILURE = ServerFailure(
    state="died",
    health="GET /health_generate: ConnectionRefusedError",
    cause="crash",
    cause_words="NCCL watchdog timeout (a collective hung and the watchdog killed the server)",
    log_lines=["[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE) ran for 600043 ms"],
    log_path="/root/.specops/logs/sglang-10.log",
)
REASON = "the server on port 30000 died during the level at C=128: NCCL watchdog timeout (a collective hung and the watchdog killed the server)"
REMEDY = (
    "Relaunch the server with fewer running requests: max_running_requests (--max-running-requests) below 128, e.g. 64"
)


def _crashed_sweep() -> BenchmarkResult:
    result = sweep([683.9, 900.0], levels=[32, 128])
    died = result.levels[1].model_copy(
        update={
            "valid": False,
            "invalid_reason": REASON,
            "remedy": REMEDY,
            "server_failure": FAILURE,
            "requests_completed": 0,
            "requests_failed": 384,
            "total_output_tokens": 0,
        }
    )
    return result.model_copy(update={"levels": [result.levels[0], died], "levels_not_run": [256]})


def _run(recover: bool):
    t = Transcript()
    t.start("benchmark tp8")
    config = server_config("tp8")
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 10))
    t.tool("benchmark", {"port": 30000, "levels": [32, 128, 256]}, _crashed_sweep())
    if recover:
        capped = config.model_copy(update={"max_running_requests": 64})
        t.tool("launch_server", {"config": capped.model_dump(mode="json")}, running(capped, 11))
        fixed = sweep([1100.0], levels=[128])
        t.tool("benchmark", {"port": 30000, "levels": [128]}, fixed.model_copy(update={"levels": [level(128, 1100.0)]}))
    return build_report(t.events, None, status="completed")


def test_a_level_the_server_died_in_is_in_the_failure_table_with_its_cause_and_remedy():
    report = _run(recover=False)
    (failure,) = report.failures
    assert failure.tool == "benchmark" and failure.kind == "server_died" and failure.cause == "crash"
    assert "NCCL watchdog timeout" in failure.what and "C=128" in failure.what
    assert failure.remedy == REMEDY and failure.status == "unresolved"
    # Its figures measured the crash: no throughput row for it, and a note says why.
    assert [(r.config, r.concurrency) for r in report.benchmarks] == [("tp8", 32)]
    assert any("C=128 is not valid" in note and "left out of the table" in note for note in report.notes)


def test_a_later_valid_level_at_that_concurrency_recovers_it():
    report = _run(recover=True)
    (failure,) = report.failures
    assert failure.status == "recovered" and "benchmark valid at C=128" in failure.recovered_by
    assert failure.next_action.startswith("launch_server(")
