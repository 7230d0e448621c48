"""How the loop writes its transcript: every model request and response, through the run's one recorder.

The hook wraps each model call, so what is recorded is exactly what was sent
(the messages with the instructions rendered for that turn, and the settings)
and exactly what came back, with its duration. Retry prompts pydantic-ai makes
itself (an unknown tool name, an output that failed validation) become retry
events here; the toolset records its own (bad arguments, todo rules). A call to
a tool the run does not have is a failed call like any other: recorded with an
`unknown_tool` error (so the report's failure table has it), and the model is
answered in the one error shape every failure has ({"error": {kind, what, remedy}}).

ObservedRecorder lets the terminal follow the run: each event written is also
handed to the listeners (the live todo list and progress display).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic_ai import RunContext
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

from specops.tools.errors import ErrorKind, ToolErrorRecord
from specops.transcripts import EventBase, Recorder, RetryEvent, ToolCallEvent, ToolResultEvent

from .deps import AgentDeps

Listener = Callable[[EventBase], None]
E = TypeVar("E", bound=EventBase)


class ObservedRecorder(Recorder):
    """A Recorder that also tells listeners about each event it wrote."""

    listeners: list[Listener]

    def record(self, event_type: type[E], /, **fields: Any) -> E:
        event = super().record(event_type, **fields)
        for listener in getattr(self, "listeners", ()):
            try:
                listener(event)
            except Exception:  # a display failing must never stop the run or its transcript
                pass
        return event


def recording_hooks(own_tools: set[str]) -> Hooks[AgentDeps]:
    """The capability that records model traffic; `own_tools` record their own retries."""

    async def model_request(ctx: RunContext[AgentDeps], *, request_context: Any, handler: Any) -> ModelResponse:
        recorder = ctx.deps.recorder
        messages = request_context.messages
        if messages:
            _answer_unknown_tools(ctx.deps, messages, own_tools)
        _record_retries(recorder, messages[-1] if messages else None, own_tools)
        settings = dict(request_context.model_settings or {})
        recorder.model_request(messages, settings=settings)
        started = time.monotonic()
        response: ModelResponse = await handler(request_context)
        recorder.model_response(response, duration_s=time.monotonic() - started)
        return response

    return Hooks(model_request=model_request)


UNKNOWN_TOOL_WORDS = "Unknown tool name:"  # how pydantic-ai's retry prompt for a tool it does not have begins


def _answer_unknown_tools(deps: AgentDeps, messages: list[ModelMessage], own_tools: set[str]) -> None:
    """Each call in the last response to a tool the run does not have: recorded as a failed call (kind unknown_tool)
    and answered in the error shape of every other failure, in place of pydantic-ai's plain words."""
    last = messages[-1]
    if not isinstance(last, ModelRequest):
        return
    response = next((m for m in reversed(messages[:-1]) if isinstance(m, ModelResponse)), None)
    calls = {p.tool_call_id: p for p in (response.parts if response else []) if isinstance(p, ToolCallPart)}
    for part in last.parts:
        # pydantic-ai answers it as a retried tool return (a retry prompt in earlier releases)
        if not isinstance(part, RetryPromptPart | ToolReturnPart):
            continue
        if isinstance(part, ToolReturnPart) and getattr(part, "outcome", None) != "retried":
            continue
        if not (
            part.tool_name
            and part.tool_name not in own_tools
            and isinstance(part.content, str)
            and part.content.startswith(UNKNOWN_TOOL_WORDS)
        ):
            continue
        call = calls.get(part.tool_call_id)
        record = ToolErrorRecord(
            kind=ErrorKind.UNKNOWN_TOOL,
            what=f"there is no tool named {part.tool_name!r}",
            remedy="call one of the run's tools (the tool list you were given); its name exactly as listed",
            details={"tools": sorted(own_tools)},
        )
        deps.recorder.record(
            ToolCallEvent, call_id=part.tool_call_id, tool=part.tool_name, args=call.args_as_dict() if call else {}
        )
        deps.recorder.record(
            ToolResultEvent,
            call_id=part.tool_call_id,
            tool=part.tool_name,
            ok=False,
            error=record.model_dump(),
            duration_s=0.0,
            host=deps.host_spec,
        )
        part.content = json.dumps({"error": record.model_dump(mode="json")})


def _record_retries(recorder: Recorder, last: object, own_tools: set[str]) -> None:
    """Retries pydantic-ai asks of the model itself: unknown tools, output that failed validation."""
    if not isinstance(last, ModelRequest):
        return
    content: object  # a retry prompt's text or error details; a retried tool return's content
    max_attempts: int | None
    for part in last.parts:
        if part.part_kind == "retry-prompt":
            if part.tool_name in own_tools:
                continue
            content, attempt, max_attempts = part.content, 1, None
        elif part.part_kind == "tool-return" and getattr(part, "outcome", None) == "retried":
            if part.tool_name in own_tools:
                continue
            retry = getattr(part, "retry", None)
            content = part.content
            attempt = getattr(retry, "attempt", 1) or 1
            max_attempts = getattr(retry, "max_retries", None)
            max_attempts = max_attempts + 1 if max_attempts is not None else None
        else:
            continue
        reason = content if isinstance(content, str) else str(content)
        what = f"tool {part.tool_name}" if part.tool_name else "model output"
        recorder.record(RetryEvent, what=what, attempt=attempt, reason=reason, max_attempts=max_attempts)
