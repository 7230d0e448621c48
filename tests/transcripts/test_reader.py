"""read_transcript: a torn last line is dropped and reported; every other defect names its line."""

from __future__ import annotations

import gzip
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
        ({"schema_version": "3"}, r":1: schema version '3'; this reader knows versions 1, 2"),
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


def test_a_version_1_transcript_reads_its_protocol_notes_as_typed_events(tmp_path):
    """Version 1 wrote the host opened and a resume as notes; read back they are host_opened and resumed events, and
    a note that only looks like one (or any other note) stays a note."""
    host = {
        "spec": "sim:seed-ct200",
        "opened": "sim:/tmp/w",
        "home": "/tmp/w/root",
        "allowed_roots": ["/tmp/w/root"],
        "sim": {"root": "/tmp/w", "time_scale": 1000},
    }
    texts = [
        "host opened: " + json.dumps(host),
        "resumed after event 7 (its torn last line was dropped); policy playbook; 2 call(s) of the last turn to carry out",
        "resumed after event 9; policy openai-chat:m at http://llm:8000/v1; 0 call(s) of the last turn to carry out",
        "host opened: not json",
        "resumed after a coffee",
    ]
    path = tmp_path / "v1.jsonl"
    with Recorder(path, "run-v1", environ={}, fsync=False) as recorder:
        for text in texts:
            recorder.note(text)
    path.write_bytes(path.read_bytes().replace(b'"schema_version":"2"', b'"schema_version":"1"'))
    events = read_transcript(path).events
    assert [e.type for e in events] == ["host_opened", "resumed", "resumed", "note", "note"]
    assert events[0].host.sim["root"] == "/tmp/w" and events[0].host.allowed_roots == ["/tmp/w/root"]
    assert (events[1].after_seq, events[1].torn_tail_dropped, events[1].policy, events[1].pending_calls) == (
        7,
        True,
        "playbook",
        2,
    )
    assert (events[2].policy, events[2].base_url, events[2].torn_tail_dropped) == (
        "openai-chat:m",
        "http://llm:8000/v1",
        False,
    )
    assert all(e.schema_version == "1" and e.seq == i for i, e in enumerate(events))
    # Written by version 2, the same text is a note: only version 1 spoke through notes.
    path.write_bytes(path.read_bytes().replace(b'"schema_version":"1"', b'"schema_version":"2"'))
    assert {e.type for e in read_transcript(path).events} == {"note"}


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda data: b"plain text\n", "not a gzip file, though named .gz"),
        (lambda data: gzip.compress(data)[:-12], "the gzip file is cut short (truncated)"),
        (lambda data: gzip.compress(data)[:10], "the gzip file is cut short (truncated)"),
        (lambda data: gzip.compress(data)[:-4] + b"\0\0\0\0", "the gzip data is damaged"),  # the length is wrong
        (lambda data: gzip.compress(data) + b"tail", "the gzip data is damaged"),
    ],
)
def test_a_gz_that_cannot_be_decompressed_is_corrupt_naming_the_file(tmp_path, damage, words):
    plain = tmp_path / "t.jsonl"
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(damage(b"".join(_three_notes(plain))))
    with pytest.raises(TranscriptCorrupt) as caught:
        read_transcript(path)
    assert str(caught.value).startswith(f"{path}: {words}") and caught.value.line_no == 0
    assert len(str(caught.value).splitlines()) == 1


def test_a_line_too_deep_to_parse_is_corrupt_naming_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = _three_notes(path)
    path.write_bytes(lines[0] + b"[" * 100_000 + b"\n")
    with pytest.raises(TranscriptCorrupt, match=r"t\.jsonl:2: not a JSON line \(recursion limit exceeded"):
        read_transcript(path)


def test_an_unreadable_path_is_corrupt_naming_it(tmp_path):
    with pytest.raises(TranscriptCorrupt, match="cannot be read"):
        read_transcript(tmp_path)  # a directory
    with pytest.raises(TranscriptCorrupt, match="no such file"):
        read_transcript(tmp_path / "nothing.jsonl")
