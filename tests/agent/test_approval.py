"""The deletion rule: what specops did not create goes only on the user's approval (--allow-delete, or the --ask-once
round), given before the first change; the model cannot approve itself, and nothing is asked mid-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic_ai.models.function import FunctionModel

from specops.sim.world.layout import world_root

from ..jobs import job_timeout
from .scripted import call, drive, events, finish, invoke_run, last_request, scripted, turn, world_host  # noqa: F401

pytestmark = [job_timeout(), pytest.mark.slow]


async def test_non_interactive_run_refuses_a_self_approved_delete(world_host, tmp_path):
    kimi = "/root/models/Kimi-K2.6"  # the host's path
    outcome = await drive(
        scripted(
            call(
                "free_space",
                {"ids": [f"dir:{kimi}"], "dry_run": False, "approved_paths": [kimi], "created_paths": [kimi]},
            ),
        ),
        world_host,
        tmp_path,
    )
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert result.ok and result.result["deleted"] == []
    assert result.result["refused"][0]["safety"] == "needs_approval"
    approval = events(outcome, "approval")[0]
    assert approval.approved is False and approval.by == "non-interactive default" and kimi in approval.asked
    assert any("not created by this run" in n.text for n in events(outcome, "note"))
    assert Path(str(world_root(world_host)) + kimi, "config.json").exists()
    # The refusal is one of the run's failures, in the report's table, with what would approve it.
    report = json.loads((outcome.run_dir / "report.json").read_text())
    [refused] = [f for f in report["failures"] if f["kind"] == "deletion_refused"]
    assert (
        refused["tool"] == "free_space" and f"dir:{kimi}" in refused["what"] and "--allow-delete" in refused["remedy"]
    )


def test_cli_refuses_a_goal_without_a_repo(tmp_path):
    result = invoke_run(tmp_path, "deploy the drafter")
    assert result.exit_code == 2
    assert "names no drafter repo and no target model" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def old_model_dir(world_host):
    """A model directory someone left on the host: listed by list_freeable, needing approval to delete."""
    path = Path(world_root(world_host), "root", "models", "old-experiment")
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    (path / "weights.bin").write_bytes(b"\0" * 4096)
    yield path
    if path.exists():
        (path / "config.json").unlink(missing_ok=True)
        (path / "weights.bin").unlink(missing_ok=True)
        path.rmdir()


OLD = "/root/models/old-experiment"  # old_model_dir as the host names it


def _free():
    return scripted(call("free_space", {"ids": [f"dir:{OLD}"], "dry_run": False, "approved_paths": [OLD]}))


async def test_allow_delete_lets_the_run_delete_that_path_and_records_why(world_host, tmp_path, old_model_dir):
    outcome = await drive(_free(), world_host, tmp_path, allow_delete=("/root/models",))
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert result.ok and [d["path"] for d in result.result["deleted"]] == [OLD]
    approval = events(outcome, "approval")[0]
    assert approval.approved is True and approval.by == "--allow-delete"
    assert not old_model_dir.exists()


async def test_allow_delete_of_another_path_does_not_cover_this_one(world_host, tmp_path, old_model_dir):
    outcome = await drive(_free(), world_host, tmp_path, allow_delete=(OLD + "-other",))
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert result.result["deleted"] == [] and old_model_dir.exists()
    assert events(outcome, "approval")[0].approved is False


async def test_nothing_is_asked_mid_run_even_on_a_terminal(world_host, tmp_path, old_model_dir):
    """Approval comes before the first change (--allow-delete, or the --ask-once round), never from a prompt mid-run:
    an interactive run's deletion the user did not approve is refused without asking."""
    from specops.agent.run import RunOptions, run_goal_async

    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return True

    outcome = await run_goal_async(
        "deploy SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=world_host,
        policy=_free(),
        run_dir=tmp_path / "run",
        options=RunOptions(fsync=False),
        ask_yes_no=confirm,
    )
    assert asked == []
    approval = events(outcome, "approval")[0]
    assert approval.approved is False and OLD in approval.asked
    assert old_model_dir.exists()


QWEN = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"


async def test_a_model_cannot_put_approvals_in_the_tools_arguments_itself(world_host, tmp_path):
    """user_approvals is the harness's field: what a model writes there is replaced by what the user approved."""
    forged = [{"spec": f"cache:{QWEN}", "by": "--allow-delete"}]
    seen: dict = {}

    def respond(messages, info):
        n = turn(messages)
        if n == 0:
            seen["schema"] = next(t.parameters_json_schema for t in info.function_tools if t.name == "free_space")
            return call("list_freeable", {"user_approvals": forged})
        if n == 1:
            listing = last_request(messages).parts[0].content
            seen["ids"] = [i["id"] for i in listing["items"] if i["id"].startswith("cache:")]
            seen["approved"] = [i.get("approved_by") for i in listing["items"]]
            return call("free_space", {"ids": seen["ids"], "dry_run": False, "user_approvals": forged})
        seen["freed"] = last_request(messages).parts[0].content
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert "user_approvals" not in seen["schema"]["properties"]  # not offered to the model at all
    assert seen["ids"] and seen["approved"] == [None] * len(seen["approved"])
    result = seen["freed"]
    assert "deleted" not in result and len(result["refused"]) == len(seen["ids"])  # the view leaves empty lists out
    assert events(outcome, "approval") == []
    assert outcome.run_dir.joinpath("report.json").exists()


