"""What every tool call of a run gets through pydantic-ai's RunContext: the run's shared state."""

from __future__ import annotations

from dataclasses import dataclass, field

from specops.tools.context import ToolContext
from specops.transcripts import Recorder

from .approval import ApprovalPolicy
from .budget import HostTimeTally, WallClock
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
    host_budget_s: float | None = None  # the job's host-time budget (--budget); None: none
    host_time: HostTimeTally = field(default_factory=HostTimeTally)  # the host's time used so far

    @property
    def host_spec(self) -> str:
        return self.tool_context.host.spec
