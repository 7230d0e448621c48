"""Serving a recorded run's tool results instead of running tools: the replay's ToolRunner.

Each call takes the first recorded call not yet served with the same tool and
(masked) arguments, in order, and gets what that call returned: its result, or
its typed error raised again. Calls the recorded run never carried out (refused
by the loop guard, arguments rejected) are not served: today's loop makes those
answers itself. A call with no recorded counterpart is RecordedResultMissing;
the comparator has normally reported the divergence at its tool_call already.
"""

from __future__ import annotations

from typing import Any

from specops.tools.context import ToolContext
from specops.tools.errors import ErrorKind, ToolError, ToolErrorRecord
from specops.transcripts import ToolPair, ToolResultEvent

from ..tool_runner import ToolDone, ToolRequest
from .masking import Masker
from .recorded_run import RecordedRun

# Outcomes the loop produced without running the tool.
_NOT_RUN = frozenset(
    {ErrorKind.REPEATED_FAILURE, ErrorKind.INVALID_ARGUMENTS, ErrorKind.TODO_RULE, ErrorKind.BUDGET_SPENT}
)
UNEXPECTED = ErrorKind.UNEXPECTED_ERROR


def was_run(result: ToolResultEvent) -> bool:
    """Whether the tool itself ran for this result (not refused by the loop guard, its arguments not rejected)."""
    return result.error is None or result.error.kind not in _NOT_RUN


class RecordedResultMissing(Exception):
    """A tool call the recording has no result for (a different call, or one more than recorded)."""


class RecordedToolError(ToolError):
    """A recorded tool's typed failure, raised again with the recorded kind, what, remedy and details."""

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__(
            str(record.get("what", "")), remedy=str(record.get("remedy", "")), details=record.get("details") or {}
        )
        self.recorded_kind = str(record.get("kind", ErrorKind.TOOL_ERROR))  # as recorded, known to this version or not

    def record(self) -> ToolErrorRecord:
        return ToolErrorRecord(kind=self.recorded_kind, what=self.what, remedy=self.remedy, details=self.details)


def _unexpected(what: str) -> Exception:
    """A recorded tool bug, raised again with its original exception type's name (the loop records `kind` from it)."""
    name, _, message = what.partition(": ")
    exc_type = type(name if name.isidentifier() else "RecordedToolFailure", (Exception,), {})
    failure: Exception = exc_type(message if name.isidentifier() else what)
    return failure


def serve_recorded(result: ToolResultEvent) -> ToolDone:
    """A recorded call's outcome, given again: its result, or its failure raised again as the tool raised it."""
    if result.ok:
        return ToolDone(result=result.result if isinstance(result.result, dict) else {"value": result.result})
    error = result.error.model_dump(mode="json") if result.error is not None else {}
    if error.get("kind") == UNEXPECTED:
        raise _unexpected(str(error.get("what", "")))
    raise RecordedToolError(error)


class RecordedTools:
    def __init__(self, recorded: RecordedRun, masker: Masker) -> None:
        self._masker = masker
        pairs: list[ToolPair] = [p for p in recorded.tools if p.result is not None and was_run(p.result)]
        # Each recorded call's masked arguments, once: a lookup compares against every call not yet served.
        self._pairs = [(pair, masker(pair.call.args)) for pair in pairs]
        self._used = [False] * len(self._pairs)

    async def run(self, request: ToolRequest, context: ToolContext) -> ToolDone:
        wanted = self._masker(request.raw_args)
        for i, (pair, masked_args) in enumerate(self._pairs):
            if self._used[i] or pair.call.tool != request.tool or masked_args != wanted:
                continue
            self._used[i] = True
            assert pair.result is not None
            _keep_handles(context, pair.result)
            request.host_time.value = pair.result.host_time  # the recorded call's host time, as a live call's
            return serve_recorded(pair.result)
        raise RecordedResultMissing(
            f"the recording has no result for {request.tool}({request.raw_args}): today's code made a call "
            "the recorded run did not make"
        )


def _keep_handles(context: ToolContext, result: ToolResultEvent) -> None:
    """A served launch or download names its id for later calls, as a live one would (a fork goes on live)."""
    if result.ok and isinstance(result.result, dict):
        context.handles.restore([(result.tool, True, result.result)])
    elif result.error is not None:
        context.handles.restore([(result.tool, False, result.error.model_dump(mode="json"))])
