"""Reading a transcript back: tolerant of a torn last line, strict about everything else.

The recorder ends every event with a newline in the same write, so a run
killed mid-write (kill -9, power loss) leaves at most one incomplete line, at
the end, with no newline. That tail is dropped and reported (`torn_tail`).
Anything else that is wrong (a middle line that is not JSON, an unknown event
type or schema version, a gap in `seq`, a second run id) is an error naming
the line: a transcript that was edited or mixed up is not silently half-read.
A file that cannot be read at all (a `.gz` that is not gzip or was cut short,
an unreadable file) is TranscriptCorrupt too, naming the file: one line, never
the decompressor's traceback.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage

from .events import EVENT_ADAPTER, EVENT_TYPE_NAMES, Event, ModelRequestEvent, SchemaVersion
from .messages import load_messages
from .version1 import upgraded


class TranscriptCorrupt(ValueError):
    """A whole line of a transcript is not a valid event, or breaks the file's sequence; or (line_no 0) the file
    cannot be read at all."""

    def __init__(self, path: Path, line_no: int, reason: str) -> None:
        super().__init__(f"{path}:{line_no}: {reason}" if line_no else f"{path}: {reason}")
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

    @property
    def torn_tail_note(self) -> str | None:
        """One line for a person when the file's last line was cut (a write the run never finished); else None."""
        if not self.torn_tail:
            return None
        last = f"after event {self.events[-1].seq}" if self.events else "before its first event"
        return (
            f"{self.path}: its last line was cut {last} (the run stopped while writing it); "
            f"read the {len(self.events)} whole events before it"
        )

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
    data = _read_bytes(path)
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


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed for a .gz; TranscriptCorrupt (line 0: the whole file) when it cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TranscriptCorrupt(path, 0, "no such file") from None
    except OSError as exc:
        raise TranscriptCorrupt(path, 0, f"cannot be read ({exc.strerror or exc})") from None
    if path.suffix != ".gz":
        return data
    try:
        return gzip.decompress(data)
    except gzip.BadGzipFile as exc:
        if not data.startswith(b"\x1f\x8b"):
            raise TranscriptCorrupt(path, 0, "not a gzip file, though named .gz") from None
        raise TranscriptCorrupt(path, 0, f"the gzip data is damaged ({' '.join(str(exc).split())})") from None
    except EOFError:
        raise TranscriptCorrupt(
            path, 0, "the gzip file is cut short (truncated): it ends before its end marker"
        ) from None
    except (zlib.error, OSError, ValueError) as exc:
        raise TranscriptCorrupt(path, 0, f"the gzip data is damaged ({' '.join(str(exc).split())})") from None


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
    not_json = next((p["msg"] for p in error.errors(include_url=False) if p["type"] == "json_invalid"), None)
    if not_json is not None:  # too deep to parse, say: the standard parser would hit Python's recursion limit
        return f"not a JSON line ({not_json.removeprefix('Invalid JSON: ')})"
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError) as not_json_either:
        return f"not a JSON line ({not_json_either})"
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
