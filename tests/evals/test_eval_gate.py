"""The eval gate through the real command: quick scenarios run, JSON and JUnit written, re-grade, baseline, exit codes.

The scenarios here end early (they stop before any server launches), so this
stays fast in the suite; the full set runs with `specops eval` (see evals/ci-example.yml).
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from specops.evals.graders import GRADER_NAMES

from ..jobs import job_timeout, run_job

QUICK = "cannot-do-goal,host-not-answering,incompatible-drafter,gated-repo-no-token"


def _eval(*args: str) -> subprocess.CompletedProcess:
    """`specops eval ARGS`, a whole job (tests/jobs.py): its timeout only catches a hang."""
    return run_job([sys.executable, "-m", "specops.cli.main", "eval", *args])


@pytest.mark.slow
@job_timeout(jobs=4)  # an eval, then three re-grades
def test_quick_scenarios_pass_then_regrade_and_baseline(tmp_path):
    out = tmp_path / "eval-out"
    done = _eval("--scenario", QUICK, "--out", str(out), "--jobs", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "eval-report.json").read_text())
    assert {r["scenario"] for r in report["results"]} == set(QUICK.split(","))
    assert all(g["passed"] for r in report["results"] for g in r["graders"].values())
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == len(QUICK.split(",")) * len(GRADER_NAMES) and suite.get("failures") == "0"
    assert "cannot-do-goal" in done.stdout and "4/4 scenario runs pass" in done.stdout

    # Re-grading reads only the saved runs: same verdicts, nothing re-run (no new run folders).
    before = sorted(p.name for p in (out / "runs").iterdir())
    again = _eval("--regrade", str(out))
    assert again.returncode == 0, again.stdout
    assert sorted(p.name for p in (out / "runs").iterdir()) == before

    # A baseline in which a verdict failed that passes now: "fixed"; one that passed and fails now: a regression.
    baseline = json.loads((out / "eval-report.json").read_text())
    baseline["results"][0]["graders"]["outcome"]["passed"] = False
    (tmp_path / "base.json").write_text(json.dumps(baseline))
    fixed = _eval("--regrade", str(out), "--baseline", str(tmp_path / "base.json"))
    assert fixed.returncode == 0 and "1 fixed" in fixed.stdout

    # Break a saved run (its transcript gone) and re-grade: the gate closes, exit 1, the failing grader named.
    (out / "runs" / "gated-repo-no-token" / "transcript.jsonl").unlink()
    broken = _eval("--regrade", str(out), "--baseline", str(out / "eval-report.json"))
    assert broken.returncode == 1
    assert "regression" in broken.stdout and "gated-repo-no-token" in broken.stdout


@pytest.mark.slow
def test_no_matching_scenario_is_exit_2(tmp_path):
    done = _eval("--scenario", "no-such-thing", "--out", str(tmp_path))
    assert done.returncode == 2 and "no scenario" in done.stderr and not done.stdout
