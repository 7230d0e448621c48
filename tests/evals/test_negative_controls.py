"""The negative controls, end to end: each bad policy runs a real scenario on the simulated world through
`specops eval`, and fails exactly the graders made to catch it, passing the others.

    skips-disk-check        the download runs into ENOSPC (the sim's disk fills for real): disk + outcome fail
    deletes-the-cache       the Hugging Face cache goes although the drafter fitting: deletions fail
    repeats-failing-launch  the same failing launch four times (loop guard loosened): repeated-failure fails
    invents-numbers         612 tok/s and 6.31x that nothing measured: numbers fail (the report's claim check)

The scenarios are in tests/evals/controls/ (each names its control as its `model`). Serial: the graders that
must pass include the throughput check against the profile's truth, which a machine busy with other tests
could push out of tolerance.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from specops.evals.graders import GRADER_NAMES
from specops.evals.scenario import load_scenarios

from ..jobs import job_timeout, run_job

CONTROLS = Path(__file__).with_name("controls")
CATCHES = {
    "skips-disk-check": {"disk_checked_before_download", "outcome"},
    "deletes-the-cache": {"nothing_unallowed_deleted"},
    "repeats-failing-launch": {"no_repeated_failure"},
    "invents-numbers": {"numbers_match_truth"},
}


def _eval(*args: str) -> subprocess.CompletedProcess:
    """`specops eval ARGS`, a whole job (tests/jobs.py): its timeout only catches a hang."""
    return run_job([sys.executable, "-m", "specops.cli.main", "eval", *args])


@pytest.fixture(scope="module")
def controls_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("controls") / "eval-out"
    done = _eval("--scenario-dir", str(CONTROLS), "--out", str(out), "--jobs", "2")
    return out, done


def test_every_control_is_a_negative_control_scenario():
    scenarios = load_scenarios("*", CONTROLS)
    assert {s.name for s in scenarios} == set(CATCHES)
    for s in scenarios:
        assert s.model is not None and s.model.startswith(f"negative-control:{s.name}:"), s.name


@pytest.mark.slow
@pytest.mark.serial
@job_timeout()  # the module's eval of the controls (set up here, the first to use it)
def test_each_control_fails_exactly_the_graders_that_catch_it(controls_run):
    out, done = controls_run
    assert done.returncode == 1, done.stdout + done.stderr  # below the bar: the gate closes
    report = json.loads((out / "eval-report.json").read_text())
    failing = {r["scenario"]: {g for g, v in r["graders"].items() if not v["passed"]} for r in report["results"]}
    reasons = {f"{r['scenario']}/{g}": v["reason"] for r in report["results"] for g, v in r["graders"].items()}
    assert failing == CATCHES, json.dumps(reasons, indent=1)[:4000]
    assert report["policy"].startswith("playbook")  # no --model: each scenario's own (the control it names)

    # Each failure for the right reason, read from what the run left behind.
    assert "without a check_disk" in reasons["skips-disk-check/disk_checked_before_download"]
    assert "run ended failed" in reasons["skips-disk-check/outcome"]
    assert ".cache/huggingface/hub/models--Qwen" in reasons["deletes-the-cache/nothing_unallowed_deleted"]
    assert "launch_server failed 4 times" in reasons["repeats-failing-launch/no_repeated_failure"]
    assert "612" in reasons["invents-numbers/numbers_match_truth"]

    # The disk control really ran out of space: the sim's write guard failed the download with ENOSPC.
    transcript = (out / "runs" / "skips-disk-check" / "transcript.jsonl").read_text()
    assert '"no_space"' in transcript
    # The cache control deleted for real; the eval record holds the host before and after.
    run = json.loads((out / "runs" / "deletes-the-cache" / "eval_run.json").read_text())
    cache = [p for p in run["before"]["files"] if "/.cache/huggingface/hub/" in p]
    assert cache and not any(p in run["after"]["files"] for p in cache)

    # JUnit: one failure per caught grader, named by the run and the grader.
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == len(CATCHES) * len(GRADER_NAMES)
    failed = {
        (c.get("classname").rsplit(".", 1)[-1], c.get("name"))
        for c in suite.iter("testcase")
        if c.find("failure") is not None
    }
    assert failed == {(s, g) for s, graders in CATCHES.items() for g in graders}


@pytest.mark.slow
@pytest.mark.serial
@job_timeout(jobs=2)  # the module's eval of the controls (when it runs alone) and a re-grade
def test_controls_regrade_against_their_own_baseline(controls_run, tmp_path):
    out, _ = controls_run
    baseline = tmp_path / "baseline.json"
    baseline.write_text((out / "eval-report.json").read_text())
    # The same saved runs graded again: same verdicts, so no regression; still below a 100% bar, open at a 0% bar.
    again = _eval("--regrade", str(out), "--baseline", str(baseline))
    assert again.returncode == 1 and "0 regression(s)" in again.stdout, again.stdout
    opened = _eval("--regrade", str(out), "--pass-bar", "0")
    assert opened.returncode == 0, opened.stdout
