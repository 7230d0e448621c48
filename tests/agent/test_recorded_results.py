"""A recorded tool result given again (replay's recorded tools, resume's calls that had finished): one way for both."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from specops.agent.replay.recorded_tools import RecordedToolError, serve_recorded, was_run
from specops.agent.replay.resume import _FinishedCalls
from specops.agent.tool_runner import ToolRequest
from specops.agent.toolset import registered_tools
from specops.transcripts import ToolResultEvent


def _result(ok: bool, *, result=None, kind: str = "", what: str = "") -> ToolResultEvent:
    error = None if ok else {"kind": kind, "what": what, "remedy": "-", "details": {}}
    return ToolResultEvent(
        seq=3,
        ts=datetime.now(UTC),
        run_id="r",
        call_id="c1",
        tool="shell",
        ok=ok,
        result=result,
        error=error,
        duration_s=0.1,
        host="local",
    )


def test_a_result_is_given_again_and_a_typed_error_raised_again():
    assert serve_recorded(_result(True, result={"exit_code": 0})).result == {"exit_code": 0}
    assert serve_recorded(_result(True, result=[1, 2])).result == {"value": [1, 2]}
    with pytest.raises(RecordedToolError) as typed:
        serve_recorded(_result(False, kind="host_command_failed", what="ls failed"))
    assert typed.value.record().kind == "host_command_failed" and typed.value.what == "ls failed"


def test_a_tool_bug_is_raised_again_as_its_own_exception_type():
    with pytest.raises(Exception) as bug:
        serve_recorded(_result(False, kind="unexpected_error", what="KeyError: 'port'"))
    assert type(bug.value).__name__ == "KeyError" and not isinstance(bug.value, RecordedToolError)


def test_resume_gives_a_finished_call_the_same_outcome_as_replay():
    """The interrupted turn's finished calls: a recorded tool bug is raised as that bug, not as a typed tool error."""
    finished = _FinishedCalls({"c1": _result(False, kind="unexpected_error", what="KeyError: 'port'")})
    request = ToolRequest(call_id="c1", spec=registered_tools()["shell"], args=None, raw_args={})  # type: ignore[arg-type]
    with pytest.raises(Exception) as bug:
        asyncio.run(finished.run(request, context=None))  # type: ignore[arg-type]
    assert type(bug.value).__name__ == "KeyError"


def test_calls_the_loop_answered_itself_were_not_run():
    assert was_run(_result(True, result={}))
    assert was_run(_result(False, kind="host_command_failed", what="x"))
    for kind in ("repeated_failure", "invalid_arguments", "todo_rule"):
        assert not was_run(_result(False, kind=kind, what="x"))
