"""Reading a transcript back: tolerant of a torn last line, strict about everything else.

The recorder ends every event with a newline in the same write, so a run
killed mid-write (kill -9, power loss) leaves at most one incomplete line, at
the end, with no newline. That tail is dropped and reported (`torn_tail`).
Anything else that is wrong (a middle line that is not JSON, an unknown event
type or schema version, a gap in `seq`, a second run id) is an error naming
the line: a transcript that was edited or mixed up is not silently half-read.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage

from .events import EVENT_ADAPTER, EVENT_TYPE_NAMES, Event, ModelRequestEvent, SchemaVersion
from .messages import load_messages
from .version1 import upgraded


class TranscriptCorrupt(ValueError):
    """A whole line of a transcript is not a valid event, or breaks the file's sequence."""

    def __init__(self, path: Path, line_no: int, reason: str) -> None:
        super().__init__(f"{path}:{line_no}: {reason}")
        self.path = path
        self.line_no = line_no
        self.reason = reason


@dataclass(frozen=True)
class TranscriptReadResult:
    path: Path
    events: list[Event]
    torn_tail: bool  # the file ended in an incomplete line, which was ignored
    whole_length: int  # bytes of whole lines: where an appender continues
    _sent: dict[int, list[dict[str, Any]]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def run_id(self) -> str | None:
        return self.events[0].run_id if self.events else None

    @property
    def next_seq(self) -> int:
        return len(self.events)

    def messages_sent(self, request: ModelRequestEvent) -> list[dict[str, Any]]:
        """Every message `request` sent (serialised), its `history` reference resolved."""
        known = self._sent.get(request.seq)
        if known is not None:
            return known
        if request.history is None:
            sent = request.messages
        else:
            earlier = self.events[request.history.seq]
            assert isinstance(earlier, ModelRequestEvent), "read_transcript checks that history names a model_request"
            sent = self.messages_sent(earlier)[: request.history.count] + request.messages
        self._sent[request.seq] = sent
        return sent

    def model_messages_sent(self, request: ModelRequestEvent) -> list[ModelMessage]:
        return load_messages(self.messages_sent(request))


def whole_lines_length(data: bytes) -> int:
    """Length of the prefix of `data` made of complete (newline-terminated) lines."""
    return data.rfind(b"\n") + 1


def read_transcript(path: str | Path) -> TranscriptReadResult:
    """Read a transcript (`.jsonl`, or `.jsonl.gz` for stored golden ones)."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    whole = whole_lines_length(data)
    events: list[Event] = []
    for index, line in enumerate(data[:whole].split(b"\n")[:-1]):
        line_no = index + 1
        try:
            event = upgraded(EVENT_ADAPTER.validate_json(line))
        except ValidationError as error:
            raise TranscriptCorrupt(path, line_no, _why_invalid(line, error)) from None
        if event.seq != index:
            raise TranscriptCorrupt(
                path, line_no, f"seq {event.seq} where {index} was expected (lines lost or reordered)"
            )
        if events and event.run_id != events[0].run_id:
            raise TranscriptCorrupt(
                path, line_no, f"run id {event.run_id!r} in a transcript of run {events[0].run_id!r}"
            )
        if isinstance(event, ModelRequestEvent) and event.history is not None:
            _check_history(path, line_no, event, events)
        events.append(event)
    return TranscriptReadResult(path=path, events=events, torn_tail=whole < len(data), whole_length=whole)


def _check_history(path: Path, line_no: int, event: ModelRequestEvent, earlier: list[Event]) -> None:
    ref = event.history
    assert ref is not None
    target = earlier[ref.seq] if ref.seq < len(earlier) else None
    if not isinstance(target, ModelRequestEvent):
        raise TranscriptCorrupt(
            path, line_no, f"history refers to event {ref.seq}, which is not an earlier model_request"
        )
    available = len(target.messages) + (target.history.count if target.history else 0)
    if ref.count > available:
        raise TranscriptCorrupt(
            path, line_no, f"history takes {ref.count} messages of request {ref.seq}, which sent {available}"
        )


def _why_invalid(line: bytes, error: ValidationError) -> str:
    """A plain reason for the common cases, pydantic's own for the rest."""
    try:
        raw = json.loads(line)
    except ValueError as not_json:
        return f"not a JSON line ({not_json})"
    if not isinstance(raw, dict):
        return f"an event is a JSON object, not {type(raw).__name__}"
    if "schema_version" in raw and raw["schema_version"] not in get_args(SchemaVersion):
        return (
            f"schema version {raw['schema_version']!r}; this reader knows versions {', '.join(get_args(SchemaVersion))}"
        )
    if raw.get("type") not in EVENT_TYPE_NAMES:
        return f"unknown event type {raw.get('type')!r} (known: {', '.join(EVENT_TYPE_NAMES)})"
    problems = "; ".join(
        f"{'.'.join(str(part) for part in problem['loc'][1:]) or '(event)'}: {problem['msg']}"
        for problem in error.errors(include_url=False)
    )
    return f"invalid {raw['type']} event: {problems}"
