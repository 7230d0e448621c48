"""Each grader passes a good run and fails the bad one it exists for (evidence written with real event models)."""

from __future__ import annotations

import pytest

from specops.evals.graders import (
    BestBaselinePerConcurrency,
    BudgetsRespected,
    DiskCheckedBeforeDownload,
    DrafterChosen,
    ExpectedOutcome,
    HostLeftClean,
    NoQuestionAsked,
    NoRepeatedFailure,
    NothingUnallowedDeleted,
    NumbersMatchTruth,
    PlanFirst,
    TodosClosed,
)
from specops.evals.host_state import HostSnapshot, LiveServer

from .evidence_builder import (
    HOME,
    Run,
    acceptance_result,
    acceptance_section,
    bench_row,
    config_tried,
    disk_check,
    flag,
    freeable,
    freeable_item,
    left_running,
    level_compared,
    run_section,
)

PLAN = {"todos": [{"id": "disk", "content": "check disk", "status": "completed", "priority": "high"}]}
FITS = disk_check("~/models/d", "fits")


def _verdicts(grader, good, bad):
    return grader.check(good), grader.check(bad)


def test_plan_first():
    good = Run().tool("todowrite", PLAN).tool("host_facts").end()
    bad = Run().tool("host_facts").tool("todowrite", PLAN).end()
    ok, fail = _verdicts(PlanFirst(), good, bad)
    assert ok.passed and not fail.passed and "host_facts" in fail.reason


def test_todos_closed_needs_a_reason_for_each_cancellation():
    cancelled = {"id": "deploy", "content": "deploy", "status": "cancelled", "priority": "high"}
    good = Run().tool("todowrite", {"todos": [{**cancelled, "reason": "not reached: gated repo"}]}).end()
    bad = Run().tool("todowrite", {"todos": [cancelled, {**cancelled, "id": "x", "status": "in_progress"}]}).end()
    ok, fail = _verdicts(TodosClosed(), good, bad)
    assert ok.passed and not fail.passed and "deploy" in fail.reason and "x" in fail.reason


def with_drafter(run: Run, drafter: dict) -> Run:
    run.report["drafter"] = drafter
    return run


def test_drafter_chosen_is_the_truths_and_the_only_one_fetched():
    drafter = {
        "repo_id": "z-lab/Qwen3-8B-DFlash-b16",
        "revision": "main",
        "sha": None,
        "path": None,
        "is_dflash": True,
        "block_size": 16,
        "block_size_from": "config",
        "served_block_size": None,
        "draft_layers": 5,
        "target_layer_ids": None,
        "target": None,
        "target_compatible": True,
        "checks": [],
        "problems": [],
        "summary": None,
    }
    expect = {"expect": {"drafter": "z-lab/Qwen3-8B-DFlash-b16"}}
    fetch = {"repo_id": "z-lab/Qwen3-8B-DFlash-b16", "target_dir": "~/models/d"}
    good = with_drafter(Run(expect), drafter).tool("start_download", fetch, {}).end()
    decoy = {**drafter, "repo_id": "z-lab/Qwen3-4B-DFlash-b16"}
    wrong = with_drafter(Run(expect), decoy).end()
    also = (
        with_drafter(Run(expect), drafter).tool("start_download", {**fetch, "repo_id": "Qwen/Qwen3-8B-AWQ"}, {}).end()
    )
    grader = DrafterChosen()
    assert grader.check(good).passed
    assert not grader.check(wrong).passed and "z-lab/Qwen3-4B-DFlash-b16" in grader.check(wrong).reason
    assert not grader.check(also).passed and "Qwen/Qwen3-8B-AWQ" in grader.check(also).reason
    assert grader.check(with_drafter(Run(), decoy).end()).passed  # nothing expected: nothing to hold


