"""Every event type written by the Recorder and read back unchanged; the schema's rules hold."""

from __future__ import annotations

import threading
from datetime import UTC

import pytest
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from specops.transcripts import (
    EVENT_TYPES,
    NoteEvent,
    Recorder,
    RecorderClosed,
    TodoItem,
    ToolCallEvent,
    ToolResultEvent,
    diff_todos,
    read_transcript,
)

from .samples import sample_fields


def _plain(value):
    """Models as their JSON dump, recursively: what a field's value looks like once written."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def test_every_event_type_round_trips(tmp_path):
    samples = sample_fields()
    assert set(samples) == set(EVENT_TYPES), "every event type needs a sample"
    with Recorder(tmp_path / "t.jsonl", "run-rt", environ={}) as recorder:
        written = [recorder.record(event_type, **fields) for event_type, fields in samples.items()]
    read = read_transcript(tmp_path / "t.jsonl")
    assert not read.torn_tail
    assert read.events == written
    for event, (event_type, fields) in zip(read.events, samples.items(), strict=False):
        assert type(event) is event_type
        assert event.run_id == "run-rt" and event.schema_version == "2"
        for name, value in fields.items():
            assert _plain(getattr(event, name)) == _plain(value), name


def test_seq_counts_from_zero_and_ts_never_goes_back(tmp_path):
    with Recorder(tmp_path / "t.jsonl", "run-seq", environ={}) as recorder:
        for i in range(50):
            recorder.note(f"step {i}")
    events = read_transcript(tmp_path / "t.jsonl").events
    assert [e.seq for e in events] == list(range(50))
    assert all(e.ts.tzinfo == UTC for e in events)
    assert all(a.ts <= b.ts for a, b in zip(events, events[1:], strict=False))
    assert '"ts":"' in (tmp_path / "t.jsonl").read_text().splitlines()[0] and 'Z"' in (tmp_path / "t.jsonl").read_text()


def test_threads_get_distinct_seqs_in_file_order(tmp_path):
    recorder = Recorder(tmp_path / "t.jsonl", "run-threads", environ={}, fsync=False)

    def work(worker: int) -> None:
        for i in range(100):
            recorder.record(ToolCallEvent, call_id=f"{worker}-{i}", tool="probe", args={"i": i})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    recorder.close()
    events = read_transcript(tmp_path / "t.jsonl").events
    assert [e.seq for e in events] == list(range(800))
    assert len({e.call_id for e in events}) == 800
    # each worker's own events stay in its order
    for worker in range(8):
        mine = [int(e.call_id.split("-")[1]) for e in events if e.call_id.startswith(f"{worker}-")]
        assert mine == list(range(100))


def test_unknown_field_is_refused_and_nothing_is_written(tmp_path):
    with Recorder(tmp_path / "t.jsonl", "run-strict", environ={}) as recorder:
        with pytest.raises(ValidationError, match="txt"):
            recorder.record(NoteEvent, txt="misspelt")
        with pytest.raises(ValidationError, match="error record"):
            recorder.record(ToolResultEvent, call_id="c", tool="t", ok=False, duration_s=0, host="local")
        with pytest.raises(ValidationError, match="no error"):
            recorder.record(
                ToolResultEvent,
                call_id="c",
                tool="t",
                ok=True,
                duration_s=0,
                host="local",
                error={"kind": "k", "what": "w", "remedy": "r"},
            )
        assert recorder.next_seq == 0
        recorder.note("the first event still gets seq 0")
    events = read_transcript(tmp_path / "t.jsonl").events
    assert [(e.seq, e.text) for e in events] == [(0, "the first event still gets seq 0")]


def test_closed_recorder_refuses_and_existing_transcript_is_not_overwritten(tmp_path):
    path = tmp_path / "t.jsonl"
    recorder = Recorder(path, "run-closed", environ={})
    recorder.note("one")
    recorder.close()
    assert recorder.closed
    with pytest.raises(RecorderClosed):
        recorder.note("two")
    with pytest.raises(FileExistsError, match="Recorder.resume"):
        Recorder(path, "run-other", environ={})
    assert len(read_transcript(path).events) == 1


def test_values_json_cannot_hold_are_refused_or_nulled(tmp_path):
    with Recorder(tmp_path / "t.jsonl", "run-nan", environ={}) as recorder:
        with pytest.raises(PydanticSerializationError):
            recorder.record(ToolCallEvent, call_id="c", tool="t", args={"x": object()})
        # JSON has no NaN: pydantic writes non-finite floats as null, and the line stays valid JSON.
        recorder.record(ToolCallEvent, call_id="c", tool="t", args={"tok_s": float("nan")})
    (event,) = read_transcript(tmp_path / "t.jsonl").events
    assert event.seq == 0 and event.args == {"tok_s": None}


def test_todo_diff_names_each_change():
    before = [
        TodoItem(id="a", content="check disk", status="in_progress"),
        TodoItem(id="b", content="download", status="pending"),
    ]
    after = [
        TodoItem(id="a", content="check disk", status="completed"),
        TodoItem(id="c", content="free cache", status="pending", priority="high"),
    ]
    assert [(d.id, d.change, d.before, d.after) for d in diff_todos(before, after)] == [
        ("a", "status", "in_progress", "completed"),
        ("c", "added", None, "pending"),
        ("b", "removed", "pending", None),
    ]


def test_todo_change_helper_records_list_and_diff(tmp_path):
    plan = [TodoItem(id="1", content="check disk", status="in_progress")]
    with Recorder(tmp_path / "t.jsonl", "run-todo", environ={}) as recorder:
        recorder.todo_change(plan)
        done = [plan[0].model_copy(update={"status": "completed"})]
        recorder.todo_change(done, previous=plan)
    first, second = read_transcript(tmp_path / "t.jsonl").events
    assert [d.change for d in first.changes] == ["added"]
    assert second.todos == done and [(d.change, d.after) for d in second.changes] == [("status", "completed")]
