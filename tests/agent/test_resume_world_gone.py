"""`specops resume` of a run whose simulated world is gone changes nothing in the run directory and says why.

Real `specops run`s on sim:seed-ct200 (the world is the run's own: it is removed when the run ends): one that
completed, one that failed; and one cut off as kill -9 leaves a run (its transcript ends at a tool call) after
its world was removed. Resuming any of them leaves every file of the run directory byte for byte as it was.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specops.agent.replay.resume import RunAlreadyEnded, resume
from specops.cli.main import app

from ..jobs import job_timeout, run_job

# Whole runs (module fixtures: two in the first tests that use them): only a hang fails.
pytestmark = [job_timeout(jobs=2), pytest.mark.slow]

GOAL = "evaluate SubSir/Kimi-K2.6-DFlash-tmp-long"
QUICK = "playbook:levels=1;ar_layouts=1;spec_layouts=1;acceptance_prompts=4"


def _run(runs_dir: Path, *extra: str) -> Path:
    """A real `specops run` on sim:seed-ct200, to its end; its run directory, its world already removed."""
    done = run_job(
        [sys.executable, "-m", "specops.cli.main", "run", GOAL, "--host", "sim:seed-ct200", "--model", QUICK]
        + ["--runs-dir", str(runs_dir), "--json", *extra],
        stdout=subprocess.DEVNULL,
    )
    [run_dir] = runs_dir.iterdir()
    assert (run_dir / "transcript.jsonl").is_file(), done.stderr
    _remove_world(run_dir)
    return run_dir


def _remove_world(run_dir: Path) -> None:
    events = [json.loads(line) for line in (run_dir / "transcript.jsonl").read_text().splitlines()]
    root = Path(next(e for e in events if e["type"] == "host_opened")["host"]["sim"]["root"])
    shutil.rmtree(root, ignore_errors=True)  # gone already when the run closed its world; gone in any case
    assert not root.exists()


def _files(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir())}


def _resume_cli(run_dir: Path):
    return CliRunner().invoke(app, ["resume", str(run_dir)])


@pytest.fixture(scope="module")
def completed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("completed"))


@pytest.fixture(scope="module")
def failed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # SGLang without DFLASH: the playbook stops after host_facts, and the run ends failed.
    return _run(tmp_path_factory.mktemp("failed"), "--sim-fault", "old_sglang")


def test_resuming_a_completed_run_whose_world_is_gone_changes_nothing(completed: Path) -> None:
    before = _files(completed)
    assert b'"type":"run_end"' in before["transcript.jsonl"] and "report.md" in before

    out = _resume_cli(completed)

    assert out.exit_code == 0, out.output
    assert out.output.count("\n") == 1 and "already ended (completed)" in out.output, out.output
    assert _files(completed) == before
    with pytest.raises(RunAlreadyEnded, match=r"already ended \(completed\)") as refused:
        resume(completed)
    assert refused.value.status == "completed"
    assert _files(completed) == before


def test_resuming_a_failed_run_whose_world_is_gone_changes_nothing(failed: Path) -> None:
    before = _files(failed)
    assert b'"status":"failed"' in before["transcript.jsonl"]

    out = _resume_cli(failed)

    assert out.exit_code == 0, out.output
    assert out.output.count("\n") == 1 and "already ended (failed)" in out.output, out.output
    assert _files(failed) == before


def test_resuming_a_killed_run_whose_world_is_gone_says_so_and_changes_nothing(completed: Path, tmp_path: Path) -> None:
    """Cut off as kill -9 leaves it: the transcript ends at the call it was killed in, no run_end, no report."""
    killed = tmp_path / completed.name
    killed.mkdir()
    lines = (completed / "transcript.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"type":"tool_call"' in line and b'"wait_download"' in line)
    (killed / "transcript.jsonl").write_bytes(b"".join(lines[: cut + 1]))
    before = _files(killed)

    out = _resume_cli(killed)

    assert out.exit_code == 2, out.output
    assert out.output.count("\n") == 1, out.output
    assert "cannot be reached" in out.output and "nothing was changed" in out.output, out.output
    assert _files(killed) == before  # no resumed event, no run_end failed, no report written
