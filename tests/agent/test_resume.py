"""`specops resume`: a real `specops run` killed with SIGKILL during the download, and during a benchmark, resumes
in place and finishes without redoing finished work (checked on the host and in the events)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from specops.agent.replay.resume import ResumeRefused, resume
from specops.sim.world.processes import pid_alive
from specops.sim.world.world import SimWorld
from specops.transcripts import read_transcript

from ..jobs import HANG_S, job_timeout, started_job

EVALUATE = "evaluate the acceptance length of SubSir/Kimi-K2.6-DFlash-tmp-long"
BENCHMARK = "benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"


# A narrow playbook: what is resumed is the run's state, not the breadth of its measurements (the whole seed job
# under four test workers takes minutes).
QUICK = "playbook:levels=1,32;ar_layouts=1;spec_layouts=1;acceptance_prompts=4;tune=false;bracket=false"


@pytest.fixture
def jobs() -> Iterator[ExitStack]:
    """The runs a test starts end with it (tests/jobs.py), and what they left on the host."""
    with ExitStack() as stack:
        yield stack


def _start_run(jobs: ExitStack, goal: str, host: str, runs_dir: Path) -> subprocess.Popen:
    return jobs.enter_context(
        started_job(
            [
                *(sys.executable, "-m", "specops.cli.main", "run", goal, "--host", host, "--model", QUICK),
                *("--runs-dir", str(runs_dir), "--json"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )


def _kill_during(
    process: subprocess.Popen, runs_dir: Path, tool: str, *, after_s: float, timeout_s: float = HANG_S
) -> Path:
    """SIGKILL the run `after_s` seconds into the first call of `tool` (its tool_call is the last event); its run dir."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        transcripts = list(runs_dir.glob("*/transcript.jsonl"))
        if transcripts:
            lines = transcripts[0].read_bytes().splitlines()
            last = json.loads(lines[-1]) if lines and lines[-1].endswith(b"}") else {}
            if last.get("type") == "tool_call" and last.get("tool") == tool:
                time.sleep(after_s)
                os.kill(process.pid, signal.SIGKILL)
                process.wait(10)
                return transcripts[0].parent
        assert process.poll() is None, "the run ended before it reached the call to kill it in"
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"no {tool} call within {timeout_s} s")


def _pairs(events, tool: str):
    calls = {e.call_id: e for e in events if e.type == "tool_call" and e.tool == tool}
    return [(calls[e.call_id], e) for e in events if e.type == "tool_result" and e.call_id in calls]


def _one_whole_run(run_dir: Path):
    read = read_transcript(run_dir / "transcript.jsonl")  # seq continuous, one run id, every line valid
    types = [e.type for e in read.events]
    assert not read.torn_tail
    assert types.count("run_start") == 1 and types[0] == "run_start"
    assert types.count("run_end") == 1 and types[-1] == "run_end"
    return read.events


@pytest.mark.slow
@job_timeout(jobs=2)  # a run up to its download, then the resumed run: only a hang fails
def test_killed_during_the_download_resumes_without_downloading_again(tmp_path, jobs):
    with SimWorld.start_fast("seed-ct200") as world:  # a host that outlives the killed run, as a real one would
        process = _start_run(jobs, EVALUATE, world.host_spec, tmp_path)
        run_dir = _kill_during(process, tmp_path, "wait_download", after_s=0.3)
        before = read_transcript(run_dir / "transcript.jsonl").events
        assert before[-1].type == "tool_call" and not any(e.type == "run_end" for e in before)

        outcome = resume(run_dir)

        assert outcome.status == "completed", outcome.reason
        events = _one_whole_run(run_dir)
        assert events[: len(before)] == before  # appended, nothing rewritten
        # The download was started once, and finished; the plan's earlier steps were not done again.
        starts = _pairs(events, "start_download")
        assert len(starts) == 1 and starts[0][1].seq < len(before)
        waits = _pairs(events, "wait_download")
        assert waits[-1][1].ok and waits[-1][1].result["status"]["state"] == "finished"
        for tool in ("host_facts", "find_models", "check_disk"):
            assert len(_pairs(events, tool)) == 1, tool
        notes = [e.text for e in events if e.type == "note"]
        [resumed] = [e for e in events if e.type == "resumed"]
        assert resumed.after_seq == len(before) - 1 and resumed.policy
        assert any("resume: the download of SubSir/Kimi-K2.6-DFlash-tmp-long" in n for n in notes)
        # On the host: one download log (one download started), and the drafter complete on disk.
        handle = starts[0][1].result
        logs = list((world.layout.home / ".specops" / "downloads").glob("*.log"))
        assert len(logs) == 1
        target = world.layout.host_path(handle["target_dir"])
        for item in handle["files"]:
            assert (target / item["path"]).stat().st_size == item["stored_bytes"], item["path"]
        assert (run_dir / "report.md").exists() and (run_dir / "todos.json").exists()

        with pytest.raises(ResumeRefused, match="already ended"):
            resume(run_dir)


