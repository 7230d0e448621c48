"""`specops show RUN` finds a run's transcript as replay and resume do: plain or compressed, or says what is wrong."""

from __future__ import annotations

import shutil

from typer.testing import CliRunner

from specops.agent.replay.golden import SCENARIOS
from specops.cli.main import app

GOLDEN = {s.name: s.path for s in SCENARIOS}


def test_a_run_directory_with_a_compressed_transcript_is_shown(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(GOLDEN["incompatible-drafter"], run_dir / "transcript.jsonl.gz")
    out = CliRunner().invoke(app, ["show", str(run_dir)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "deploy and benchmark SubSir/Kimi-K2.6-DFlash-bad-layers" in out.output


def test_what_is_not_a_run_is_refused_with_exit_2(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(app, ["show", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    empty = tmp_path / "empty"
    empty.mkdir()
    no_transcript = runner.invoke(app, ["show", str(empty)])
    assert no_transcript.exit_code == 2 and "holds no transcript.jsonl" in no_transcript.output
