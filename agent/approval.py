"""Approval of destructive actions: what the user allowed this run to delete, and nothing more.

Deleting is the one action a model must not authorise itself. free_space
deletes `needs_approval` items only when their path is in `approved_paths`,
and anything in `created_paths` counts as safe; both come from the model, so
before a real (not dry-run) free_space this policy keeps only:

- approved paths the user allowed: under a `--allow-delete PATH`, or answered
  yes on the terminal when the run is interactive;
- created paths this run really created (recorded by the toolset when a tool
  made them).

Everything else is removed from the call, and each decision is an approval
event. Non-interactive (the default), an unallowed path is refused without
asking: the model then picks another way or stops and says what it would free.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from specops.tools.context import ToolContext
from specops.transcripts import ApprovalEvent, NoteEvent, Recorder

AskYesNo = Callable[[str], bool]

# Tools whose arguments name what may be deleted; the policy reviews them.
DELETING_TOOLS = frozenset({"free_space"})


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"


@dataclass
class ApprovalPolicy:
    recorder: Recorder
    allow_delete: Sequence[str] = ()
    ask: AskYesNo | None = None  # None: non-interactive, nothing is asked
    created_paths: set[str] = field(default_factory=set)
    _answers: dict[str, bool] = field(default_factory=dict)

    def review(self, tool: str, args: BaseModel, ctx: ToolContext) -> BaseModel:
        """The arguments the call may run with (paths the user did not allow removed)."""
        if tool not in DELETING_TOOLS or getattr(args, "dry_run", True):
            return args
        allowed_roots = [posixpath.normpath(ctx.resolve(p)) for p in self.allow_delete]
        approved = [p for p in args.approved_paths if self._approved(ctx.resolve(p), allowed_roots)]
        created = []
        for path in args.created_paths:
            resolved = ctx.resolve(path)
            if any(_under(resolved, c) for c in self.created_paths):
                created.append(path)
            else:
                self.recorder.record(
                    NoteEvent, text=f"free_space: {resolved} was not created by this run; not treated as safe"
                )
        return args.model_copy(update={"approved_paths": approved, "created_paths": created})

    def _approved(self, path: str, allowed_roots: list[str]) -> bool:
        asked = f"delete {path}? It was not created by this run."
        if any(_under(path, root) for root in allowed_roots):
            self._record(asked, "yes", True, "--allow-delete")
            return True
        if path in self._answers:
            return self._answers[path]
        if self.ask is None:
            self._record(asked, "no (non-interactive: pass --allow-delete PATH to allow it)", False, "non-interactive default")
            self._answers[path] = False
            return False
        answer = bool(self.ask(asked))
        self._answers[path] = answer
        self._record(asked, "yes" if answer else "no", answer, "terminal")
        return answer

    def _record(self, asked: str, answer: str, approved: bool, by: str) -> None:
        self.recorder.record(ApprovalEvent, asked=asked, answer=answer, approved=approved, by=by)