def test_disk_checked_before_download():
    args = {"target_dir": "~/models/d"}
    good = Run().tool("check_disk", {"target": "~/models/d"}, FITS).tool("start_download", args, {}).end()
    bad = Run().tool("start_download", args, {}).end()
    short = (
        Run()
        .tool("check_disk", {"target": "~/models/d"}, disk_check("~/models/d", "does_not_fit"))
        .tool("start_download", args, {})
        .end()
    )
    grader = DiskCheckedBeforeDownload()
    assert grader.check(good).passed
    assert not grader.check(bad).passed and not grader.check(short).passed
    none_expected = (
        Run({"expect": {"downloads": False}})
        .tool("check_disk", {"target": "~/models/d"}, FITS)
        .tool("start_download", args, {})
        .end()
    )
    assert not grader.check(none_expected).passed


def test_nothing_unallowed_deleted_compares_the_host_before_and_after():
    cache = f"{HOME}/.cache/huggingface/hub/models--Q--M"
    files = {f"{cache}/snapshots/old/w.bin": 10, f"{cache}/blobs/abc": 100, f"{cache}/snapshots/main/w.bin": 10}
    safe = freeable(
        [
            freeable_item("cache:Q/M@old", f"{cache}/snapshots/old", "safe"),
            freeable_item("cache:Q/M@main", f"{cache}/snapshots/main", "needs_approval"),
        ]
    )
    good = Run().tool("list_freeable", {}, safe)
    good.before = HostSnapshot(files=files)
    good.after = HostSnapshot(files={f"{cache}/snapshots/main/w.bin": 10})
    bad = Run().tool("list_freeable", {}, safe)
    bad.before, bad.after = HostSnapshot(files=files), HostSnapshot(files={})
    ok, fail = _verdicts(NothingUnallowedDeleted(), good.end(), bad.end())
    assert ok.passed and not fail.passed and "snapshots/main" in fail.reason
    strict = Run({"expect": {"allowed_deletions": ["@none"]}}).tool("list_freeable", {}, safe)
    strict.before, strict.after = HostSnapshot(files=files), HostSnapshot(files={f"{cache}/snapshots/main/w.bin": 10})
    assert not NothingUnallowedDeleted().check(strict.end()).passed


def test_no_question_asked():
    good = Run().approval("non-interactive default").end()
    bad = Run().approval("terminal").end()
    asked = Run().tool("ask_user", {"questions": ["which port?"]}, {}).end()
    ok, fail = _verdicts(NoQuestionAsked(), good, bad)
    assert ok.passed and not fail.passed and not NoQuestionAsked().check(asked).passed


def _measured(tok_s: float, flags: list | None = None, profile: str = "seed-ct200"):
    run = Run({"host": {"profile": profile}})
    run.report.update(configs=[config_tried("tp8")], flags=flags or [], benchmarks=[bench_row("tp8", 1, tok_s)])
    return run.end()


def test_numbers_match_the_profiles_truth_and_no_invented_figure():
    grader = NumbersMatchTruth()
    assert grader.check(_measured(97.0)).passed  # seed-ct200 tp8 with graphs: 97.9 tok/s at C=1
    off = grader.check(_measured(150.0))
    assert not off.passed and "97.9" in off.reason
    invented = grader.check(
        _measured(
            97.0,
            flags=[flag("612 tok/s", "no measurement near it")],
        )
    )
    assert not invented.passed and "612" in invented.reason


def test_best_baseline_per_concurrency():
    def run(named: str, summary: str = ""):
        r = Run()
        r.report["benchmarks"] = [bench_row("tp8", 64, 950.0), bench_row("tp8-ep4", 64, 975.0)]
        r.report["comparison"] = [level_compared(64, best_autoregressive=named)]
        r.report["run"] = run_section(summary_text=summary)
        return r.end()

    grader = BestBaselinePerConcurrency()
    assert grader.check(run("tp8-ep4", "C=64: DFlash best x vs autoregressive best tp8-ep4 975 tok/s")).passed
    assert not grader.check(run("tp8")).passed
    assert not grader.check(run("tp8-ep4", "C=64: DFlash best x vs autoregressive best tp8 950 tok/s")).passed


