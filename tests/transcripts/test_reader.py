"""read_transcript: a torn last line is dropped and reported; every other defect names its line."""

from __future__ import annotations

import json

import pytest

from specops.transcripts import NoteEvent, Recorder, TranscriptCorrupt, read_transcript


def _three_notes(path, run_id="run-r"):
    with Recorder(path, run_id, environ={}, fsync=False) as recorder:
        for text in ("one", "two", "three"):
            recorder.note(text)
    return path.read_bytes().splitlines(keepends=True)


def test_torn_last_line_is_ignored_and_reported(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    path.write_bytes(b"".join(lines) + lines[0][:17])
    read = read_transcript(path)
    assert read.torn_tail
    assert [e.text for e in read.events] == ["one", "two", "three"]
    assert read.whole_length == len(b"".join(lines))


def test_a_complete_looking_line_without_newline_counts_as_torn(tmp_path):
    # The recorder writes the newline in the same write as the event: no newline, no event.
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    path.write_bytes(b"".join(lines)[:-1])
    read = read_transcript(path)
    assert read.torn_tail and [e.text for e in read.events] == ["one", "two"]


def test_corrupt_middle_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    path.write_bytes(lines[0] + lines[1][:30] + b"\n" + lines[2])
    with pytest.raises(TranscriptCorrupt, match=r"t\.jsonl:2: not a JSON line") as caught:
        read_transcript(path)
    assert caught.value.line_no == 2


def test_invalid_event_names_line_and_field(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    bad = json.loads(lines[1])
    del bad["text"]
    path.write_bytes(lines[0] + json.dumps(bad).encode() + b"\n" + lines[2])
    with pytest.raises(TranscriptCorrupt, match=r":2: invalid note event: text: Field required"):
        read_transcript(path)


def test_gap_in_seq_and_foreign_run_id_are_errors(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    path.write_bytes(lines[0] + lines[2])
    with pytest.raises(TranscriptCorrupt, match=r":2: seq 2 where 1 was expected"):
        read_transcript(path)
    other = _three_notes(tmp_path / "other.jsonl", run_id="run-other")
    path.write_bytes(lines[0] + other[1])
    with pytest.raises(TranscriptCorrupt, match=r":2: run id 'run-other' in a transcript of run 'run-r'"):
        read_transcript(path)


def test_unknown_type_and_newer_schema_version_are_refused_plainly(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    for change, message in (
        ({"type": "checkpoint"}, r":1: unknown event type 'checkpoint'"),
        ({"schema_version": "2"}, r":1: schema version '2'; this reader knows version '1'"),
    ):
        event = {**json.loads(lines[0]), **change}
        path.write_bytes(json.dumps(event).encode() + b"\n" + lines[1])
        with pytest.raises(TranscriptCorrupt, match=message):
            read_transcript(path)


def test_unknown_fields_from_a_newer_writer_are_kept(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    event = {**json.loads(lines[0]), "author": "a newer specops"}
    path.write_bytes(json.dumps(event).encode() + b"\n" + b"".join(lines[1:]))
    first = read_transcript(path).events[0]
    assert isinstance(first, NoteEvent) and first.model_extra == {"author": "a newer specops"}


def test_empty_transcript_reads_as_no_events(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    read = read_transcript(path)
    assert read.events == [] and not read.torn_tail and read.run_id is None
