"""transcripts: a run's record, one JSON event per line, appended, flushed and redacted as it happens.

The schema is in events.py (documented in README.md), the one writer in
recorder.py, the reader in reader.py, secret removal in redaction.py and the
run's structlog logs in logs.py. This package stores and reads events; it
imports neither agent/ nor tools/.
"""

from .events import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    SCHEMA_VERSION,
    ApprovalEvent,
    ErrorEvent,
    Event,
    EventBase,
    HistoryRef,
    HostOpenedEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    NoteEvent,
    OpenedHost,
    ResumedEvent,
    RetryEvent,
    RunEndEvent,
    RunStartEvent,
    RunStatus,
    TodoChangeEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from .logs import RunLogs, configure_logging
from .pairs import ToolPair, pair_tool_calls
from .reader import TranscriptCorrupt, TranscriptReadResult, read_transcript
from .recorder import Recorder, RecorderClosed
from .records import ErrorRecord, HostTime, PolicyInfo, PromptVersion, ToolSchema, Usage
from .redaction import REDACTED, Redactor
from .todos import TodoDiff, TodoItem, diff_todos

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "REDACTED",
    "SCHEMA_VERSION",
    "ApprovalEvent",
    "ErrorEvent",
    "ErrorRecord",
    "Event",
    "EventBase",
    "HistoryRef",
    "HostOpenedEvent",
    "HostTime",
    "ModelRequestEvent",
    "ModelResponseEvent",
    "NoteEvent",
    "OpenedHost",
    "PolicyInfo",
    "PromptVersion",
    "Recorder",
    "RecorderClosed",
    "Redactor",
    "ResumedEvent",
    "RetryEvent",
    "RunEndEvent",
    "RunLogs",
    "RunStartEvent",
    "RunStatus",
    "TodoChangeEvent",
    "TodoDiff",
    "TodoItem",
    "ToolCallEvent",
    "ToolPair",
    "ToolResultEvent",
    "ToolSchema",
    "TranscriptCorrupt",
    "TranscriptReadResult",
    "Usage",
    "configure_logging",
    "diff_todos",
    "pair_tool_calls",
    "read_transcript",
]
