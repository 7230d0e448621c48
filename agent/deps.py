"""What every tool call of a run gets through pydantic-ai's RunContext: the run's shared state."""

from __future__ import annotations

from dataclasses import dataclass

from specops.tools.context import ToolContext
from specops.transcripts import Recorder

from .approval import ApprovalPolicy
from .budget import WallClock
from .guard import RepeatGuard
from .todo import TodoList


@dataclass
class AgentDeps:
    tool_context: ToolContext
    recorder: Recorder
    todos: TodoList
    approvals: ApprovalPolicy
    guard: RepeatGuard
    clock: WallClock
    acted: bool = False  # a host tool has been called: the --ask-once round is over

    @property
    def host_spec(self) -> str:
        return self.tool_context.host.spec
