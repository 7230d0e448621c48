"""What every tool call of a run gets through pydantic-ai's RunContext: the run's shared state."""

from __future__ import annotations

from dataclasses import dataclass, field

from specops.tools.context import ToolContext
from specops.transcripts import Recorder

from .approval import ApprovalPolicy
from .budget import WallClock
from .guard import RepeatGuard
from .todo import TodoList
from .tool_runner import LiveTools, ToolRunner


@dataclass
class AgentDeps:
    tool_context: ToolContext
    recorder: Recorder
    todos: TodoList
    approvals: ApprovalPolicy
    guard: RepeatGuard
    clock: WallClock
    tools: ToolRunner = field(default_factory=LiveTools)  # how calls are carried out: live, or served by replay

    @property
    def host_spec(self) -> str:
        return self.tool_context.host.spec
