"""The conversation of a run cut off mid-way, rebuilt from its transcript, so the agent can carry on from it.

The last model request recorded holds every message sent so far (resolved
through its `history` references). After it come, when they were recorded, the
model's response and the results of the tool calls it asked for. If every call
has its result, the conversation continues with a request carrying those
results, exactly as the loop would have sent it; otherwise it ends on the
response, and pydantic-ai carries out its calls first (the resume's tool runner
serves the results that were recorded, and runs the rest).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
)

from specops.transcripts import ModelRequestEvent, ModelResponseEvent, ToolResultEvent

from ..plan_reminder import without_plan
from ..tool_answer import answer_error
from ..toolset import answer_recorded
from .recorded_run import RecordedRun

# Failures the loop sends back as retry prompts, not as tool returns.
_RETRIED = frozenset({"invalid_arguments", "todo_rule"})


@dataclass
class RebuiltHistory:
    messages: list[ModelMessage] | None  # None: the run never reached the model; it starts from the goal again
    pending: list[ToolCallPart] = field(default_factory=list)  # calls of the last response without a result
    done: dict[str, ToolResultEvent] = field(default_factory=dict)  # results of the last response's calls, by id


def tool_return(result: ToolResultEvent) -> ToolReturn:
    """What the loop answered for this result (toolset.py): the model's view, the full outcome as metadata."""
    if not result.ok:
        return answer_error(result.error.model_dump(mode="json") if result.error is not None else {}, result.host_time)
    data = result.result if isinstance(result.result, dict) else {"value": result.result}
    return answer_recorded(result.tool, data, result.host_time)


def rebuild_history(recorded: RecordedRun) -> RebuiltHistory:
    events = recorded.events
    last_request = next((e for e in reversed(events) if isinstance(e, ModelRequestEvent)), None)
    if last_request is None:
        return RebuiltHistory(messages=None)
    messages: list[ModelMessage] = without_plan(recorded.read.model_messages_sent(last_request))
    after = events[last_request.seq + 1 :]
    response_event = next((e for e in after if isinstance(e, ModelResponseEvent)), None)
    if response_event is None:
        return RebuiltHistory(messages=messages)  # cut off while the model answered: ask again
    response: ModelResponse = response_event.model_response()
    messages.append(response)
    results = {e.call_id: e for e in events[response_event.seq + 1 :] if isinstance(e, ToolResultEvent)}
    calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
    done = {c.tool_call_id: results[c.tool_call_id] for c in calls if c.tool_call_id in results}
    pending = [c for c in calls if c.tool_call_id not in results]
    if calls and not pending:
        parts = [_answer(call, results[call.tool_call_id]) for call in calls]
        messages.append(ModelRequest(parts=parts))
    return RebuiltHistory(messages=messages, pending=pending, done=done)


def _answer(call: ToolCallPart, result: ToolResultEvent) -> ToolReturnPart | RetryPromptPart:
    if not result.ok and result.error is not None and result.error.kind in _RETRIED:
        return RetryPromptPart(content=result.error.what, tool_name=call.tool_name, tool_call_id=call.tool_call_id)
    answer = tool_return(result)
    return ToolReturnPart(
        tool_name=call.tool_name, content=answer.return_value, tool_call_id=call.tool_call_id, metadata=answer.metadata
    )
