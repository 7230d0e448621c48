"""A tool call's answer: the compact view the model is sent, with the full outcome beside it for the harness.

The model is sent the result's view, or `{"error": <record>}`, compacted and
capped (tools/model_view.py). The full outcome rides along as the tool
return's metadata, which pydantic-ai never sends to a model:
the playbook reads it, the transcript's tool_result event holds it, and the
report is built from it. The same function answers a live call and rebuilds a
recorded one (resume), so both give the model the same text. The full outcome
carries the call's host clock readings too (`host_time`), so a policy can plan
around the host's time (a host-time budget) from its history alone.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_ai.messages import ToolReturn

from specops.tools.model_view import View, error_for_model, for_model
from specops.transcripts import HostTime


def answer_ok(
    result: dict[str, Any], result_type: type[BaseModel], view: View | None, host_time: HostTime | None = None
) -> ToolReturn:
    full = {"ok": True, "result": result, **_host_time(host_time)}
    return ToolReturn(return_value=for_model(result, result_type, view), metadata=full)


def answer_error(error: dict[str, Any], host_time: HostTime | None = None) -> ToolReturn:
    full = {"ok": False, "error": error, **_host_time(host_time)}
    return ToolReturn(return_value={"error": error_for_model(error)}, metadata=full)


def _host_time(host_time: HostTime | None) -> dict[str, Any]:
    return {"host_time": host_time.model_dump(mode="json")} if host_time is not None else {}


def full_outcome(content: Any, metadata: Any) -> Any:
    """What a tool return carried in full: its metadata when the loop put the outcome there, else its content."""
    return metadata if isinstance(metadata, dict) and "ok" in metadata else content
