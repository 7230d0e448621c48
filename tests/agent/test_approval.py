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


@pytest.fixture
def old_model_dir(world_host):
    """A model directory someone left on the host: listed by list_freeable, needing approval to delete."""
    path = Path(world_host.removeprefix("sim:"), "root", "models", "old-experiment")
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    (path / "weights.bin").write_bytes(b"\0" * 4096)
    yield path
    if path.exists():
        (path / "config.json").unlink(missing_ok=True)
        (path / "weights.bin").unlink(missing_ok=True)
        path.rmdir()


def _free(path: Path):
    return scripted(call("free_space", {"ids": [f"dir:{path}"], "dry_run": False, "approved_paths": [str(path)]}))


async def test_allow_delete_lets_the_run_delete_that_path_and_records_why(world_host, tmp_path, old_model_dir):
    outcome = await drive(_free(old_model_dir), world_host, tmp_path, allow_delete=(str(old_model_dir.parent),))
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert result.ok and [d["path"] for d in result.result["deleted"]] == [str(old_model_dir)]
    approval = events(outcome, "approval")[0]
    assert approval.approved is True and approval.by == "--allow-delete"
    assert not old_model_dir.exists()


async def test_allow_delete_of_another_path_does_not_cover_this_one(world_host, tmp_path, old_model_dir):
    outcome = await drive(_free(old_model_dir), world_host, tmp_path, allow_delete=(str(old_model_dir) + "-other",))
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert result.result["deleted"] == [] and old_model_dir.exists()
    assert events(outcome, "approval")[0].approved is False


@pytest.mark.parametrize("answer", [True, False])
async def test_an_interactive_run_asks_once_per_path_and_obeys(world_host, tmp_path, old_model_dir, answer):
    from specops.agent.run import RunOptions, run_goal_async

    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return answer

    outcome = await run_goal_async(
        "deploy SubSir/Kimi-K2.6-DFlash-tmp-long", host=world_host, policy=_free(old_model_dir),
        run_dir=tmp_path / "run", options=RunOptions(fsync=False), ask_yes_no=confirm,
    )  # fmt: skip
    assert len(asked) == 1 and str(old_model_dir) in asked[0]
    approval = events(outcome, "approval")[0]
    assert approval.approved is answer and approval.by == "terminal"
    assert old_model_dir.exists() is not answer