@pytest.mark.slow
@job_timeout(jobs=2)  # a run up to a benchmark, then the resumed run: only a hang fails
def test_killed_during_a_benchmark_resumes_on_the_same_server(tmp_path, jobs):
    """sim:seed-ct200: the world the run started dies with it, and resume reopens it from its directory."""
    process = _start_run(jobs, BENCHMARK, "sim:seed-ct200", tmp_path)
    run_dir = _kill_during(process, tmp_path, "benchmark", after_s=0.5)
    before = read_transcript(run_dir / "transcript.jsonl").events
    launched = [r.result for _, r in _pairs(before, "launch_server") if r.ok]
    assert len(launched) == 1
    server = launched[0]
    world_root = next(e.host for e in before if e.type == "host_opened").sim["root"]
    assert Path(world_root).is_dir() and pid_alive(server["pid"])  # the host and its server outlived the run

    outcome = resume(run_dir)

    events = _one_whole_run(run_dir)
    assert outcome.status == "completed", outcome.reason
    assert events[: len(before)] == before
    # The server was checked and reused: the same server was benchmarked and then stopped, not launched again.
    notes = [e.text for e in events if e.type == "note"]
    assert any(f"(pid {server['pid']})" in n and "is up (health check passed)" in n for n in notes), notes
    benchmarks = _pairs(events, "benchmark")
    resumed_benchmark = next(r for c, r in benchmarks if r.seq > len(before))
    assert resumed_benchmark.ok and resumed_benchmark.result["levels"]
    stops = [r.result["pid"] for c, r in _pairs(events, "stop_server") if r.ok]
    assert stops[0] == server["pid"]
    launches = [c.args["config"] for c, _ in _pairs(events, "launch_server")]
    assert launches.count(launches[0]) == 1  # the first configuration was not launched a second time
    # Finished work was not redone: one download, facts read once.
    assert len(_pairs(events, "start_download")) == 1 and len(_pairs(events, "host_facts")) == 1
    # The host is left as found: the server stopped, the reopened world closed and removed.
    assert not pid_alive(server["pid"])
    assert not Path(world_root).exists()


def test_cli_refuses_a_run_that_ended_and_a_directory_without_a_transcript(tmp_path):
    import gzip

    from typer.testing import CliRunner

    from specops.agent.replay.golden import SCENARIOS
    from specops.cli.main import app

    ended = tmp_path / "ended"
    ended.mkdir()
    (ended / "transcript.jsonl").write_bytes(gzip.decompress(SCENARIOS[0].path.read_bytes()))
    out = CliRunner().invoke(app, ["resume", str(ended)])
    assert out.exit_code == 0 and "already ended (completed)" in out.output, out.output
    empty = tmp_path / "empty"
    empty.mkdir()
    out = CliRunner().invoke(app, ["resume", str(empty)])
    assert out.exit_code == 2 and "holds no transcript.jsonl" in out.output, out.output
