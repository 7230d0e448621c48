"""Each tool call with its result: the one pairing the report, the evals, the timeline and replay read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from .events import Event, ToolCallEvent, ToolResultEvent

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ToolPair:
    call: ToolCallEvent
    result: ToolResultEvent | None  # None: the run ended (or was cut off) while the call ran

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok

    def result_as(self, model: type[M]) -> M | None:
        """The call's result as the tool's own result `model`; None when it failed or never answered."""
        return model.model_validate(self.result.result) if self.result is not None and self.result.ok else None


def pair_tool_calls(events: Sequence[Event]) -> list[ToolPair]:
    """Every tool call in the order it was made, each with its result: the first result after it with its call id
    (a resumed run may make a call again under the same id; each call gets its own result)."""
    calls: list[ToolCallEvent] = []
    results: dict[int, ToolResultEvent] = {}
    waiting: dict[str, int] = {}  # call id -> index of its latest call still without a result
    for event in events:
        if isinstance(event, ToolCallEvent):
            waiting[event.call_id] = len(calls)
            calls.append(event)
        elif isinstance(event, ToolResultEvent) and event.call_id in waiting:
            results[waiting.pop(event.call_id)] = event
    return [ToolPair(call, results.get(i)) for i, call in enumerate(calls)]