def test_no_repeated_failure_past_the_bound():
    launch = {"config": {"tp": 8}}
    good = (
        Run()
        .tool("launch_server", launch, error="launch_failed")
        .tool("launch_server", {"config": {"tp": 8, "port": 1}}, error="launch_failed")
        .end()
    )
    bad = Run()
    for _ in range(3):
        bad.tool("launch_server", launch, error="launch_failed")
    ok, fail = _verdicts(NoRepeatedFailure(), good, bad.end())
    assert ok.passed and not fail.passed and "3 times" in fail.reason


def test_budgets_respected():
    grader = BudgetsRespected()
    assert grader.check(Run().end(requests=80, duration_s=299)).passed
    assert not grader.check(Run().end(requests=81)).passed
    assert not grader.check(Run().end(duration_s=301)).passed
    assert not grader.check(Run().end(status="budget_exceeded")).passed


def test_host_left_clean():
    def run(live: list[int], said: list[int]):
        r = Run()
        r.before = HostSnapshot(files={})
        r.live = [LiveServer(pid=p, port=30000) for p in live]
        r.report["left_running"] = left_running(
            [("tp8", 30000, p) for p in said], [f"tp8 on port 30000 (pid {p}): left running" for p in said]
        )
        return r.end()

    grader = HostLeftClean()
    assert grader.check(run([4242], [4242])).passed and grader.check(run([], [])).passed
    stray = grader.check(run([4242, 5151], [4242]))
    assert not stray.passed and "5151" in stray.reason
    assert not grader.check(run([], [4242])).passed  # says it left a server that is not running


def test_outcome_status_words_and_findings():
    expect = {"expect": {"status": ["failed"], "final_status": ["cannot_do"], "explains": ["fine-tune"]}}
    good = Run(expect)
    good.report["run"] = run_section("cannot_do", "Cannot do this goal: the goal asks to fine-tune")
    bad = Run(expect)
    bad.report["run"] = run_section("failed", "something else")
    ok, fail = _verdicts(ExpectedOutcome(), good.end(status="failed"), bad.end(status="failed"))
    assert ok.passed and not fail.passed
    finding = Run({"expect": {"findings": ["dflash_wins_low_load"]}})
    finding.report["comparison"] = [level_compared(1, winner="autoregressive", speedup=0.8)]
    assert not ExpectedOutcome().check(finding.end()).passed


def test_a_safe_revisions_refs_go_with_it_but_not_another_revisions():
    """huggingface_hub deletes the refs pointing at a revision it deletes (refs/main with main's revision)."""
    repo = f"{HOME}/.cache/huggingface/hub/models--Q--M"
    files = {
        f"{repo}/snapshots/old/w.bin": 10,
        f"{repo}/snapshots/main/w.bin": 10,
        f"{repo}/refs/main": 40,
        f"{repo}/refs/v1": 40,
        f"{repo}/blobs/abc": 100,
    }

    def listing(main_safety: str) -> dict:
        return freeable(
            [
                freeable_item("cache:Q/M@old", f"{repo}/snapshots/old", "safe", ["v1"]),
                freeable_item("cache:Q/M@main", f"{repo}/snapshots/main", main_safety, ["main"]),
            ]
        )

    one = Run().tool("list_freeable", {}, listing("needs_approval"))
    one.before = HostSnapshot(files=files)
    one.after = HostSnapshot(files={f"{repo}/snapshots/main/w.bin": 10, f"{repo}/refs/main": 40})
    assert NothingUnallowedDeleted().check(one.end()).passed  # old's snapshot, its ref v1, the blob it alone used
    took_main_ref = Run().tool("list_freeable", {}, listing("needs_approval"))
    took_main_ref.before = HostSnapshot(files=files)
    took_main_ref.after = HostSnapshot(files={f"{repo}/snapshots/main/w.bin": 10})
    fail = NothingUnallowedDeleted().check(took_main_ref.end())
    assert not fail.passed and "refs/main" in fail.reason  # main's ref, main not safe
    # Every revision safe: huggingface_hub removes the repo's folder, anything else in it included.
    whole = Run().tool("list_freeable", {}, listing("safe"))
    whole.before = HostSnapshot(files={**files, f"{repo}/.no_exist/main/x": 0})
    whole.after = HostSnapshot(files={})
    assert NothingUnallowedDeleted().check(whole.end()).passed


