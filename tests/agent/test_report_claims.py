"""The policy's final answer contributes words only: its figures never enter the tables, and false claims are flagged."""

from __future__ import annotations

import pytest

from specops.agent.final import FinalAnswer
from specops.agent.report import build_report

from .test_report_scenario import HONEST_ANSWER, seed_run


@pytest.fixture(scope="module")
def events():
    return seed_run().events


def _flags(events, answer: FinalAnswer, status: str = "completed"):
    return build_report(events, answer, status=status).flags


def test_figures_that_contradict_the_measurements_are_flagged(events):
    answer = FinalAnswer(
        status="completed",
        summary="DFlash reaches 200 tok/s at C=1, a 2.5x speedup at C=1. Mean acceptance length 6.3. "
        "DFlash wins at C=256. The crossover is at C=128.",
        left_running=["tp8+dflash on port 30000"],
    )
    report = build_report(events, answer, status="completed")
    claims = {(f.kind, f.evidence.split(":")[0]) for f in report.flags}
    assert ("contradicted", "200 tok/s at C=1") in claims
    assert any(f.evidence.startswith("2.5x") and f.kind == "contradicted" for f in report.flags)
    assert any(f.evidence.startswith("acceptance 6.3") for f in report.flags)
    assert any("at C=256 the autoregressive side won" in f.evidence for f in report.flags)
    assert any(f.claim == "The crossover is at C=128." and f.kind == "contradicted" for f in report.flags)
    assert len(report.flags) == 5
    # The tables still hold what was measured, not what the policy typed.
    at_1 = next(c for c in report.comparison if c.concurrency == 1)
    assert at_1.speculative_tok_s == 124.0 and at_1.speedup == pytest.approx(124.0 / 97.9)
    assert report.run.summary_text == answer.summary


def test_a_figure_without_a_concurrency_that_no_level_supports_is_unsupported(events):
    answer = FinalAnswer(
        status="completed",
        summary="Peak throughput was 2000 tok/s; EP4 peaks at 1530 tok/s.",
        left_running=["tp8+dflash"],
    )
    flags = _flags(events, answer)
    assert [(f.kind, f.evidence) for f in flags] == [("unsupported", "no benchmark row within 10% of 2000 tok/s")]


def test_the_honest_answer_passes_and_rounded_figures_are_accepted(events):
    assert _flags(events, HONEST_ANSWER) == []
    rounded = HONEST_ANSWER.model_copy(
        update={
            "summary": "At C=64 tp8-ep4 gives ~975 tok/s; DFlash loses at C=64 and wins at C=1 (1.3x). Acceptance 3.9."
        }
    )
    assert _flags(events, rounded) == []


def test_names_gpu_counts_and_ranges_are_not_read_as_figures(events):
    answer = HONEST_ANSWER.model_copy(
        update={"summary": "On 8x RTX PRO 6000 the Kimi-K2.6 drafter's acceptance length was 3.5-4.1 per category."}
    )
    assert _flags(events, answer) == []
    wrong = answer.model_copy(update={"summary": "On 8x RTX PRO 6000 the acceptance length was 3.5-7.2."})
    assert [f.evidence.split(":")[0] for f in _flags(events, wrong)] == ["acceptance 7.2"]


def test_negated_claims_are_left_alone(events):
    answer = HONEST_ANSWER.model_copy(update={"summary": "DFlash does not win at C=256."})
    assert _flags(events, answer) == []


def test_saying_nothing_was_left_running_while_a_server_runs_is_flagged(events):
    answer = HONEST_ANSWER.model_copy(update={"left_running": []})
    flags = _flags(events, answer)
    assert [(f.source, f.kind) for f in flags] == [("left_running", "contradicted")]
    assert "tp8+dflash on port 30000 (pid 1004)" in flags[0].evidence


def test_claiming_something_left_running_when_everything_was_stopped_is_unsupported():
    flags = _flags(seed_run(leave_running=False).events, HONEST_ANSWER)
    assert [(f.source, f.kind) for f in flags] == [("left_running", "unsupported")]


def test_completed_while_the_run_failed_is_flagged(events):
    flags = _flags(events, HONEST_ANSWER, status="budget_exceeded")
    assert [(f.source, f.evidence) for f in flags] == [("status", "the run ended budget_exceeded")]


def test_no_final_answer_means_no_words_and_no_flags(events):
    report = build_report(events, None, status="completed")
    assert report.flags == [] and report.run.summary_text is None and report.recommendation.policy_text is None
    assert report.benchmarks and report.recommendation.bands  # the evidence alone makes the report
