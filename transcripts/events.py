"""The transcript's event schema, version 2: one JSON object per line, discriminated by `type`.

Every event carries `type`, `seq` (0, 1, 2, ... within a run), `ts` (UTC),
`schema_version` and `run_id`; the recorder fills those in. The event types
and the guarantees around them are documented in transcripts/README.md, and
transcripts/schema/transcript-v2.schema.json is generated from these models
(`python -m specops.transcripts.json_schema`). Version 2 added host_opened and
resumed, which version 1 wrote as notes; a version-1 transcript is still read
(transcripts/version1.py turns those notes into the typed events).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import AfterValidator, BaseModel, Field, TypeAdapter, model_validator
from pydantic_ai.messages import ModelMessage, ModelResponse

from .messages import load_messages, load_response
from .records import RECORD_CONFIG, ErrorRecord, HostTime, PolicyInfo, PromptVersion, ToolSchema, Usage
from .todos import TodoDiff, TodoItem

SCHEMA_VERSION: Final = "2"
SchemaVersion = Literal["1", "2"]  # what a reader reads; the recorder writes SCHEMA_VERSION

RunStatus = Literal["completed", "partial", "failed", "budget_exceeded", "cancelled"]


def _utc(ts: datetime) -> datetime:
    if ts.tzinfo is None:
        raise ValueError("ts must carry a timezone (transcripts are in UTC)")
    return ts.astimezone(UTC)


class EventBase(BaseModel):
    model_config = RECORD_CONFIG

    type: str
    seq: int = Field(ge=0)
    ts: Annotated[datetime, AfterValidator(_utc)]
    schema_version: SchemaVersion = SCHEMA_VERSION
    run_id: str = Field(min_length=1)


class RunStartEvent(EventBase):
    """Everything needed to understand and re-run the run: the goal, who drove it, with what."""

    type: Literal["run_start"] = "run_start"
    goal: str
    policy: PolicyInfo
    prompts: dict[str, PromptVersion] = {}
    tools: dict[str, ToolSchema] = {}
    packages: dict[str, str] = {}
    host: dict[str, Any] = {}
    config: dict[str, Any] = {}


class HistoryRef(BaseModel):
    """The first `count` messages sent in the earlier model_request `seq` (themselves resolved the same way)."""

    model_config = RECORD_CONFIG

    seq: int = Field(ge=0)
    count: int = Field(ge=1)


class ModelRequestEvent(EventBase):
    """The exact messages sent to the model, in pydantic-ai's serialised form.

    A model is sent the whole conversation every turn; storing it whole each
    time makes transcripts grow with the square of their length (a 1,000-event
    run: ~90 MiB). So when the conversation starts with messages an earlier
    request already sent, `history` points at them and `messages` holds only
    the rest: the messages sent are `history`'s messages + `messages`, the
    same JSON the recorder was given. Without `history`, `messages` is all of it.
    `TranscriptReadResult.messages_sent(event)` resolves the reference.
    """

    type: Literal["model_request"] = "model_request"
    history: HistoryRef | None = None
    messages: list[dict[str, Any]]
    settings: dict[str, Any] = {}

    def model_messages(self) -> list[ModelMessage]:
        """The messages as pydantic-ai objects; only for a request that stores them all (no `history`)."""
        if self.history is not None:
            raise ValueError(
                f"model_request {self.seq} continues request {self.history.seq}: "
                "resolve it with TranscriptReadResult.model_messages_sent(event)"
            )
        return load_messages(self.messages)


class ModelResponseEvent(EventBase):
    """The model's answer (a serialised pydantic-ai ModelResponse), its usage and how long it took."""

    type: Literal["model_response"] = "model_response"
    response: dict[str, Any]
    usage: Usage = Usage()
    model_name: str | None = None
    duration_s: float = Field(ge=0)

    def model_response(self) -> ModelResponse:
        return load_response(self.response)


class ToolCallEvent(EventBase):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    tool: str
    args: dict[str, Any]


