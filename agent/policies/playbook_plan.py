"""The playbook's todo plan: the items for the goal's intents, one in progress at a time, each closed with a reason.

The plan changes as the pipeline moves (start, complete, cancel); the pipeline
attaches a todowrite call beside its next tool call, so the plan shown to a
reader is always the one the next action belongs to. The first write is the
whole list; later ones are status updates of the items that changed, as the
tool guidance asks of a model (the whole list again only when items were added).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .playbook_history import Call

Status = Literal["pending", "in_progress", "completed", "cancelled"]
TODO_TOOL = "todowrite"


@dataclass
class _Item:
    id: str
    content: str
    priority: str = "high"
    status: Status = "pending"
    reason: str | None = None


@dataclass
class Plan:
    items: list[_Item] = field(default_factory=list)
    dirty: bool = True
    written: dict[str, tuple[Status, str | None]] | None = None  # id -> (status, reason) as last written; None: never

    def add(self, id: str, content: str, priority: str = "high") -> None:
        self.items.append(_Item(id, content, priority))
        self.dirty = True

    def replace(self, ids: tuple[str, ...], id: str, content: str, priority: str = "high") -> None:
        """Put one item `id` where the first of `ids` is, and drop the rest of them (a policy that does those steps
        its own way: a search does the baseline and the speculative sweeps as its trials)."""
        at = next((n for n, item in enumerate(self.items) if item.id in ids), len(self.items))
        kept = [item for item in self.items if item.id not in ids]
        kept.insert(at, _Item(id, content, priority))
        self.items = kept
        self.dirty = True

    def _item(self, id: str) -> _Item:
        return next(i for i in self.items if i.id == id)

    def has(self, id: str) -> bool:
        return any(i.id == id for i in self.items)

    def start(self, id: str) -> None:
        """Mark `id` in progress; whatever was in progress is done (the pipeline moves one step at a time)."""
        if not self.has(id):
            return
        for item in self.items:
            if item.status == "in_progress" and item.id != id:
                item.status = "completed"
        item = self._item(id)
        if item.status != "in_progress":
            item.status = "in_progress"
            self.dirty = True

    def complete(self, id: str) -> None:
        if self.has(id) and self._item(id).status in ("pending", "in_progress"):
            self._item(id).status = "completed"
            self.dirty = True

    def cancel(self, id: str, reason: str) -> None:
        if self.has(id) and self._item(id).status in ("pending", "in_progress"):
            item = self._item(id)
            item.status, item.reason = "cancelled", reason[:480]
            self.dirty = True

    def close(self, reason: str) -> None:
        """At the end: what is in progress is done, what never started is cancelled with `reason`."""
        for item in self.items:
            if item.status == "in_progress":
                self.complete(item.id)
            elif item.status == "pending":
                self.cancel(item.id, reason)

    def write_call(self) -> Call:
        self.dirty = False
        now = {item.id: (item.status, item.reason) for item in self.items}
        written, self.written = self.written, now
        if written is not None and list(written) == list(now):
            updates = []
            for item_id, (status, reason) in now.items():
                if written[item_id] != (status, reason):
                    updates.append({"id": item_id, "status": status, **({"reason": reason} if reason else {})})
            if updates:
                return Call(TODO_TOOL, {"updates": updates})
        todos = []
        for item in self.items:
            todo = {"id": item.id, "content": item.content, "status": item.status, "priority": item.priority}
            if item.reason:
                todo["reason"] = item.reason
            todos.append(todo)
        return Call(TODO_TOOL, {"todos": todos})
