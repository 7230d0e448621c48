"""A saved run's report is read once as the typed report; one that does not validate stops with the file named."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specops.evals.evidence import REPORT, TRANSCRIPT, ReportInvalid, RunEvidence
from specops.evals.execute import EVAL_RUN, ScenarioRun
from specops.evals.scenario import Scenario
from specops.transcripts.events import RunEndEvent

from .evidence_builder import report_of, run_section


def _saved_run(run_dir: Path) -> Path:
    scenario = Scenario.model_validate({"name": "unit", "why": "a saved run", "goal": "deploy x/y-DFlash"})
    run = ScenarioRun(scenario=scenario, policy="playbook", run_dir=str(run_dir), run_status="completed")
    (run_dir / EVAL_RUN).write_text(run.model_dump_json(), encoding="utf-8")
    return run_dir


def test_the_report_is_read_typed_from_report_json_or_the_run_end(tmp_path: Path):
    report = report_of(run=run_section("completed", "all measured"))
    saved = _saved_run(tmp_path)
    (saved / REPORT).write_text(report.model_dump_json(), encoding="utf-8")
    evidence = RunEvidence.load(saved)
    assert evidence.report == report and evidence.policy_status == "completed"
    (saved / REPORT).unlink()
    end = RunEndEvent(
        seq=0,
        ts=datetime.now(UTC),
        run_id="r1",
        status="completed",
        report=report.model_dump(mode="json"),
        duration_s=1,
    )
    (saved / TRANSCRIPT).write_text(end.model_dump_json() + "\n", encoding="utf-8")
    assert RunEvidence.load(saved).report == report


def test_a_report_that_does_not_validate_fails_naming_its_file(tmp_path: Path):
    saved = _saved_run(tmp_path)
    broken = report_of().model_dump(mode="json")
    broken["benchmarks"] = [{"config": "tp8"}]
    (saved / REPORT).write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ReportInvalid, match=r"report\.json: not a valid report .*benchmarks\.0\.") as caught:
        RunEvidence.load(saved)
    assert "\n" not in str(caught.value)