class ToolResultEvent(EventBase):
    """A tool's outcome: its result (JSON) when ok, its typed error record otherwise."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str
    tool: str
    ok: bool
    result: Any = None
    error: ErrorRecord | None = None
    duration_s: float = Field(ge=0)
    host: str
    # Set on calls carried out on the host; None on the loop's own tools (todowrite, compare), on calls refused
    # before they ran, and in transcripts written before host times were recorded (their host time is unknown).
    host_time: HostTime | None = None

    @model_validator(mode="after")
    def _error_iff_failed(self) -> ToolResultEvent:
        if self.ok and self.error is not None:
            raise ValueError("a tool result with ok=true has no error")
        if not self.ok and self.error is None:
            raise ValueError("a tool result with ok=false needs its error record")
        return self


class TodoChangeEvent(EventBase):
    """The whole plan after a change, and the change itself (see todos.diff_todos)."""

    type: Literal["todo_change"] = "todo_change"
    todos: list[TodoItem]
    changes: list[TodoDiff]


class RetryEvent(EventBase):
    """Something is being tried again: what, which attempt (1 is the first retry), and why."""

    type: Literal["retry"] = "retry"
    what: str
    attempt: int = Field(ge=1)
    reason: str
    max_attempts: int | None = Field(default=None, ge=1)


class ApprovalEvent(EventBase):
    """A question put to the user (or answered by a flag or a file): what, the answer, and how it was given."""

    type: Literal["approval"] = "approval"
    asked: str
    answer: str
    approved: bool | None = None  # None for questions that are not yes/no
    by: str  # e.g. "terminal", "answers file", "--allow-delete", "non-interactive default"


class ErrorEvent(EventBase):
    """A failure of the harness itself (not a tool's typed error, which is in its tool_result)."""

    type: Literal["error"] = "error"
    where: str
    message: str
    kind: str
    details: dict[str, Any] = {}


class OpenedHost(BaseModel):
    """The host a run opened, as resume needs it to open it again."""

    model_config = RECORD_CONFIG

    spec: str = Field(description="As the user gave it, e.g. sim:seed-ct200 or ssh://me@gpu-box")
    opened: str = Field(description="The host reached: a sim world's root, or the spec itself")
    nodes: list[str] = Field(default=[], description="A host group's nodes as opened, rank 0 (`opened`) first")
    home: str
    allowed_roots: list[str] = []
    sim: dict[str, Any] = Field(default={}, description="The simulated world's summary, when the run started one")


class HostOpenedEvent(EventBase):
    """The run opened its host (again, after a resume)."""

    type: Literal["host_opened"] = "host_opened"
    host: OpenedHost


class ResumedEvent(EventBase):
    """A run that was cut off carries on from here, under `policy`."""

    type: Literal["resumed"] = "resumed"
    after_seq: int = Field(ge=0, description="The last whole event before the cut")
    torn_tail_dropped: bool = False
    policy: str
    base_url: str | None = None
    pending_calls: int = Field(default=0, ge=0, description="Calls of the last turn left to carry out")


class NoteEvent(EventBase):
    """Free text for the people who read the transcript."""

    type: Literal["note"] = "note"
    text: str


class RunEndEvent(EventBase):
    type: Literal["run_end"] = "run_end"
    status: RunStatus
    reason: str | None = None
    report: dict[str, Any] | None = None
    usage: Usage = Usage()
    cost_usd: float | None = None  # None when the model's price is unknown
    duration_s: float = Field(ge=0)


Event = Annotated[
    RunStartEvent
    | ModelRequestEvent
    | ModelResponseEvent
    | ToolCallEvent
    | ToolResultEvent
    | TodoChangeEvent
    | RetryEvent
    | ApprovalEvent
    | ErrorEvent
    | HostOpenedEvent
    | ResumedEvent
    | NoteEvent
    | RunEndEvent,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

# Every event type, in the union's order.
EVENT_TYPES: tuple[type[EventBase], ...] = get_args(get_args(Event)[0])
EVENT_TYPE_NAMES: tuple[str, ...] = tuple(cls.model_fields["type"].default for cls in EVENT_TYPES)
