"""One realistic set of fields for every event type, for round-trip and schema tests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.usage import RequestUsage

from specops.transcripts import (
    ApprovalEvent,
    ErrorEvent,
    EventBase,
    HostOpenedEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    NoteEvent,
    OpenedHost,
    PolicyInfo,
    PromptVersion,
    ResumedEvent,
    RetryEvent,
    RunEndEvent,
    RunStartEvent,
    TodoChangeEvent,
    TodoItem,
    ToolCallEvent,
    ToolResultEvent,
    ToolSchema,
    Usage,
    diff_todos,
)
from specops.transcripts.messages import dump_messages, dump_response


class DiskArgs(BaseModel):
    path: str


class DiskResult(BaseModel):
    free_gib: float


PLAN_BEFORE = [TodoItem(id="1", content="check disk", status="in_progress", priority="high")]
PLAN_AFTER = [
    TodoItem(id="1", content="check disk", status="completed", priority="high"),
    TodoItem(id="2", content="download drafter", status="pending"),
]
RESPONSE = ModelResponse(
    parts=[
        TextPart(content="checking disk"),
        ToolCallPart(tool_name="disk", args={"path": "/data"}, tool_call_id="c1"),
    ],
    usage=RequestUsage(input_tokens=120, output_tokens=30),
    model_name="playbook",
)


def sample_fields() -> dict[type[EventBase], dict[str, Any]]:
    return {
        RunStartEvent: {
            "goal": "deploy z-lab/Qwen3-8B-DFlash on the host and benchmark it",
            "policy": PolicyInfo(name="playbook", settings={"temperature": 0}),
            "prompts": {"system": PromptVersion.of("You are specops.", version="3")},
            "tools": {"disk": ToolSchema.of(DiskArgs, DiskResult, mutates=False, description="free space")},
            "packages": {"specops": "0.1.0", "pydantic-ai-slim": "2.62.0"},
            "host": {"kind": "sim", "spec": "sim:/tmp/world", "gpus": 8},
            "config": {"budget": {"tool_calls": 200}, "non_interactive": True},
        },
        ModelRequestEvent: {
            "messages": dump_messages(
                [ModelRequest(parts=[SystemPromptPart(content="You are specops."), UserPromptPart(content="deploy")])]
            ),
            "settings": {"temperature": 0.0},
        },
        ModelResponseEvent: {
            "response": dump_response(RESPONSE),
            "usage": Usage(requests=1, input_tokens=120, output_tokens=30),
            "model_name": "playbook",
            "duration_s": 0.25,
        },
        ToolCallEvent: {"call_id": "c1", "tool": "disk", "args": {"path": "/data"}},
        ToolResultEvent: {
            "call_id": "c1",
            "tool": "disk",
            "ok": False,
            "error": {"kind": "disk_full", "what": "/ has 2 GiB free", "remedy": "use /data", "details": {"free": 2}},
            "duration_s": 0.5,
            "host": "sim:seed-ct200",
        },
        TodoChangeEvent: {"todos": PLAN_AFTER, "changes": diff_todos(PLAN_BEFORE, PLAN_AFTER)},
        RetryEvent: {"what": "hub listing", "attempt": 2, "reason": "HTTP 429", "max_attempts": 5},
        ApprovalEvent: {
            "asked": "delete /data/old?",
            "answer": "no",
            "approved": False,
            "by": "non-interactive default",
        },
        ErrorEvent: {
            "where": "agent.loop",
            "message": "model returned no tool call",
            "kind": "unexpected_model_behavior",
        },
        HostOpenedEvent: {
            "host": OpenedHost(
                spec="ssh://me@gpu-box", opened="ssh://me@gpu-box", home="/home/me", allowed_roots=["/home/me", "/data"]
            )
        },
        ResumedEvent: {"after_seq": 41, "torn_tail_dropped": True, "policy": "playbook", "pending_calls": 1},
        NoteEvent: {"text": "baseline benchmarked while the drafter downloads"},
        RunEndEvent: {
            "status": "completed",
            "report": {"acceptance": {"overall": {"request_mean": 3.1, "token_weighted": 3.4}}, "benchmarks": []},
            "usage": Usage(requests=4, tool_calls=9, input_tokens=900, output_tokens=200),
            "cost_usd": None,
            "duration_s": 12.5,
        },
    }
