"""--ask-once: one round of questions before the first change (read-only checks may come first), from a file or the
terminal; closed after it. The round is where the user can approve deleting what specops did not create."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ..jobs import job_timeout
from .scripted import PLAN, call, drive, events, finish, last_request, turn, world_host  # noqa: F401

pytestmark = [job_timeout(), pytest.mark.slow]
QUESTIONS = ["May I delete old HF cache revisions?", "Which port should the server use?"]
CHECK = {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"}


def _asks_then_acts_then_asks_again(seen: dict):
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.setdefault("tools", [t.name for t in info.function_tools])
        n = turn(messages)
        if n == 0:
            return call("ask_user", {"questions": QUESTIONS})
        if n == 1:
            seen["answers"] = last_request(messages).parts[0].content
            return call("check_disk", CHECK)
        if n == 2:
            return call("ask_user", {"questions": ["One more?"]})
        seen["closed"] = last_request(messages).parts[0].content
        return finish()

    return FunctionModel(respond)


async def test_answers_come_from_the_file_once_then_the_round_is_closed(world_host, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({QUESTIONS[0]: "yes, the Qwen ones", QUESTIONS[1]: "30001"}))
    seen: dict = {}
    outcome = await drive(
        _asks_then_acts_then_asks_again(seen), world_host, tmp_path, ask_once=True, answers_file=answers
    )
    assert "ask_user" in seen["tools"]
    assert seen["answers"]["answers"] == {QUESTIONS[0]: "yes, the Qwen ones", QUESTIONS[1]: "30001"}
    assert seen["closed"]["error"]["kind"] == "questions_closed"
    approvals = events(outcome, "approval")
    assert [(a.asked, a.answer, a.by) for a in approvals] == [
        (QUESTIONS[0], "yes, the Qwen ones", "answers file"),
        (QUESTIONS[1], "30001", "answers file"),
    ]


async def test_the_terminal_answers_and_a_blank_answer_leaves_the_decision_to_the_agent(world_host, tmp_path):
    asked: list[str] = []

    def terminal(question: str) -> str:
        asked.append(question)
        return "" if "port" in question else "no"

    seen: dict = {}
    outcome = await drive(_asks_then_acts_then_asks_again(seen), world_host, tmp_path, ask_once=True)
    assert outcome.status == "completed"  # no terminal given to drive(): nobody answers
    assert all("no answer" in a for a in seen["answers"]["answers"].values())

    from specops.agent.run import RunOptions, run_goal_async

    seen = {}
    outcome = await run_goal_async(
        "deploy SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=world_host,
        policy=_asks_then_acts_then_asks_again(seen),
        run_dir=tmp_path / "terminal",
        options=RunOptions(fsync=False, ask_once=True),
        ask=terminal,
    )
    assert asked == QUESTIONS
    answers = seen["answers"]["answers"]
    assert answers[QUESTIONS[0]] == "no" and "decide yourself" in answers[QUESTIONS[1]]
    assert {a.by for a in events(outcome, "approval")} == {"terminal"}


async def test_read_only_checks_may_come_first_and_the_first_change_closes_the_round(world_host, tmp_path):
    seen: dict = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("todowrite", PLAN)
        if n == 1:
            return call("check_disk", CHECK)  # looks only: the round is still open
        if n == 2:
            return call("list_freeable")
        if n == 3:
            return call("free_space", {"ids": ["dir:/nowhere"], "dry_run": True})  # a dry run changes nothing
        if n == 4:
            return call(
                "start_download",
                {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target_dir": "~/models/d", "method": "library"},
            )  # the first change
        if n == 5:
            return call("ask_user", {"questions": ["Too late?"]})
        seen["reply"] = last_request(messages).parts[0].content
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path, ask_once=True)
    assert seen["reply"]["error"]["kind"] == "questions_closed" and "first change" in seen["reply"]["error"]["what"]
    assert events(outcome, "approval") == []

    seen.clear()

    def checks_then_asks(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("host_facts")
        if n == 1:
            return call("check_disk", CHECK)
        if n == 2:
            return call("ask_user", {"questions": ["Which port?"]})
        seen["reply"] = last_request(messages).parts[0].content
        return finish()

    await drive(FunctionModel(checks_then_asks), world_host, tmp_path / "second", ask_once=True)
    assert "error" not in seen["reply"] and seen["reply"]["answers"]


QWEN = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"


def _asks_to_delete(seen: dict, delete: list[str]):
    """Checks the disk and lists what could go, asks to delete, then frees the cache it may now delete."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("check_disk", CHECK)
        if n == 1:
            return call("list_freeable")
        if n == 2:
            seen["listing"] = last_request(messages).parts[0].content
            return call("ask_user", {"questions": ["Which port?"], "delete": delete})
        if n == 3:
            seen["answers"] = last_request(messages).parts[0].content
            if "error" in seen["answers"]:
                return call("ask_user", {"delete": [f"cache:{QWEN}"]})  # the round stayed open
            return call("list_freeable")
        if n == 4 and "after" not in seen and "error" not in seen["answers"]:
            seen["after"] = last_request(messages).parts[0].content
            [repo] = [s for s in seen["after"]["sets"] if s["id"] == f"repo:{QWEN}"]
            return call("free_space", {"ids": [repo["id"]], "dry_run": False})
        if "freed" not in seen and "after" in seen:
            seen["freed"] = last_request(messages).parts[0].content
        return finish()

    return FunctionModel(respond)


