"""The recorder: the one writer of a run's transcript.

Each event is validated, redacted, and appended as one JSON line in a single
write, then flushed to the disk (fsync, unless turned off), so that a run
killed at any moment leaves whole lines up to its last event and at most one
torn line after them. The recorder numbers events (seq) and stamps them (ts,
UTC, never going backwards); it is safe to call from several threads (tools
may run in threads), and `Recorder.resume` continues a transcript after a
crash, dropping its torn tail first.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TypeVar

from pydantic_ai.messages import ModelMessage, ModelResponse

from .events import EventBase, HistoryRef, ModelRequestEvent, ModelResponseEvent, NoteEvent, TodoChangeEvent
from .messages import dump_messages, dump_response
from .reader import TranscriptReadResult, read_transcript
from .records import Usage
from .redaction import Redactor
from .todos import TodoItem, diff_todos

E = TypeVar("E", bound=EventBase)

# Filled in by the recorder, never redacted (they are ours, and the reader checks them).
_ENVELOPE = ("type", "seq", "ts", "schema_version", "run_id")


class RecorderClosed(RuntimeError):
    """An event was recorded after the recorder was closed."""


class Recorder:
    """Appends events to the JSONL transcript at `path`.

    `secrets` are redacted besides those found in the environment (`environ`,
    default os.environ, read now) and by pattern; see redaction.py. With
    `fsync=False` each event is still written whole by one write() call (a
    killed process loses nothing the kernel has), only a machine crash can
    lose the last events.
    """

    def __init__(
        self,
        path: str | Path,
        run_id: str,
        *,
        secrets: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
        fsync: bool = True,
        continuing: TranscriptReadResult | None = None,
    ) -> None:
        """A new transcript at `path`; or, with `continuing` (resume's reading of it), the same one carried on."""
        path = Path(path)
        if continuing is None and path.exists() and path.stat().st_size > 0:
            raise FileExistsError(f"{path} already holds a transcript: continue it with Recorder.resume({str(path)!r})")
        path.parent.mkdir(parents=True, exist_ok=True)
        events = continuing.events if continuing else []
        # Carried on, the next request is stored as a continuation of the last one recorded, as it would have been.
        last = next((e for e in reversed(events) if isinstance(e, ModelRequestEvent)), None)
        self._open(
            path,
            run_id,
            Redactor(secrets, environ=environ),
            fsync=fsync,
            next_seq=continuing.next_seq if continuing else 0,
            last_ts=events[-1].ts if events else None,
            last_request=(last.seq, continuing.messages_sent(last)) if continuing and last else None,
        )
        self.resumed_from = continuing
        if continuing is None and fsync:  # the new file's directory entry, so the file itself survives a machine crash
            _fsync_dir(path.parent)

    @classmethod
    def resume(
        cls,
        path: str | Path,
        *,
        secrets: Iterable[str] = (),
        environ: Mapping[str, str] | None = None,
        fsync: bool = True,
    ) -> Self:
        """Continue the transcript at `path`: same run id, seq after its last whole line.

        A torn last line is cut off first (the file is truncated to its last
        newline); a corrupt whole line raises TranscriptCorrupt and nothing is
        changed. What was read is kept in `resumed_from`.
        """
        read = read_transcript(path)
        if read.run_id is None:
            raise ValueError(f"{path} has no complete event to resume from (no run id): start a new Recorder")
        if read.torn_tail:
            os.truncate(read.path, read.whole_length)
        return cls(read.path, read.run_id, secrets=secrets, environ=environ, fsync=fsync, continuing=read)

    def _open(
        self,
        path: Path,
        run_id: str,
        redactor: Redactor,
        *,
        fsync: bool,
        next_seq: int,
        last_ts: datetime | None,
        last_request: tuple[int, list[dict[str, Any]]] | None,
    ) -> None:
        if not run_id:
            raise ValueError("a run needs a non-empty run id")
        self.path = path
        self.run_id = run_id
        self.redactor = redactor
        self._fsync = fsync
        self._lock = threading.Lock()
        self._next_seq = next_seq
        self._last_ts = last_ts
        # The last request's serialised messages, to store the next one as a continuation of it.
        self._request_lock = threading.Lock()
        self._last_request = last_request
        self._last_objects: list[ModelMessage] = []  # the message objects of the last request, for _serialise
        self.last_written: dict[str, Any] = {}
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size

    # -- the one way events are written ------------------------------------------------

    def record(self, event_type: type[E], /, **fields: Any) -> E:
        """Write one event of `event_type` with `fields` (everything but the envelope); returns it as written.

        Fields are checked strictly (an unknown field is an error) before
        anything is written; the returned event is the redacted one.
        """
        with self._lock:
            if self._fd is None:
                raise RecorderClosed(f"the recorder of {self.path} is closed; {event_type.__name__} was not written")
            now = datetime.now(UTC)
            ts = now if self._last_ts is None or now > self._last_ts else self._last_ts
            envelope = {"seq": self._next_seq, "ts": ts, "run_id": self.run_id}
            draft = event_type.model_validate({**fields, **envelope}, extra="forbid")
            data = draft.model_dump(mode="json")
            line = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
            event = draft
            if self.redactor.may_hold_secrets(line):  # else the draft is written as it is: nothing to remove
                data = {key: value if key in _ENVELOPE else self.redactor.redact(value) for key, value in data.items()}
                event = event_type.model_validate(data)
                line = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
            self.last_written = data  # the event as JSON, as written (a replay compares it without dumping again)
            self._append(line.encode("utf-8"))
            self._next_seq += 1
            self._last_ts = ts
            return event

    def _append(self, data: bytes) -> None:
        assert self._fd is not None
        written = 0
        try:
            while written < len(data):
                written += os.write(self._fd, memoryview(data)[written:])
            if self._fsync:
                os.fsync(self._fd)
        except OSError:
            # A failed write (a full disk) must not leave half a line in the
            # middle of the file once later writes succeed.
            os.ftruncate(self._fd, self._size)
            raise
        self._size += len(data)

    # -- helpers for events built from pydantic-ai objects -----------------------------

    def model_request(
        self, messages: Sequence[ModelMessage], *, settings: Mapping[str, Any] | None = None
    ) -> ModelRequestEvent:
        """Record the messages sent; those the previous request already sent are stored as a reference to it.

        The comparison is on the serialised form, so a history that was
        trimmed, compacted or changed in place is stored whole where it differs.
        """
        with self._request_lock:
            sent = self._serialise(messages)
            shared = 0
            if self._last_request is not None:
                previous_seq, previous = self._last_request
                limit = min(len(previous), len(sent))
                while shared < limit and (previous[shared] is sent[shared] or previous[shared] == sent[shared]):
                    shared += 1
            history = HistoryRef(seq=previous_seq, count=shared) if shared else None
            event = self.record(
                ModelRequestEvent, history=history, messages=sent[shared:], settings=dict(settings or {})
            )
            self._last_request = (event.seq, sent)
            self._last_objects = list(messages)
            return event

    def _serialise(self, messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
        """The messages' JSON; the leading ones that are the very objects the last request sent reuse its JSON.

        A history grows by appending, so without this every turn would serialise the whole
        conversation again (quadratic in the run's length: most of a long replay's time).
        The last message sent before is always serialised again, in case it was completed in place.
        """
        previous = self._last_request[1] if self._last_request is not None else []
        reused = 0
        limit = min(len(messages), len(self._last_objects), len(previous)) - 1
        while reused < limit and messages[reused] is self._last_objects[reused]:
            reused += 1
        return previous[:reused] + dump_messages(messages[reused:])

    def model_response(self, response: ModelResponse, *, duration_s: float) -> ModelResponseEvent:
        return self.record(
            ModelResponseEvent,
            response=dump_response(response),
            usage=Usage.of(response.usage),
            model_name=response.model_name,
            duration_s=duration_s,
        )

    def todo_change(self, todos: Sequence[TodoItem], *, previous: Sequence[TodoItem] = ()) -> TodoChangeEvent:
        return self.record(TodoChangeEvent, todos=list(todos), changes=diff_todos(previous, todos))

    def note(self, text: str) -> NoteEvent:
        return self.record(NoteEvent, text=text)

    # -- lifecycle ---------------------------------------------------------------------

    def add_secret(self, value: str, name: str | None = None) -> None:
        """Redact `value` in every event (and log line, where logs share this redactor) from now on."""
        self.redactor.add_secret(value, name)

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Recorder({str(self.path)!r}, run_id={self.run_id!r}, next_seq={self._next_seq})"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
