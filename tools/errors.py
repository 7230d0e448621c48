"""The typed errors tools raise: what happened, and what can be done about it.

A tool never answers a failure with a bare exception or an exit code: it raises
a ToolError subclass whose `what` says what happened (with the facts: sizes,
paths, the log line) and whose `remedy` says what the caller can do next. The
agent hands `record()` to the model; decisions (free space or change directory?
retry without CUDA graphs?) stay with the agent.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class ToolErrorRecord(BaseModel):
    """A ToolError as data: for the model, the transcript and the report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    what: str
    remedy: str
    details: dict[str, Any] = {}


class ToolError(Exception):
    """Base of every tool failure. Subclasses set `kind`, a stable name graders and policies match on."""

    kind: ClassVar[str] = "tool_error"

    def __init__(self, what: str, *, remedy: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{what} — {remedy}")
        self.what = what
        self.remedy = remedy
        self.details = details or {}

    def record(self) -> ToolErrorRecord:
        return ToolErrorRecord(kind=self.kind, what=self.what, remedy=self.remedy, details=self.details)


class InvalidToolInput(ToolError):
    """The arguments were refused before anything ran on the host."""

    kind = "invalid_input"


class PathOutsideAllowedRoots(InvalidToolInput):
    """A path the tool would write or delete lies outside the roots the run may touch."""

    kind = "path_outside_allowed_roots"


class HostCommandFailed(ToolError):
    """A command the tool needed failed in a way the tool does not recognise; details carry its output."""

    kind = "host_command_failed"


class HostUnavailable(ToolError):
    """The host could not be reached, or the connection broke and could not be restored."""

    kind = "host_unavailable"
