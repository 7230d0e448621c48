"""The plan: todowrite's rules, its events, and the plan shown to the model on every turn."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from specops.agent.todo import Todo, TodoList, TodoRuleBroken, check_rules

from .scripted import call, drive, events, finish, last_request, turn, world_host  # noqa: F401

pytestmark = pytest.mark.timeout(60)


def todo(id: str, status: str = "pending", **kw) -> Todo:
    return Todo(id=id, content=f"step {id}", status=status, **kw)


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ([todo("a"), todo("a")], "unique"),
        ([todo("a", "in_progress"), todo("b", "in_progress")], "at most one"),
        ([todo("a", "cancelled")], "needs a reason"),
        ([todo("a", "cancelled", reason="  ")], "needs a reason"),
    ],
)
def test_rules_refuse_bad_plans(todos, message):
    with pytest.raises(TodoRuleBroken, match=message):
        check_rules(todos)


def test_a_good_plan_replaces_the_old_one_whole():
    plan = TodoList()
    plan.write([todo("a", "in_progress"), todo("b")])
    result = plan.write([todo("a", "completed"), todo("c", "cancelled", reason="not needed")])
    assert [t.id for t in plan.items] == ["a", "c"]
    assert {(d.id, d.change) for d in result.changes} == {("a", "status"), ("c", "added"), ("b", "removed")}
    text = plan.render()
    assert "[x] a" in text and "[-] c" in text and "not needed" in text and "b" not in text.split("\n", 1)[1]


async def test_the_current_plan_is_in_the_instructions_every_turn(world_host, tmp_path):
    shown: list[str] = []
    plans = [
        {"todos": [{"id": "dl", "content": "Download the drafter", "status": "in_progress", "priority": "high"}]},
        {"todos": [{"id": "dl", "content": "Download the drafter", "status": "completed", "priority": "high"},
                   {"id": "bench", "content": "Benchmark", "status": "cancelled", "reason": "no GPU time"}]},
    ]  # fmt: skip

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        shown.append(last_request(messages).instructions or "")
        n = turn(messages)
        return call("todowrite", plans[n]) if n < len(plans) else finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert outcome.status == "completed"
    assert "none yet" in shown[0]
    assert "[>] dl [high] Download the drafter" in shown[1]
    assert "[x] dl" in shown[2] and "[-] bench" in shown[2] and "no GPU time" in shown[2]
    changes = events(outcome, "todo_change")
    assert [[t.status for t in c.todos] for c in changes] == [["in_progress"], ["completed", "cancelled"]]
    assert any(n.text == "todo bench cancelled: no GPU time" for n in events(outcome, "note"))


async def test_a_plan_breaking_the_rules_is_sent_back_to_fix(world_host, tmp_path):
    replies = []
    bad = {"todos": [{"id": "a", "content": "x", "status": "in_progress"}, {"id": "b", "content": "y", "status": "in_progress"}]}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = turn(messages)
        if n == 0:
            return call("todowrite", bad)
        replies.append(str(last_request(messages).parts[0].content))
        return finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert "at most one todo may be in_progress" in replies[0]
    assert events(outcome, "todo_change") == []
    assert [r.what for r in events(outcome, "retry")] == ["tool todowrite"]