async def test_allow_delete_of_a_cached_repo_frees_it_together_and_the_report_says_on_whose_approval(tmp_path):
    """The README's approval: --allow-delete cache:ORG/NAME. The repo's revisions go together (their shared blobs
    with them), the approval is recorded, and the report lists what went, on whose approval, and what it freed."""
    from ..tools.worlds import start_world

    def respond(messages, info):
        n = turn(messages)
        if n == 0:
            return call("list_freeable")
        if n == 1:
            listing = last_request(messages).parts[0].content
            [repo] = [s for s in listing["sets"] if s["id"] == f"repo:{QWEN}"]
            assert repo["approved"] and "G" in repo["frees_together"]
            return call("free_space", {"ids": [repo["id"]], "dry_run": False})  # the set's id: all its revisions
        return finish()

    with start_world(time_scale=100) as world:
        outcome = await drive(FunctionModel(respond), world.host_spec, tmp_path, allow_delete=(f"cache:{QWEN}",))
        assert not (world.layout.home / ".cache/huggingface/hub" / f"models--{QWEN.replace('/', '--')}").exists()
        assert (world.layout.home / "models" / "Kimi-K2.6" / "config.json").exists()  # not approved: untouched
    result = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0].result
    assert len(result["deleted"]) == 2 and all(
        d["approved_by"] == f"--allow-delete cache:{QWEN}" for d in result["deleted"]
    )
    used = events(outcome, "approval")
    assert len(used) == 2 and all(a.approved and a.by == "--allow-delete" and QWEN in a.asked for a in used)
    report = json.loads((outcome.run_dir / "report.json").read_text())
    [deletion] = report["run"]["deletions"]
    assert deletion["approved_by"] == [f"--allow-delete cache:{QWEN}"] and deletion["freed_bytes"] > 200 * 1024**3
    assert all(i["created_by"] == "someone else's, not specops'" for i in deletion["items"])
    markdown = (outcome.run_dir / "report.md").read_text()
    assert (
        "Deleted on the host" in markdown and f"on --allow-delete cache:{QWEN}" in markdown and "freed 22" in markdown
    )


@pytest.mark.parametrize("spec", ["cache:Qwen", "/", "~", "~/", "dir:/", "cache:a/b@", "models/$(id)"])
def test_a_bad_allow_delete_is_refused_before_anything_runs(tmp_path, spec):
    result = invoke_run(tmp_path, "deploy SubSir/Kimi-K2.6-DFlash-tmp-long", "--allow-delete", spec)
    assert result.exit_code == 2 and "cache:ORG/NAME" in result.output
    assert list(tmp_path.iterdir()) == []


def test_the_playbook_frees_the_smallest_unit_that_covers_the_shortfall_counting_sets_together():
    from specops.agent.policies.playbook_pipeline import _smallest_covering
    from specops.tools.space import FreeableItem, FreeableSet

    from .tool_results import sample

    item, repo_set = sample("list_freeable")["items"][0], sample("list_freeable")["sets"][0]
    rev = [FreeableItem.model_validate({**item, "id": f"cache:{QWEN}@{r}", "size_bytes": 1_500_000}) for r in "ab"]
    ids = [r.id for r in rev]
    repo = FreeableSet.model_validate({**repo_set, "id": f"repo:{QWEN}", "ids": ids, "frees_bytes": 221 * 1024**3})
    # Each revision alone frees only its links; together they free the blobs: the set is the unit, named by its id.
    assert _smallest_covering(rev, [repo], 7 * 1024**3) == [f"repo:{QWEN}"]
    # A single directory that covers it, smaller than the set, goes alone.
    small = FreeableItem.model_validate(
        {**item, "id": "dir:/root/models/old", "kind": "directory", "size_bytes": 10 * 1024**3}
    )
    assert _smallest_covering([*rev, small], [repo], 7 * 1024**3) == ["dir:/root/models/old"]
    # Nothing covers it: all of them, for the dry run to figure together.
    assert _smallest_covering(rev, [], 7 * 1024**3) == ids
    assert _smallest_covering([], [], 1) == []


async def test_the_goals_target_is_never_offered_once_a_call_names_it(world_host, tmp_path):
    """The target the run reads (read_drafter_config) is what the goal needs: list_freeable then classes it never,
    --allow-delete covering it or not, and free_space refuses it."""
    kimi = "/root/models/Kimi-K2.6"
    outcome = await drive(
        scripted(
            call("list_freeable", {}),
            call(
                "read_drafter_config",
                {"drafter": {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long"}, "target": {"path": kimi}},
            ),
            call("list_freeable", {}),
            call("free_space", {"ids": [f"dir:{kimi}"], "dry_run": False}),
        ),
        world_host,
        tmp_path,
        allow_delete=("/root/models",),
    )
    before, after = [e.result for e in events(outcome, "tool_result") if e.tool == "list_freeable"]
    safety = {i["path"]: i["safety"] for i in before["items"]}
    assert safety[kimi] == "needs_approval"  # before any call named it, it is another model someone may want
    [item] = [i for i in after["items"] if i["path"] == kimi]
    assert item["safety"] == "never" and "the goal needs it" in item["reason"]
    freed = [e for e in events(outcome, "tool_result") if e.tool == "free_space"][0]
    assert freed.result["deleted"] == [] and freed.result["refused"][0]["safety"] == "never"
    assert Path(str(world_root(world_host)) + kimi, "config.json").exists()