@pytest.mark.parametrize("answer", ["yes, delete it", "no"])
async def test_a_deletion_approved_in_the_round_is_one_free_space_honours(tmp_path, answer):
    from ..tools.worlds import start_world

    answers = tmp_path / "answers.yaml"
    answers.write_text(f"Which port?: '30001'\ncache:{QWEN}: {answer}\n")
    seen: dict = {}
    with start_world(time_scale=100) as world:
        cache = world.layout.home / ".cache/huggingface/hub" / f"models--{QWEN.replace('/', '--')}"
        outcome = await drive(
            _asks_to_delete(seen, [f"cache:{QWEN}"]), world.host_spec, tmp_path, ask_once=True, answers_file=answers
        )
        gone = not cache.exists()
    deletion = seen["answers"]["deletions"][f"cache:{QWEN}"]
    # The user is asked with the tool's own figures: what it is and what it frees together.
    assert (
        QWEN in deletion["question"] and "frees 22" in deletion["question"] and "did not create" in deletion["question"]
    )
    approvals = [a for a in events(outcome, "approval") if QWEN in a.asked]
    assert approvals[0].by == "answers file" and approvals[0].approved is (answer != "no")
    if answer == "no":
        assert not deletion["approved"] and not gone
        assert "deleted" not in seen["freed"] and len(seen["freed"]["refused"]) == 2
    else:
        assert deletion["approved"] and gone
        assert all(
            i.get("approved_by", "").startswith("the user (answers file")
            for i in seen["after"]["items"]
            if i["id"].startswith("cache:")
        )
        assert "answers file" in seen["freed"]["summary"]


async def test_a_deletion_that_names_nothing_keeps_the_round_open_and_the_terminal_answers_yes_or_no(tmp_path):
    from specops.agent.run import RunOptions, run_goal_async

    from ..tools.worlds import start_world

    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return False

    seen: dict = {}
    with start_world(time_scale=100) as world:
        outcome = await run_goal_async(
            "deploy SubSir/Kimi-K2.6-DFlash-tmp-long",
            host=world.host_spec,
            policy=_asks_to_delete(seen, ["cache:Nobody/Nothing"]),
            run_dir=tmp_path / "run",
            options=RunOptions(fsync=False, ask_once=True),
            ask=lambda q: "30001",
            ask_yes_no=confirm,
        )
    assert (
        seen["answers"]["error"]["kind"] == "invalid_input"
        and "matches no list_freeable" in seen["answers"]["error"]["what"]
    )
    # The second ask went through: the terminal's yes/no was asked with the figures, and its no kept the cache.
    assert len(asked) == 1 and QWEN in asked[0] and "(yes/no)" in asked[0]
    [approval] = [a for a in events(outcome, "approval") if QWEN in a.asked]
    assert approval.by == "terminal" and approval.approved is False


async def test_without_ask_once_the_model_is_not_offered_the_tool(world_host, tmp_path):
    seen: dict = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["tools"] = [t.name for t in info.function_tools]
        return finish()

    await drive(FunctionModel(respond), world_host, tmp_path)
    assert "ask_user" not in seen["tools"] and "todowrite" in seen["tools"]
