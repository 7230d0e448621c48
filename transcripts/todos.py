"""The todo plan as a transcript stores it: the full list after each change, and what changed.

The fields follow opencode's todowrite (content, status, priority, id). The
agent's todo tool owns the plan; this is its record, so that `show` can draw
the timeline and `resume` can tell which items are already done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from .records import RECORD_CONFIG

TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
TodoPriority = Literal["high", "medium", "low"]


class TodoItem(BaseModel):
    model_config = RECORD_CONFIG

    id: str
    content: str
    status: TodoStatus
    priority: TodoPriority = "medium"


class TodoDiff(BaseModel):
    """One difference between two plans: an item added or removed, or one field of it changed."""

    model_config = RECORD_CONFIG

    id: str
    change: Literal["added", "removed", "status", "content", "priority"]
    before: str | None = None
    after: str | None = None


def diff_todos(before: Sequence[TodoItem], after: Sequence[TodoItem]) -> list[TodoDiff]:
    """What turned `before` into `after`, item by item in `after`'s order, removals last."""
    old = {item.id: item for item in before}
    new_ids = {item.id for item in after}
    diffs: list[TodoDiff] = []
    for item in after:
        previous = old.get(item.id)
        if previous is None:
            diffs.append(TodoDiff(id=item.id, change="added", after=item.status))
            continue
        for field in ("status", "content", "priority"):
            was, now = getattr(previous, field), getattr(item, field)
            if was != now:
                diffs.append(TodoDiff(id=item.id, change=field, before=was, after=now))
    diffs.extend(
        TodoDiff(id=item.id, change="removed", before=item.status) for item in before if item.id not in new_ids
    )
    return diffs