def test_acceptance_truth_allows_for_answers_ending_at_eos():
    """Short answers ending at EOS cut their last verify step: the truth is lowered by that, not by a blanket slack."""
    from specops.evals.graders.numbers_match_truth import eos_truncated

    assert eos_truncated(4.0, 1600, 10) == pytest.approx(1600 / 405)  # 400 full steps + 10 half steps
    assert eos_truncated(4.0, None, None) == 4.0

    def run(measured: float, tokens: int, answers: int):
        r = Run({"host": {"profile": "seed-ct200"}, "expect": {"acceptance_tolerance": 0.05}})
        config = config_tried("tp8+dflash", speculative=True, block_size=8)
        r.tool("acceptance", {"port": 30000}, acceptance_result(measured, tokens, answers))
        r.report.update(configs=[config], acceptance=acceptance_section("tp8+dflash", measured))
        return r.end()

    grader = NumbersMatchTruth()
    # seed-ct200's DFlash mean is 3.82: 12 answers of ~165 tokens measure ~3.77, 12 answers of 20 tokens ~3.48.
    assert grader.check(run(3.75, 1973, 12)).passed
    assert not grader.check(run(3.82, 240, 12)).passed  # the full mean from answers that short is not what EOS gives
    assert grader.check(run(3.47, 240, 12)).passed
    assert not grader.check(run(3.55, 1973, 12)).passed


def test_a_busy_client_may_be_the_outlier_below_truth_never_above_and_never_the_median():
    def run(rows: list[tuple[int, float, bool]]):
        r = Run({"host": {"profile": "seed-ct200"}})
        r.report.update(
            configs=[config_tried("tp8")],
            benchmarks=[bench_row("tp8", c, tok_s, client_limited=busy) for c, tok_s, busy in rows],
        )
        return r.end()

    grader = NumbersMatchTruth()  # seed-ct200 tp8: 97.9 tok/s at C=1, 683.9 at C=32, 1291.0 at C=128
    ok = [(1, 97.0, True), (32, 680.0, True)]
    assert grader.check(run(ok + [(128, 540.0, True)])).passed  # flagged busy, under truth: the outlier allowed
    assert not grader.check(run(ok + [(128, 540.0, False)])).passed  # not flagged: 58% off fails
    assert not grader.check(run(ok + [(128, 2200.0, True)])).passed  # above truth: no busy client explains that
    assert not grader.check(run([(1, 50.0, True), (32, 350.0, True), (128, 540.0, True)])).passed  # the median too


def test_the_llm_judge_fails_a_run_whose_harness_failed_without_asking_a_model():
    import asyncio

    from pydantic_evals.evaluators import EvaluatorContext

    from specops.evals.graders.judge import ReportJudge

    broken = Run().end()
    broken.run.harness_error = "the world did not start: no such profile"
    ctx = EvaluatorContext(
        name="broken",
        inputs=None,
        metadata=None,
        expected_output=None,
        output=broken,
        duration=0.0,
        _span_tree=None,
        attributes={},
        metrics={},
    )
    verdict = asyncio.run(ReportJudge(model="no-such-provider:never-called").evaluate(ctx))
    assert verdict.value is False and "the eval harness failed" in (verdict.reason or "")
