"""`specops replay`: golden transcripts replay with no divergence; a changed playbook, a changed recording and a
changed host are reported at the first event that differs; --live-tools and --from run for real."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specops.agent.policies.playbook_pipeline import Pipeline
from specops.agent.replay import RecordedRun, replay, replay_async
from specops.agent.replay.golden import RERECORD, SCENARIOS, mismatch_message
from specops.cli.main import app
from specops.transcripts import read_transcript

from ..jobs import job_timeout
from .scripted import spy_on_recorded_events

GOLDEN = {s.name: s for s in SCENARIOS}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_golden_transcript_replays_with_no_divergence(scenario):
    assert scenario.path.exists(), f"missing golden transcript {scenario.path}: record it with {RERECORD}"
    result = replay(scenario.path)
    assert result.ok, mismatch_message(scenario, result)
    assert result.replayed_events == result.recorded_events
    # The playbook is code and runs as it is today; a model's run (openai-chat over HTTP) gets its recorded answers.
    assert result.policy == (
        "today's playbook" if scenario.policy == "playbook" else f"recorded {scenario.policy} responses"
    )


def _copy(path: Path, tmp_path: Path, edit=None) -> Path:
    """The golden transcript as a plain run directory, each event passed through `edit` (JSON in, JSON out)."""
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    out = [json.dumps(edit(e) if edit else e) for e in lines]
    (run_dir / "transcript.jsonl").write_text("\n".join(out) + "\n")
    return run_dir


def _response_calling(path: Path, tool: str) -> int:
    """The seq of the first recorded model_response that calls `tool`."""
    for event in RecordedRun.load(path).responses:
        if any(p.get("tool_name") == tool for p in event.response["parts"]):
            return event.seq
    raise AssertionError(f"no response calls {tool}")


def test_a_deliberate_change_to_the_playbook_is_reported_at_its_step(monkeypatch):
    golden = GOLDEN["evaluate-acceptance"].path
    original = Pipeline.call

    def changed(self, tool, **args):  # the change: one more prompt per category for acceptance
        if tool == "acceptance":
            args["prompts_per_category"] = args.get("prompts_per_category", 8) + 1
        return original(self, tool, **args)

    monkeypatch.setattr(Pipeline, "call", changed)
    written = spy_on_recorded_events(monkeypatch)
    result = replay(golden)
    assert not result.ok
    divergence = result.divergence
    assert divergence.seq == _response_calling(golden, "acceptance")
    assert "same tools with different arguments" in divergence.why
    diff = divergence.diff()
    assert '-    "prompts_per_category"' in diff and '+    "prompts_per_category"' in diff, diff
    # The replay stopped there: the diverging response was written, and no tool ran and no model was asked after it.
    assert [e.seq for e in written if e.type == "model_response"][-1] == divergence.seq
    after = [
        f"{e.seq} {e.type}" for e in written if e.seq > divergence.seq and e.type in ("tool_call", "model_request")
    ]
    assert not after, after
    # The CLI says the same and exits 1.
    out = CliRunner().invoke(app, ["replay", str(golden)])
    assert out.exit_code == 1, out.output
    assert f"first divergence at event {divergence.seq}" in out.output and "prompts_per_category" in out.output


def test_cli_replay_exits_0_with_one_line(tmp_path):
    out = CliRunner().invoke(app, ["replay", str(GOLDEN["incompatible-drafter"].path)])
    assert out.exit_code == 0, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and "no divergence in" in lines[0]


def test_a_recorded_result_that_changed_changes_the_course(tmp_path):
    """A host that had no SGLang: today's playbook stops after host_facts instead of looking for the target."""
    golden = GOLDEN["evaluate-acceptance"].path

    def no_sglang(event):
        if event["type"] == "tool_result" and event["tool"] == "host_facts":
            event["result"]["sglang_version"] = None
        return event

    result = replay(_copy(golden, tmp_path, no_sglang))
    facts = next(p for p in RecordedRun.load(golden).tools if p.call.tool == "host_facts")
    assert not result.ok
    # The first event after host_facts' result that today's code writes differently: the next model turn's request
    # carries the changed result, so it differs first.
    assert result.divergence.seq == facts.result.seq + 1
    assert "sent different messages" in result.divergence.why


