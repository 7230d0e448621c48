"""The plan: todowrite's rules, its events, and the plan shown to the model on every turn."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from specops.agent.plan_reminder import PLAN_MARK
from specops.agent.todo import Todo, TodoList, TodoRuleBroken, TodoWriteArgs, check_rules, todo_view

from ..jobs import job_timeout
from .scripted import call, drive, events, finish, last_request, turn, world_host  # noqa: F401

pytestmark = [job_timeout(), pytest.mark.slow]


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
    text = plan.reminder()
    assert "[x] a;" in text and text.endswith("[-] c") and " b" not in text
    plan.write([todo("a", "completed"), todo("c", "in_progress")])
    assert plan.reminder().endswith("[>] c step c")  # the words of the step in progress only


async def test_the_current_plan_ends_every_request_and_the_instructions_never_change(world_host, tmp_path):
    shown: list[str] = []
    instructions: list[str] = []
    histories: list[list[ModelMessage]] = []
    plans = [
        {"todos": [{"id": "dl", "content": "Download the drafter", "status": "in_progress", "priority": "high"}]},
        {
            "todos": [
                {"id": "dl", "content": "Download the drafter", "status": "completed", "priority": "high"},
                {"id": "bench", "content": "Benchmark", "status": "cancelled", "reason": "no GPU time"},
            ]
        },
    ]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = last_request(messages)
        shown.append(str(last.parts[-1].content))
        instructions.append(last.instructions or "")
        histories.append(list(messages))
        n = turn(messages)
        return call("todowrite", plans[n]) if n < len(plans) else finish()

    outcome = await drive(FunctionModel(respond), world_host, tmp_path)
    assert outcome.status == "completed"
    assert shown[0].startswith(PLAN_MARK) and "none yet" in shown[0]
    assert "[>] dl Download the drafter" in shown[1]
    assert "[x] dl" in shown[2] and "[-] bench" in shown[2] and "Download" not in shown[2]
    assert len(set(instructions)) == 1 and "Current plan" not in instructions[0]
    # Only the newest request carries the plan: what came before is sent again as it was.
    for earlier, later in zip(histories, histories[1:], strict=False):
        kept = later[: len(earlier) - 1]
        assert [m.parts for m in kept] == [m.parts for m in earlier[:-1]]
        assert not any(PLAN_MARK in str(p.content) for m in kept for p in m.parts if p.part_kind == "user-prompt")
    changes = events(outcome, "todo_change")
    assert [[t.status for t in c.todos] for c in changes] == [["in_progress"], ["completed", "cancelled"]]
    assert any(n.text == "todo bench cancelled: no GPU time" for n in events(outcome, "note"))


async def test_a_plan_breaking_the_rules_is_sent_back_to_fix(world_host, tmp_path):
    replies = []
    bad = {
        "todos": [
            {"id": "a", "content": "x", "status": "in_progress"},
            {"id": "b", "content": "y", "status": "in_progress"},
        ]
    }

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


def test_updates_change_statuses_by_id_and_keep_the_rest():
    plan = TodoList()
    plan.apply(
        TodoWriteArgs(
            todos=[Todo(id="a", content="x", status="in_progress"), Todo(id="b", content="y", status="pending")]
        )
    )
    result = plan.apply(
        TodoWriteArgs(updates=[{"id": "a", "status": "completed"}, {"id": "b", "status": "in_progress"}])
    )
    assert [(t.id, t.content, t.status) for t in plan.items] == [("a", "x", "completed"), ("b", "y", "in_progress")]
    assert todo_view(result) == "1/2 completed"  # the statuses it set, it knows
    whole = TodoList().apply(
        TodoWriteArgs(todos=[Todo(id="a", content="x", status="pending"), Todo(id="b", content="y", status="pending")])
    )
    assert todo_view(whole) == "0/2 completed; 2 added"
    with pytest.raises(TodoRuleBroken, match="no such todo ids: z"):
        plan.apply(TodoWriteArgs(updates=[{"id": "z", "status": "completed"}]))
    with pytest.raises(TodoRuleBroken, match="needs a reason"):
        plan.apply(TodoWriteArgs(updates=[{"id": "b", "status": "cancelled"}]))
    assert plan.items[1].status == "in_progress"  # a refused write changes nothing


def test_a_write_is_the_whole_plan_or_updates_never_both():
    with pytest.raises(ValueError, match="either todos"):
        TodoWriteArgs(todos=[], updates=[])
    with pytest.raises(ValueError, match="either todos"):
        TodoWriteArgs()
