"""The plan: a todo list in opencode's todowrite style, replaced whole by the model, shown to it every turn.

A write is the whole list (`todos`), or, once there is one, changes of status
by id (`updates`): a step's progress costs a line, not the plan again.

Rules, checked on every write (a broken one is sent back to the model to fix):
ids are unique, at most one item is in progress, and a cancelled item says why.
Each accepted write is a todo_change event; the plan's state (ids and
statuses) ends every request the model is sent (plan_reminder.py), so the plan
it sees is the plan the run holds, not what it remembers writing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, model_validator

from specops.transcripts import NoteEvent, TodoDiff, TodoItem, diff_todos
from specops.transcripts.todos import TodoPriority, TodoStatus

if TYPE_CHECKING:
    from specops.transcripts import Recorder

_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}


class Todo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64)
    content: str = Field(min_length=1, max_length=500, description="The step, in a few words")
    status: TodoStatus
    priority: TodoPriority = "medium"
    reason: str | None = Field(default=None, max_length=500, description="Why it was cancelled (required then)")


class TodoUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64)
    status: TodoStatus
    reason: str | None = Field(default=None, max_length=500)


class TodoWriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[Todo] | None = Field(default=None, description="The whole plan; replaces the previous one")
    updates: list[TodoUpdate] | None = Field(
        default=None, description="Instead of todos: new statuses of items by id; the rest stays as it is"
    )

    @model_validator(mode="after")
    def _one_form(self) -> TodoWriteArgs:
        if (self.todos is None) == (self.updates is None):
            raise ValueError("give either todos (the whole plan) or updates (statuses by id), not both or neither")
        return self


class TodoWriteResult(BaseModel):
    todos: list[Todo]
    changes: list[TodoDiff]
    summary: str


def todo_view(result: TodoWriteResult) -> str:
    """What the model is shown of a write: how much is done, and how many items a whole plan added or dropped.
    (The statuses it set it knows, and the plan itself travels at the end of every request.)"""
    others: dict[str, int] = {}  # a whole new plan is "12 added", not twelve ids
    for c in result.changes:
        if c.change != "status":
            others[c.change] = others.get(c.change, 0) + 1
    words = {"content": "reworded", "priority": "reprioritised"}
    changed = ", ".join(f"{n} {words.get(change, change)}" for change, n in others.items())
    return result.summary + (f"; {changed}" if changed else "")


class TodoRuleBroken(ValueError):
    """A todowrite the rules refuse; the message says which rule and which items."""


def check_rules(todos: list[Todo]) -> None:
    ids = [t.id for t in todos]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise TodoRuleBroken(f"todo ids must be unique; repeated: {', '.join(duplicates)}")
    running = [t.id for t in todos if t.status == "in_progress"]
    if len(running) > 1:
        raise TodoRuleBroken(f"at most one todo may be in_progress; these are: {', '.join(running)}")
    unexplained = [t.id for t in todos if t.status == "cancelled" and not (t.reason or "").strip()]
    if unexplained:
        raise TodoRuleBroken(f"a cancelled todo needs a reason; missing for: {', '.join(unexplained)}")


class TodoList:
    """The run's current plan."""

    def __init__(self, recorder: Recorder | None = None) -> None:
        self._items: list[Todo] = []
        self._recorder = recorder

    @property
    def items(self) -> list[Todo]:
        return list(self._items)

    def apply(self, args: TodoWriteArgs) -> TodoWriteResult:
        """A todowrite: the whole list, or status updates to the current one (an unknown id breaks the rules)."""
        if args.todos is not None:
            return self.write(args.todos)
        current = {t.id: t for t in self._items}
        unknown = [u.id for u in args.updates or [] if u.id not in current]
        if unknown:
            raise TodoRuleBroken(
                f"no such todo ids: {', '.join(unknown)}; write the whole plan with todos to add items"
            )
        for update in args.updates or []:
            current[update.id] = current[update.id].model_copy(
                update={"status": update.status, "reason": update.reason}
            )
        return self.write(list(current.values()))

    def write(self, todos: list[Todo]) -> TodoWriteResult:
        """Replace the plan after checking the rules (TodoRuleBroken); records the change."""
        check_rules(todos)
        before = self._records(self._items)
        after = self._records(todos)
        changes = diff_todos(before, after)
        previous = {t.id: t for t in self._items}
        self._items = list(todos)
        if self._recorder is not None:
            self._recorder.todo_change(after, previous=before)
            # The transcript's todo record has no reason field: a cancellation's reason goes in a note beside it.
            for todo in todos:
                was = previous.get(todo.id)
                if todo.status == "cancelled" and (was is None or was.status != "cancelled"):
                    self._recorder.record(NoteEvent, text=f"todo {todo.id} cancelled: {todo.reason}")
        done = sum(t.status == "completed" for t in todos)
        return TodoWriteResult(todos=list(todos), changes=changes, summary=f"{done}/{len(todos)} completed")

    def reminder(self) -> str:
        """The plan at the end of a request: each id with its status, the words of the step in progress only
        (the others' words are in the todowrite that wrote them)."""
        if not self._items:
            return "Current plan: none yet. Write it with todowrite before any other tool."
        marks = []
        for t in self._items:
            words = f" {t.content}" if t.status == "in_progress" else ""
            marks.append(f"{_MARK[t.status]} {t.id}{words}")
        return "Current plan (update with todowrite's `updates`): " + "; ".join(marks)

    def as_json(self) -> list[dict[str, object]]:
        return [t.model_dump(mode="json") for t in self._items]

    @staticmethod
    def _records(todos: list[Todo]) -> list[TodoItem]:
        return [TodoItem(id=t.id, content=t.content, status=t.status, priority=t.priority) for t in todos]
