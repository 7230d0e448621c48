"""Every todo ended completed, or cancelled with a reason; nothing left pending or in progress."""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class TodosClosed(Grader):
    name = "todos_closed"

    def grade(self, evidence: RunEvidence) -> Verdict:
        todos = evidence.final_todos
        if todos is None:
            acted = [s for s in evidence.steps if s.tool != "todowrite"]
            return (
                Verdict.fail(f"{len(acted)} tool calls without a plan") if acted else Verdict.ok("no plan, no action")
            )
        open_ = [t.id for t in todos if t.status not in ("completed", "cancelled")]
        unexplained = [t.id for t in todos if t.status == "cancelled" and not (t.reason or "").strip()]
        if open_ or unexplained:
            return Verdict.fail(f"left open: {open_ or 'none'}; cancelled without a reason: {unexplained or 'none'}")
        return Verdict.ok(f"{len(todos)} todos closed")
