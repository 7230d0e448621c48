"""Deleting what the run did not create needs the user's approval; the model cannot approve itself."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from specops.cli.run import run as run_command

from .scripted import call, drive, events, scripted, world_host  # noqa: F401

pytestmark = pytest.mark.timeout(60)


async def test_non_interactive_run_refuses_a_self_approved_delete(world_host, tmp_path):
    kimi = world_host.removeprefix("sim:") + "/root/models/Kimi-K2.6"
    outcome = await drive(
        scripted(
            call("free_space", {"ids": [f"dir:{kimi}"], "dry_run": False, "approved_paths": [kimi], "created_paths": [kimi]}),
        ),
        world_host, tmp_path,
    )  # fmt: skip
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert result.ok and result.result["deleted"] == []
    assert result.result["refused"][0]["safety"] == "needs_approval"
    approval = events(outcome, "approval")[0]
    assert approval.approved is False and approval.by == "non-interactive default" and kimi in approval.asked
    assert any("not created by this run" in n.text for n in events(outcome, "note"))
    assert Path(kimi, "config.json").exists()


def test_cli_refuses_a_goal_without_a_repo(tmp_path):
    app = typer.Typer()
    app.command()(run_command)
    result = CliRunner().invoke(app, ["deploy the drafter", "--runs-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "names no Hugging Face repo" in result.output
    assert list(tmp_path.iterdir()) == []