def test_an_external_models_run_is_replayed_from_its_recorded_responses(tmp_path):
    """A run driven by a model (here a scripted one on the local host) replays with its recorded responses, offline."""
    import asyncio

    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from specops.agent.budget import Budgets
    from specops.agent.run import RunOptions, run_goal_async

    def respond(messages, info):
        turn = sum(1 for m in messages if m.kind == "response")
        if turn == 0:
            return ModelResponse(
                parts=[ToolCallPart("shell", {"argv": ["uname", "-s"], "reason": "which OS"}, tool_call_id="a")]
            )
        if turn == 1:
            return ModelResponse(
                parts=[ToolCallPart("shell", {"argv": ["nproc"], "reason": "how many CPUs"}, tool_call_id="b")]
            )
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, {"status": "completed", "summary": "looked"})]
        )

    outcome = asyncio.run(
        run_goal_async(
            "benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
            host="local",
            policy=FunctionModel(respond, model_name="scripted"),
            run_dir=tmp_path / "run",
            options=RunOptions(fsync=False),
            budgets=Budgets(max_requests=5),
        )
    )
    assert outcome.status == "completed", outcome.reason
    result = asyncio.run(replay_async(outcome.run_dir))
    assert result.ok, result.summary()
    assert result.policy.startswith("recorded") and result.replayed_events == result.recorded_events

    # The recording says `uname` printed something else: the served result differs, so does the next request.
    lines = (outcome.run_dir / "transcript.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    for event in events:
        if event["type"] == "tool_result" and event["call_id"] == "a":
            event["result"]["stdout"] = "Plan9\n"
            changed_at = event["seq"]
    edited = tmp_path / "edited"
    edited.mkdir()
    (edited / "transcript.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    # The recorded request after it still says "Linux": today's loop sends "Plan9", a divergence at that request.
    result = asyncio.run(replay_async(edited))
    assert not result.ok and result.divergence.seq == changed_at + 1, result.summary()


@pytest.mark.slow
@job_timeout()
def test_live_tools_replay_and_its_divergences(tmp_path):
    golden = GOLDEN["incompatible-drafter"].path
    result = replay(golden, live_host="sim:seed-ct200", runs_dir=tmp_path)
    assert result.ok, result.summary()
    assert result.mode == "live-tools" and result.run_dir is not None
    start = read_transcript(result.run_dir / "transcript.jsonl").events[0]
    assert start.config["replay_of"]["run_id"] == RecordedRun.load(golden).run_id

    # Recorded as failing, live it works: a difference in course (ok vs error), reported at that result.
    def facts_failed(event):
        if event["type"] == "tool_result" and event["tool"] == "find_models":
            event.update(
                ok=False,
                result=None,
                error={"kind": "host_command_failed", "what": "ls failed", "remedy": "-", "details": {}},
            )
        return event

    changed = replay(_copy(golden, tmp_path, facts_failed), live_host="sim:seed-ct200", runs_dir=tmp_path)
    assert not changed.ok
    assert "find_models ended differently: recorded host_command_failed, today ok" in changed.divergence.why


@pytest.mark.slow
@job_timeout()
def test_fork_continues_with_a_live_policy_in_a_new_run(tmp_path):
    golden = GOLDEN["incompatible-drafter"].path
    recorded = RecordedRun.load(golden)
    at = recorded.responses[2].seq  # after the plan, the host's facts and the target
    out = CliRunner().invoke(
        app,
        [
            "replay",
            str(golden),
            "--from",
            str(at),
            "--model",
            "playbook",
            "--host",
            "sim:seed-ct200",
            "--runs-dir",
            str(tmp_path),
        ],
    )
    assert out.exit_code == 0, out.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    read = read_transcript(run_dir / "transcript.jsonl")
    start, end = read.events[0], read.events[-1]
    assert start.config["forked_from"] == {"run_id": recorded.run_id, "transcript": str(golden), "seq": at}
    assert start.policy.name == "playbook"
    assert end.type == "run_end" and end.status == recorded.end.status
    assert len(read.events) == len(recorded.events)


def test_replay_refuses_what_it_cannot_do(tmp_path):
    runner = CliRunner()
    missing = runner.invoke(app, ["replay", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    no_host = runner.invoke(app, ["replay", str(GOLDEN["incompatible-drafter"].path), "--live-tools"])
    assert no_host.exit_code == 2 and "--host" in no_host.output


@pytest.mark.parametrize("torn", [False, True], ids=["whole-lines", "torn-tail"])
def test_a_run_that_was_cut_off_replays_up_to_its_last_whole_event(tmp_path, torn, monkeypatch):
    golden = GOLDEN["evaluate-acceptance"].path
    lines = gzip.decompress(golden.read_bytes()).decode().splitlines(keepends=True)
    wait = next(i for i, line in enumerate(lines) if '"tool":"wait_download"' in line and '"type":"tool_call"' in line)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    tail = lines[wait + 1][:40] if torn else ""  # half of the next line, as a kill mid-write leaves it
    (run_dir / "transcript.jsonl").write_text("".join(lines[: wait + 1]) + tail)
    out = CliRunner().invoke(app, ["replay", str(run_dir)])
    assert out.exit_code == 0, out.output
    assert f"no divergence in {wait + 1} events (the recorded run was cut off there" in out.output

    # Cut off, and today's playbook differs before the cut: still a divergence.
    def changed(self, tool, **args):
        if tool == "check_disk":
            args["target"] = "/elsewhere"
        return original(self, tool, **args)

    original = Pipeline.call
    monkeypatch.setattr(Pipeline, "call", changed)
    assert CliRunner().invoke(app, ["replay", str(run_dir)]).exit_code == 1
