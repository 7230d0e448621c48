"""The typed errors tools raise: what happened, and what can be done about it.

A tool never answers a failure with a bare exception or an exit code: it raises
a ToolError subclass whose `what` says what happened (with the facts: sizes,
paths, the log line) and whose `remedy` says what the caller can do next. The
agent hands `record()` to the model; decisions (free space or change directory?
retry without CUDA graphs?) stay with the agent.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class ErrorKind(StrEnum):
    """Every kind of tool failure: the stable names graders and policies match on (a record carries the value).

    The tools' own (each ToolError subclass sets one), and the harness's:
    - tool_error: a ToolError subclass that names no kind of its own
    - invalid_arguments: the model's arguments failed validation, before the tool ran
    - unexpected_error: a tool failed in a way it does not type
    - todo_rule: a todowrite the plan's rules refuse
    - repeated_failure: the same failing call a third time, refused by the loop guard
    - questions_closed: ask_user after the one round of questions
    - retry_prompt: pydantic-ai asked the model to try again
    - unknown_tool: the model called a tool the run does not have
    - unknown: a kind this version does not know (a recording from another)
    - budget_spent: a measuring tool called after the job's host-time budget was spent, refused by the loop
    """

    ACCEPTANCE_REQUESTS_FAILED = "acceptance_requests_failed"
    BENCH_SERVING_UNAVAILABLE = "bench_serving_unavailable"
    BENCHMARK_CLIENT_FAILED = "benchmark_client_failed"
    BUDGET_SPENT = "budget_spent"
    CONFIG_NOT_FOUND = "config_not_found"
    DATASET_UNAVAILABLE = "dataset_unavailable"
    DATASET_UNREADABLE = "dataset_unreadable"
    GATEWAY_FAILED = "gateway_failed"
    GATEWAY_NOT_INSTALLED = "gateway_not_installed"
    HOST_COMMAND_FAILED = "host_command_failed"
    HOST_UNAVAILABLE = "host_unavailable"
    HUB_UNAVAILABLE = "hub_unavailable"
    INCOMPATIBLE_DRAFTER = "incompatible_drafter"
    INVALID_ARGUMENTS = "invalid_arguments"
    INVALID_HOST_GROUP = "invalid_host_group"
    INVALID_INPUT = "invalid_input"
    LAUNCH_FAILED = "launch_failed"
    NO_CHAT_TEMPLATE = "no_chat_template"
    NOT_A_DRAFTER = "not_a_drafter"
    NOT_SPECULATIVE = "not_speculative"
    PATH_OUTSIDE_ALLOWED_ROOTS = "path_outside_allowed_roots"
    QUESTIONS_CLOSED = "questions_closed"
    REPEATED_FAILURE = "repeated_failure"
    REPO_GATED = "repo_gated"
    REPO_NOT_FOUND = "repo_not_found"
    RETRY_PROMPT = "retry_prompt"
    REVISION_NOT_FOUND = "revision_not_found"
    SERVER_NOT_OURS = "server_not_ours"
    SERVER_NOT_REACHABLE = "server_not_reachable"
    SGLANG_NOT_INSTALLED = "sglang_not_installed"
    SGLANG_RULE_VIOLATION = "sglang_rule_violation"
    SGLANG_TOO_OLD = "sglang_too_old"
    SHELL_NEEDS_PERMISSION = "shell_needs_permission"
    SHELL_REFUSED = "shell_refused"
    STOP_INCOMPLETE = "stop_incomplete"
    TODO_RULE = "todo_rule"
    TOOL_ERROR = "tool_error"
    UNEXPECTED_ERROR = "unexpected_error"
    UNKNOWN = "unknown"
    UNKNOWN_TOOL = "unknown_tool"
    UNKNOWN_HANDLE = "unknown_handle"
    UNSUPPORTED_FLAGS = "unsupported_flags"


class ToolErrorRecord(BaseModel):
    """A ToolError as data: for the model, the transcript and the report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    what: str
    remedy: str
    details: dict[str, Any] = {}


class ToolError(Exception):
    """Base of every tool failure. Subclasses set `kind`, a stable name graders and policies match on."""

    kind: ClassVar[ErrorKind] = ErrorKind.TOOL_ERROR

    def __init__(self, what: str, *, remedy: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{what} — {remedy}")
        self.what = what
        self.remedy = remedy
        self.details = details or {}

    def record(self) -> ToolErrorRecord:
        return ToolErrorRecord(kind=self.kind, what=self.what, remedy=self.remedy, details=self.details)


class InvalidToolInput(ToolError):
    """The arguments were refused before anything ran on the host."""

    kind = ErrorKind.INVALID_INPUT


class PathOutsideAllowedRoots(InvalidToolInput):
    """A path the tool would write or delete lies outside the roots the run may touch."""

    kind = ErrorKind.PATH_OUTSIDE_ALLOWED_ROOTS


class HostCommandFailed(ToolError):
    """A command the tool needed failed in a way the tool does not recognise; details carry its output."""

    kind = ErrorKind.HOST_COMMAND_FAILED


class HostUnavailable(ToolError):
    """The host could not be reached, or the connection broke and could not be restored."""

    kind = ErrorKind.HOST_UNAVAILABLE
