"""The one seam where a tool call is carried out: live on the host, or served from a recorded run.

The toolset (toolset.py) does everything around a call (argument checks, the
loop guard, approvals, recording) and hands the call itself to `deps.tools`, a
ToolRunner. `LiveTools` (the default) runs the tool's function on the host in a
thread; replay serves what a transcript recorded (agent/replay/recorded_tools.py);
resume and fork mix both. Nothing else in the loop changes between them.

A runner returns the result as JSON data, or raises ToolError (the typed
failure the model is shown); any other exception is a tool bug and the toolset
records it as one. Either way it leaves the call's time on the host's own clock
in the request's `host_time` slot (read live, or served as recorded), and the
toolset records it with the result: the one place every host call is timed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio.to_thread
from pydantic import BaseModel

from specops.tools.context import ToolContext
from specops.tools.registry import ToolSpec
from specops.transcripts import HostTime

# Tools that create a directory the run may later delete as its own (argument naming it).
CREATING_TOOLS = {"start_download": "target_dir"}


@dataclass
class HostTimeSlot:
    """Where the runner leaves a call's host time: filled on success and failure alike (a raised ToolError carries
    no return value); None when the call never reached the host."""

    value: HostTime | None = None


@dataclass(frozen=True)
class ToolRequest:
    """One call the model made, its arguments validated (and reviewed by the approval policy)."""

    call_id: str
    spec: ToolSpec
    args: BaseModel
    raw_args: dict[str, Any]
    host_time: HostTimeSlot = field(default_factory=HostTimeSlot)

    @property
    def tool(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class ToolDone:
    """A call's successful outcome: its result as JSON, and the directory it created (None if none)."""

    result: dict[str, Any]
    created: str | None = None


class ToolRunner(Protocol):
    async def run(self, request: ToolRequest, context: ToolContext) -> ToolDone:
        """Carry out `request`; raise ToolError for a typed failure."""
        ...


class LiveTools:
    """Runs each tool's function against the run's host (tools are synchronous: in a worker thread)."""

    async def run(self, request: ToolRequest, context: ToolContext) -> ToolDone:
        created = _new_directory(context, request)
        result = await anyio.to_thread.run_sync(_timed_on_host, request, context)
        return ToolDone(result=result.model_dump(mode="json"), created=created)


def _timed_on_host(request: ToolRequest, context: ToolContext) -> BaseModel:
    """The tool's function, between two readings of the host's clock (tools never read it for this themselves)."""
    start = _host_clock(context)
    try:
        return request.spec.fn(context, request.args)
    finally:
        request.host_time.value = HostTime(start=start, end=_host_clock(context))


def _host_clock(context: ToolContext) -> float | None:
    """The host's clock now; None when it cannot be read (the call's host time is then unknown, the call goes on)."""
    try:
        return context.host.clock()
    except Exception:
        return None


def _new_directory(context: ToolContext, request: ToolRequest) -> str | None:
    """The directory this call will create (it does not exist yet), so the run may later delete it as its own."""
    field = CREATING_TOOLS.get(request.tool)
    if field is None:
        return None
    path = context.resolve(str(getattr(request.args, field)))
    try:
        return None if context.host.exists(path) else path
    except Exception:  # cannot tell: it is not treated as ours
        return None
