"""--ask-once: one round of questions before the first action, from a file or the terminal; closed after it."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from .scripted import PLAN, call, drive, events, finish, last_request, turn, world_host  # noqa: F401

pytestmark = pytest.mark.timeout(60)
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
    outcome = await drive(_asks_then_acts_then_asks_again(seen), world_host, tmp_path, ask_once=True, answers_file=answers)
    assert "ask_user" in seen["tools"]
    assert seen["answers"]["ok"] and seen["answers"]["result"]["answers"] == {QUESTIONS[0]: "yes, the Qwen ones",
                                                                              QUESTIONS[1]: "30001"}  # fmt: skip
    assert seen["closed"]["ok"] is False and seen["closed"]["error"]["kind"] == "questions_closed"
    approvals = events(outcome, "approval")
    assert [(a.asked, a.answer, a.by) for a in approvals] == [
        (QUESTIONS[0], "yes, the Qwen ones", "answers file"), (QUESTIONS[1], "30001", "answers file")]


async def test_the_terminal_answers_and_a_blank_answer_leaves_the_decision_to_the_agent(world_host, tmp_path):
    asked: list[str] = []

    def terminal(question: str) -> str:
        asked.append(question)
        return "" if "port" in question else "no"

    seen: dict = {}
    outcome = await drive(_asks_then_acts_then_asks_again(seen), world_host, tmp_path, ask_once=True)
    assert outcome.status == "completed"  # no terminal given to drive(): nobody answers
    assert all("no answer" in a for a in seen["answers"]["result"]["answers"].values())

    from specops.agent.run import RunOptions, run_goal_async

    seen = {}
    outcome = await run_goal_async(
        "deploy SubSir/Kimi-K2.6-DFlash-tmp-long", host=world_host, policy=_asks_then_acts_then_asks_again(seen),
        run_dir=tmp_path / "terminal", options=RunOptions(fsync=False, ask_once=True), ask=terminal,
    )  # fmt: skip
    assert asked == QUESTIONS
    answers = seen["answers"]["result"]["answers"]
    assert answers[QUESTIONS[0]] == "no" and "decide yourself" in answers[QUESTIONS[1]]
    assert {a.by for a in events(outcome, "approval")} == {"terminal"}


async def test_asking_after_the_first_action_is_refused(world_host, tmp_path):
    seen: dict = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("todowrite", PLAN)
        if n == 1:
            return call("check_disk", CHECK)
        if n == 2:
            return call("ask_user", {"questions": ["Too late?"]})
        seen["reply"] = last_request(messages).parts[0].content
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path, ask_once=True)
    assert seen["reply"]["error"]["kind"] == "questions_closed"
    assert events(outcome, "approval") == []


async def test_without_ask_once_the_model_is_not_offered_the_tool(world_host, tmp_path):
    seen: dict = {}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["tools"] = [t.name for t in info.function_tools]
        return finish()

    await drive(FunctionModel(respond), world_host, tmp_path)
    assert "ask_user" not in seen["tools"] and "todowrite" in seen["tools"]
