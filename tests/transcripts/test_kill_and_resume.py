"""A recording process killed with SIGKILL leaves a readable transcript, and Recorder.resume continues it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from specops.transcripts import Recorder, TranscriptCorrupt, read_transcript

# Large events written without fsync, so that the kill is likely to land
# inside a write; the test holds whether or not it does.
_RECORDING_CHILD = """
import sys
from specops.transcripts import Recorder, ToolCallEvent, ToolResultEvent
path = sys.argv[1]
with Recorder(path, "run-killed", environ={}, fsync=False) as recorder:
    for i in range(100_000):
        recorder.record(ToolCallEvent, call_id=f"c{i}", tool="download", args={"i": i})
        recorder.record(ToolResultEvent, call_id=f"c{i}", tool="download", ok=True,
                        result={"log": "x" * 200_000}, duration_s=0.01, host="sim:seed-ct200")
"""


def _lines(path) -> int:
    try:
        with open(path, "rb") as handle:
            return handle.read().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_sigkilled_run_reads_to_its_last_whole_line_and_resumes(tmp_path):
    path = tmp_path / "run" / "transcript.jsonl"
    child = subprocess.Popen([sys.executable, "-c", _RECORDING_CHILD, str(path)])
    try:
        deadline = time.monotonic() + 30
        while _lines(path) < 40:
            assert child.poll() is None, "the recording child exited early"
            assert time.monotonic() < deadline, "the child did not record 40 events in 30 s"
            time.sleep(0.01)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL

    read = read_transcript(path)
    assert len(read.events) >= 40
    assert [e.seq for e in read.events] == list(range(len(read.events)))
    size_before = path.stat().st_size

    with Recorder.resume(path, environ={}) as recorder:
        assert recorder.run_id == "run-killed"
        assert recorder.next_seq == len(read.events)
        assert path.stat().st_size == read.whole_length <= size_before  # the torn tail, if any, is gone
        recorder.note("resumed after kill -9")

    again = read_transcript(path)
    assert not again.torn_tail
    assert [e.seq for e in again.events] == list(range(len(read.events) + 1))
    assert again.events[:-1] == read.events
    assert again.events[-1].text == "resumed after kill -9"


def test_resume_cuts_a_torn_tail_before_appending(tmp_path):
    path = tmp_path / "t.jsonl"
    with Recorder(path, "run-torn", environ={}) as recorder:
        for text in ("one", "two"):
            recorder.note(text)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"type":"note","seq":2,"ts":"2026-')
    with Recorder.resume(path, environ={}) as recorder:
        assert recorder.resumed_from is not None and recorder.resumed_from.torn_tail
        event = recorder.note("three")
    assert event.seq == 2 and event.ts >= recorder.resumed_from.events[-1].ts
    assert path.read_bytes().startswith(whole) and path.read_bytes().endswith(b"\n")
    read = read_transcript(path)
    assert not read.torn_tail and [e.text for e in read.events] == ["one", "two", "three"]


def test_resume_refuses_a_corrupt_transcript_and_leaves_it_alone(tmp_path):
    path = tmp_path / "t.jsonl"
    with Recorder(path, "run-bad", environ={}) as recorder:
        recorder.note("one")
    damaged = path.read_bytes() + b"garbage\n" + b'{"partial'
    path.write_bytes(damaged)
    with pytest.raises(TranscriptCorrupt, match=":2:"):
        Recorder.resume(path, environ={})
    assert path.read_bytes() == damaged


def test_resume_needs_at_least_one_whole_event(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type":"run_start","seq":0')
    with pytest.raises(ValueError, match="no complete event"):
        Recorder.resume(path, environ={})
