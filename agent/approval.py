"""Approval of deletions: what the user allowed this run to delete, and nothing more.

The rule (stated once in prompts/system.md, enforced here and by the tools in
tools/space.py): without the user's approval specops deletes only what specops
created, this run (the toolset records what a tool made) or an earlier run (the
host's ledger, tools/download/ledger.py), and nothing a running process uses.
Anything else, another model's cache above all, goes only on the user's
approval, given in one of two ways, both before the first change:

- `--allow-delete SPEC` on the command line (repeatable): `cache:ORG/NAME`
  (every revision of that cached repo), `cache:ORG/NAME@REV`, or a path
  (`dir:PATH` or PATH: everything under it);
- a yes in the one round of questions (`--ask-once`, agent/questions.py): the
  `delete` entries of ask_user, answered on the terminal or from the answers
  file. The round may come after read-only checks (host facts, disk,
  list_freeable) and closes at the first change (`changed`).

This is the harness's side. Before list_freeable and free_space run, the policy
hands them the user's approvals (`user_approvals`, replacing whatever the caller
put there), keeps only the approved paths the user approved and the created
paths this run created (and adds those it saw created). A deletion on the
user's approval is an approval event by who gave it (`--allow-delete`, the
round's `terminal` or `answers file`); a path the caller called approved without
the user's word is refused and recorded as such. Nothing is asked mid-run.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from specops.tools.context import ToolContext
from specops.tools.registry import REGISTRY
from specops.tools.space import FreeSpaceArgs, ListFreeableArgs, UserApproval, approval_covers
from specops.transcripts import ApprovalEvent, NoteEvent, Recorder

AskYesNo = Callable[[str], bool]

# Tools whose arguments name what may be deleted; the policy reviews them.
DELETING_TOOLS = frozenset({"free_space"})
# Tools that class candidates for deletion: they get the user's approvals and this run's created paths.
SPACE_TOOLS = frozenset({"list_freeable", "free_space"})
CLI_FLAG = "--allow-delete"
_CACHE_SPEC = re.compile(r"cache:[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9._/-]+)?")
_PATH_SPEC = re.compile(r"(dir:)?[A-Za-z0-9._/~+@%=:,-]+")


def check_delete_spec(spec: str) -> str:
    """An --allow-delete value (or an --ask-once `delete` entry) as given, or ValueError saying the accepted forms."""
    spec = spec.strip()
    if spec.startswith("cache:"):
        if _CACHE_SPEC.fullmatch(spec):
            return spec
    elif _PATH_SPEC.fullmatch(spec) and posixpath.normpath(spec.removeprefix("dir:") or ".") not in ("/", "~", "."):
        return spec
    raise ValueError(
        f"{spec!r}: give cache:ORG/NAME (every revision of that cached repo), cache:ORG/NAME@REVISION, "
        "or a path under which everything may go (not / or the home itself)"
    )


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"


def goal_needs_of(tool: str, args: BaseModel) -> list[str]:
    """The models a call shows the goal needs, as host paths or repo ids: the target and drafter it reads, the
    drafter it checks room for or downloads (and where), the models it serves. The space tools never offer these for deletion."""
    given = args.model_dump()
    if tool == "read_drafter_config":
        sources = [given.get("target") or {}, given.get("drafter") or {}]
        found = [source.get("path") or source.get("repo_id") for source in sources]
    elif tool in ("check_disk", "start_download"):  # the drafter, and where it goes
        found = [given.get("repo_id"), given.get("target") or given.get("target_dir")]
    elif tool == "launch_server":
        config = given.get("config") or {}
        found = [config.get("model_path"), config.get("drafter_path")]
    else:
        return []
    return [str(f) for f in found if f]


@dataclass
class ApprovalPolicy:
    recorder: Recorder
    allow_delete: Sequence[str] = ()
    ask: AskYesNo | None = None  # the terminal's yes/no, for the --ask-once round's deletion questions only
    created_paths: set[str] = field(default_factory=set)
    goal_needs: set[str] = field(default_factory=set)  # what the run's calls show the goal needs (goal_needs_of)
    changed: bool = False  # a change has been made (or tried): the round of questions is over
    granted: list[UserApproval] = field(default_factory=list)

    def __post_init__(self) -> None:
        given = []
        for spec in self.allow_delete:
            try:
                given.append(UserApproval(spec=check_delete_spec(spec), by=CLI_FLAG))
            except (
                ValueError
            ) as exc:  # the CLI refuses these; from elsewhere (a scenario, a recording) it approves nothing
                self.recorder.record(NoteEvent, text=f"{CLI_FLAG} ignored: {exc}")
        self.granted = given + self.granted

    def grant(self, spec: str, by: str) -> UserApproval:
        """The user approved deleting `spec` (in the --ask-once round)."""
        approval = UserApproval(spec=check_delete_spec(spec), by=by)
        self.granted.append(approval)
        return approval

    def review(self, tool: str, args: BaseModel, ctx: ToolContext) -> BaseModel:
        """The arguments the call may run with: the user's approvals handed in, nothing the user did not allow."""
        if not self.changed and self._changes(tool, args, ctx):
            self.changed = True
        self.goal_needs.update(goal_needs_of(tool, args))
        if tool not in SPACE_TOOLS:
            return args
        assert isinstance(args, ListFreeableArgs | FreeSpaceArgs), "the registry's arguments of the space tools"
        deleting = tool in DELETING_TOOLS and not getattr(args, "dry_run", True)
        update: dict[str, Any] = {
            "user_approvals": list(self.granted),
            "created_paths": self._created(args, ctx, deleting),
            "goal_needs": sorted(self.goal_needs),
        }
        if tool in DELETING_TOOLS:
            assert isinstance(args, FreeSpaceArgs), "free_space's arguments"
            named = list(dict.fromkeys(ctx.resolve(p) for p in args.approved_paths))
            update["approved_paths"] = [p for p in named if self._approved(p, ctx, deleting)]
        return args.model_copy(update=update)

    def deleted(self, tool: str, result: dict[str, Any]) -> None:
        """After a deletion: each item that went on a user's approval, recorded with who approved it. (Read from
        what went, not from the ids asked for: a set's id stands for items the call never named.)"""
        if tool not in DELETING_TOOLS or result.get("dry_run", True):
            return
        by_label = {a.label: a for a in self.granted}
        for item in result.get("deleted") or []:
            approval = by_label.get(item.get("approved_by") or "")
            if approval is not None:  # approved_paths approvals were recorded as they were checked
                self._record(
                    f"delete {item['id']}? specops did not create it.", f"yes: {approval.label}", True, approval.by
                )

    @staticmethod
    def _changes(tool: str, args: BaseModel, ctx: ToolContext) -> bool:
        spec = REGISTRY.get(tool)
        if spec is None or not spec.mutates:
            return False
        if tool in DELETING_TOOLS and getattr(args, "dry_run", True):
            return False
        return not (tool == "shell" and not ctx.shell_may_change)  # the shell only looks unless allowed more

    def _created(self, args: ListFreeableArgs | FreeSpaceArgs, ctx: ToolContext, deleting: bool) -> list[str]:
        kept = []
        for path in args.created_paths:
            resolved = ctx.resolve(path)
            if any(_under(resolved, c) for c in self.created_paths):
                kept.append(resolved)
            elif deleting:
                self.recorder.record(
                    NoteEvent, text=f"free_space: {resolved} was not created by this run; not treated as safe"
                )
        return list(dict.fromkeys([*kept, *sorted(self.created_paths)]))

    def _covering(self, ctx: ToolContext, **candidate: Any) -> UserApproval | None:
        return next((a for a in self.granted if approval_covers(a.spec, ctx, **candidate)), None)

    def _approved(self, path: str, ctx: ToolContext, deleting: bool) -> bool:
        approval = self._covering(ctx, path=path)
        if deleting:
            asked = f"delete {path}? It was not created by specops."
            if approval is not None:
                self._record(asked, f"yes: {approval.label}", True, approval.by)
            else:
                self._record(
                    asked,
                    f"no: the user did not approve it ({CLI_FLAG} PATH, or a yes in the --ask-once round)",
                    False,
                    "non-interactive default",
                )
        return approval is not None

    def _record(self, asked: str, answer: str, approved: bool, by: str) -> None:
        self.recorder.record(ApprovalEvent, asked=asked, answer=answer, approved=approved, by=by)
