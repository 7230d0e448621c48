"""The `openai-chat:` policy over real HTTP: run, replay (offline and with live tools), fork, resume and eval.

A scripted Chat Completions server (chat_server.py) answers on loopback with the script of
openai_chat_script.py; the agent reaches it through pydantic-ai's OpenAIChatModel and the real openai client,
chosen as a user would: `--model openai-chat:scripted-agent --base-url http://127.0.0.1:PORT/v1`. The recorded
responses carry what a real server's do (provider name and URL, finish reason, provider details, usage with
cached tokens), which is what made a model's run diverge on replay before (issue 13).

The agent asks for whole answers (`Agent.iter` steps through `Model.request`, never `request_stream`); the
server's streaming is tested against the openai client and OpenAIChatModel's own stream below.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI
from pydantic_ai import models
from pydantic_ai.messages import ModelRequest, TextPart, ThinkingPart, ToolCallPart, UserPromptPart
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.tools import ToolDefinition
from typer.testing import CliRunner

from specops.agent.policies.openai_chat import openai_chat_model
from specops.agent.replay import RecordedRun, replay
from specops.agent.replay.golden import SCENARIOS
from specops.cli.main import app
from specops.transcripts import read_transcript

from ..jobs import job_timeout
from .chat_server import Answer, ScriptedChatServer, ToolCall
from .openai_chat_script import GOAL, MODEL_NAME, POLICY, SCRIPT, SHAPE, SUMMARY
from .scripted import spy_on_recorded_events, world_host  # noqa: F401

pytestmark = [job_timeout(), pytest.mark.slow]

KEY_ENV = "SCRIPTED_CHAT_KEY"
KEY = "sk-scripted-chat-secret-0123456789"


@dataclass
class Recorded:
    run_dir: Path
    server: ScriptedChatServer

    @property
    def transcript(self) -> Path:
        return self.run_dir / "transcript.jsonl"

    def events(self) -> list:
        return read_transcript(self.transcript).events


def _run_cli(server: ScriptedChatServer, host: str, runs_dir: Path) -> Path:
    """`specops run` with the openai-chat policy at the server; the new run's directory."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # loopback only: the scripted server
        mp.setenv(KEY_ENV, KEY)
        out = CliRunner().invoke(
            app,
            [
                "run",
                GOAL,
                "--model",
                POLICY,
                "--base-url",
                server.base_url,
                "--api-key-env",
                KEY_ENV,
                "--host",
                host,
                "--runs-dir",
                str(runs_dir),
                "--json",
            ],
        )
    assert out.exit_code == 1, out.output  # the policy's own answer: failed, with the reason
    (run_dir,) = [p for p in runs_dir.iterdir() if p.is_dir()]
    return run_dir


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Any:
    """One run of the script on sim:seed-ct200 (a world the run starts and removes), through the CLI."""
    with ScriptedChatServer(SCRIPT) as server:
        yield Recorded(_run_cli(server, "sim:seed-ct200", tmp_path_factory.mktemp("openai-chat-run")), server)


def _assistant(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m["role"] == "assistant"]


def _edited_copy(transcript: Path, tmp_path: Path, edit) -> Path:
    """The transcript as a new run directory, each event (JSON) passed through `edit`."""
    run_dir = tmp_path / "edited"
    run_dir.mkdir()
    events = [edit(json.loads(line)) for line in transcript.read_text().splitlines()]
    (run_dir / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return run_dir


# -- the run ---------------------------------------------------------------------------------------


def test_a_model_run_over_http(recorded):
    server = recorded.server
    assert server.errors == []
    assert [r.turn for r in server.requests] == list(range(len(SCRIPT)))
    assert not any(r.stream for r in server.requests)  # the agent asks for whole answers
    first = server.requests[0]
    assert first.body["model"] == MODEL_NAME and first.headers["Authorization"] == f"Bearer {KEY}"
    tools = {t["function"]["name"] for t in first.body["tools"]}
    assert {"todowrite", "host_facts", "find_models", "read_drafter_config", "check_disk", "final_result"} <= tools
    assert len([m for m in first.messages if m["role"] == "system"]) == 1
    # Each answer went back as the next request's assistant message, its calls answered by tool messages by id.
    for before, after in zip(server.requests, server.requests[1:], strict=False):
        echoed = _assistant(after.messages)[-1]
        assert [c["id"] for c in echoed["tool_calls"]] == before.call_ids
        assert set(before.call_ids) <= {m["tool_call_id"] for m in after.messages if m["role"] == "tool"}
    # The reasoning came back in the field it came in (pydantic-ai's thinking part of provider 'openai').
    assert _assistant(server.requests[5].messages)[4].get("reasoning_content") == SCRIPT[4].reasoning

    events = recorded.events()
    responses = [e for e in events if e.type == "model_response"]
    shape = [
        tuple(sum(p["part_kind"] == k for p in e.response["parts"]) for k in ("text", "thinking", "tool-call"))
        for e in responses
    ]
    assert shape == SHAPE
    for event, request in zip(responses, server.requests, strict=False):
        response = event.response
        # What broke replay before: metadata a real server's answer carries.
        assert response["provider_name"] == "openai" and response["finish_reason"] == "tool_call"
        assert response["provider_url"].rstrip("/") == server.base_url
        assert response["provider_details"]["finish_reason"] == "tool_calls" and response["model_name"] == MODEL_NAME
        assert event.usage.input_tokens == request.usage["prompt_tokens"]
        assert event.usage.output_tokens == request.usage["completion_tokens"]
        assert event.usage.cache_read_tokens == request.usage["prompt_tokens_details"]["cached_tokens"]
    results = {e.tool: e for e in events if e.type == "tool_result"}
    assert results["read_drafter_config"].error.kind == "incompatible_drafter" and results["find_models"].ok
    end = events[-1]
    assert end.type == "run_end" and end.status == "failed" and end.reason == "the policy ended with status failed"
    assert end.report is not None and SUMMARY in end.report["run"]["summary_text"]  # the summary, said once
    assert events[0].policy.name == POLICY and events[0].policy.settings["base_url"] == server.base_url
    assert KEY not in recorded.transcript.read_text()


# -- replay ----------------------------------------------------------------------------------------


def test_offline_replay_reports_no_divergence_and_serves_the_responses_whole(recorded, monkeypatch):
    written = spy_on_recorded_events(monkeypatch)
    out = CliRunner().invoke(app, ["replay", str(recorded.run_dir)])
    events = recorded.events()
    assert out.exit_code == 0, out.output
    assert f"no divergence in {len(events)} events" in out.output and f"recorded {POLICY} responses" in out.output

    # The recorded model answered exactly as recorded: provider, finish reason, details, usage and all.
    def keep(response: dict) -> dict:  # the loop stamps its run's id on each response
        return {k: v for k, v in response.items() if k not in ("run_id", "conversation_id")}

    replayed = [keep(e.model_dump(mode="json")["response"]) for e in written if e.type == "model_response"]
    assert replayed == [keep(e.response) for e in events if e.type == "model_response"]
    assert [e.usage for e in written if e.type == "model_response"] == [
        e.usage for e in events if e.type == "model_response"
    ]


def test_a_replay_that_cannot_reproduce_the_provider_metadata_still_agrees(recorded, tmp_path):
    """The issue's case: a recorded model that served its responses without provider, finish reason, details or
    usage (or with other ones): what the model said and called is the same, so nothing diverges."""

    def strip(event):
        if event["type"] == "model_response":
            event["response"].update(
                provider_name=None,
                provider_url=None,
                provider_details=None,
                finish_reason=None,
                provider_response_id="other",
                model_name="function:respond",
                timestamp="2020-01-01T00:00:00Z",
                usage={},
            )
            for part in event["response"]["parts"]:
                part.update(provider_name=None, provider_details=None)
        return event

    result = replay(_edited_copy(recorded.transcript, tmp_path, strip))
    assert result.ok, result.summary()
    assert result.replayed_events == result.recorded_events


def _edit_sent_part(kind: str, change):
    """An edit of the first recorded request that sent the model one of its own earlier answers with a part of
    `kind` (what it said or called): `change(part)`; the edited request's seq goes to `edited`."""
    edited: list[int] = []

    def edit(event):
        if event["type"] != "model_request" or edited:
            return event
        for message in event["messages"]:
            for part in message.get("parts", []) if message.get("kind") == "response" else []:
                if part["part_kind"] == kind:
                    change(part)
                    edited.append(event["seq"])
                    return event
        return event

    return edit, edited


def _args(part, **changes):
    part["args"] = json.dumps({**json.loads(part["args"] or "{}"), **changes})


@pytest.mark.parametrize(
    "kind, change",
    [
        ("text", lambda p: p.update(content="I will not plan.")),
        ("thinking", lambda p: p.update(content="the drafter fits")),
        ("tool-call", lambda p: _args(p, todos=[])),
        ("tool-call", lambda p: p.update(tool_call_id="call_other")),
        ("tool-call", lambda p: p.update(tool_name="check_disk")),
    ],
    ids=["text", "thinking", "tool-args", "tool-call-id", "tool-name"],
)
def test_what_the_model_said_or_called_still_diverges(recorded, tmp_path, kind, change):
    edit, edited = _edit_sent_part(kind, change)
    result = replay(_edited_copy(recorded.transcript, tmp_path, edit))
    assert edited, f"no recorded request sent a {kind} part back"
    assert not result.ok and result.divergence.seq == edited[0], result.summary()
    assert "the model was sent different messages" in result.divergence.why


@pytest.mark.slow
@job_timeout()
def test_live_tools_replay_reports_no_divergence(recorded, tmp_path):
    result = replay(recorded.run_dir, live_host="sim:seed-ct200", runs_dir=tmp_path)
    assert result.ok, result.summary()
    assert result.mode == "live-tools" and result.replayed_events == result.recorded_events
    live = read_transcript(result.run_dir / "transcript.jsonl").events
    assert live[0].config["replay_of"]["run_id"] == recorded.run_dir.name
    # The recorded calls ran on the new world as they were made: a host path is the same on any host.
    call = next(e for e in live if e.type == "tool_call" and e.tool == "read_drafter_config")
    assert call.args["target"]["path"] == "/root/models/Kimi-K2.6"
    result_ = next(e for e in live if e.type == "tool_result" and e.tool == "read_drafter_config")
    assert result_.error.kind == "incompatible_drafter"


def test_a_model_call_that_failed_replays_as_it_failed(world_host, tmp_path, monkeypatch):  # noqa: F811
    """The server stops answering (400) after two answers: the run ends with the model's error, and its replay
    ends there the same way instead of running out of recorded responses."""
    with ScriptedChatServer(SCRIPT[:2]) as server:
        monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
        out = CliRunner().invoke(
            app,
            [
                "run",
                GOAL,
                "--model",
                POLICY,
                "--base-url",
                server.base_url,
                "--host",
                world_host,
                "--runs-dir",
                str(tmp_path),
                "--json",
            ],
        )
        monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", False)
    (run_dir,) = list(tmp_path.iterdir())
    errors = [e for e in read_transcript(run_dir / "transcript.jsonl").events if e.type == "error"]
    assert out.exit_code == 1 and len(errors) == 1 and "script_exhausted" in errors[0].message, out.output
    result = replay(run_dir)
    assert result.ok, result.summary()
    assert result.replayed_events == result.recorded_events


def test_an_endpoint_that_does_not_answer_is_named_in_the_last_line(world_host, tmp_path, monkeypatch):  # noqa: F811
    import socket

    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    out = CliRunner().invoke(
        app,
        ["run", GOAL, "--model", POLICY, "--base-url", f"http://127.0.0.1:{port}/v1", "--host", world_host]
        + ["--runs-dir", str(tmp_path)],
    )
    assert out.exit_code == 1, out.output
    last = out.output.strip().splitlines()[-1]
    assert f"the model endpoint http://127.0.0.1:{port}/v1/chat/completions did not answer" in last, out.output
    assert "check --base-url" in last


# -- fork, resume, eval ----------------------------------------------------------------------------


@pytest.mark.slow
@job_timeout()
def test_fork_hands_the_conversation_to_a_live_model_over_http(recorded, tmp_path, monkeypatch):
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    before = RecordedRun.load(recorded.run_dir)
    at = before.requests[5].seq  # the recorded answers up to the last one (text, two calls at once, reasoning)
    with ScriptedChatServer(SCRIPT) as live:
        out = CliRunner().invoke(
            app,
            [
                "replay",
                str(recorded.run_dir),
                "--from",
                str(at),
                "--model",
                POLICY,
                "--base-url",
                live.base_url,
                "--host",
                "sim:seed-ct200",
                "--runs-dir",
                str(tmp_path),
            ],
        )
    assert out.exit_code == 0, out.output
    assert [r.turn for r in live.requests] == [5] and live.errors == []
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    events = read_transcript(run_dir / "transcript.jsonl").events
    start, end = events[0], events[-1]
    assert start.config["forked_from"]["seq"] == at and start.policy.name == POLICY
    assert start.policy.settings["base_url"] == live.base_url
    assert end.type == "run_end" and end.status == before.end.status and end.reason == before.end.reason
    assert end.report is not None and SUMMARY in end.report["run"]["summary_text"]
    assert [e.type for e in events] == [e.type for e in before.events]
    # The live model was sent the recorded model's answers as the recorded model had given them: its text, its
    # calls and their ids, its reasoning in the field it came in (the replayed responses were served whole).
    # Host paths, the same on the new world as on the recorded one: the answers pass unchanged.
    assert _assistant(live.requests[0].messages) == _assistant(recorded.server.requests[5].messages)


@pytest.fixture(scope="module")
def world_run(world_host, tmp_path_factory) -> Any:  # noqa: F811
    """The script run on the module's world (which outlives the run, as a real host would): for resume."""
    with ScriptedChatServer(SCRIPT) as server:
        yield Recorded(_run_cli(server, world_host, tmp_path_factory.mktemp("openai-chat-world-run")), server)


@pytest.mark.parametrize("cut", ["between-two-calls", "while-the-model-answered"])
def test_resume_of_a_cut_run_continues_through_the_server(world_run, tmp_path, monkeypatch, cut):
    lines = world_run.transcript.read_text().splitlines(keepends=True)
    events = [json.loads(line) for line in lines]
    if cut == "between-two-calls":  # read_drafter_config answered, check_disk (same answer) cut off as it started
        last = next(e["seq"] for e in events if e["type"] == "tool_call" and e["tool"] == "check_disk")
    else:  # the request for answer 4 sent, no answer recorded
        last = [e["seq"] for e in events if e["type"] == "model_request"][4]
    run_dir = tmp_path / "cut"
    run_dir.mkdir()
    (run_dir / "transcript.jsonl").write_text("".join(lines[: last + 1]))
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    recorded_server = world_run.server
    asked = len(recorded_server.requests)
    if cut == "between-two-calls":  # the server the run recorded
        server = recorded_server
        out = CliRunner().invoke(app, ["resume", str(run_dir)])
    else:  # the model's server moved: --base-url names the new one
        with ScriptedChatServer(SCRIPT) as server:
            out = CliRunner().invoke(app, ["resume", str(run_dir), "--base-url", server.base_url])
        assert len(recorded_server.requests) == asked
    assert out.exit_code == 1 and "resumed: failed" in out.output, out.output
    resumed = server.requests[asked:] if server is recorded_server else server.requests
    assert [r.turn for r in resumed] == [4, 5] and server.errors == []
    # The first request after the cut carries both calls of answer 3, answered: the recorded one and the one run again.
    answer_3 = world_run.server.requests[3].call_ids
    tool_messages = {m["tool_call_id"]: m["content"] for m in resumed[0].messages if m["role"] == "tool"}
    assert set(answer_3) <= set(tool_messages) and "incompatible_drafter" in tool_messages[answer_3[0]]
    after = read_transcript(run_dir / "transcript.jsonl").events
    assert [e.type for e in after].count("run_start") == 1 and after[-1].type == "run_end"
    assert after[-1].status == "failed" and SUMMARY in (after[-1].report or {})["run"]["summary_text"]
    assert [e.type for e in after].count("resumed") == 1
    if cut == "between-two-calls":  # the finished call's result given again as recorded, the cut one carried out
        results = [(e.tool, e.ok) for e in after[last + 1 :] if e.type == "tool_result"]
        assert results[:2] == [("read_drafter_config", False), ("check_disk", True)]


@pytest.mark.slow
@job_timeout()
def test_eval_drives_the_model_over_http(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    out_dir = tmp_path / "eval"
    with ScriptedChatServer(SCRIPT) as server:
        out = CliRunner().invoke(
            app,
            [
                "eval",
                "--model",
                POLICY,
                "--base-url",
                server.base_url,
                "--api-key-env",
                KEY_ENV,
                "--scenario",
                "incompatible-drafter",
                "--out",
                str(out_dir),
                "--jobs",
                "1",
            ],
        )
    assert [r.turn for r in server.requests] == list(range(len(SCRIPT))), out.output
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in server.requests)
    report = json.loads((out_dir / "eval-report.json").read_text())
    assert report["policy"] == POLICY
    (result,) = report["results"]
    assert all(g["passed"] for g in result["graders"].values()), result["graders"]
    assert out.exit_code == 0, out.output
    transcript = out_dir / "runs" / "incompatible-drafter" / "transcript.jsonl"
    start = read_transcript(transcript).events[0]
    assert start.policy.name == POLICY and start.policy.settings["base_url"] == server.base_url
    assert KEY not in transcript.read_text()


def test_the_golden_model_run_was_recorded_over_http():
    (scenario,) = [s for s in SCENARIOS if s.server == "tests.agent.openai_chat_script:serve"]
    events = [json.loads(line) for line in gzip.decompress(scenario.path.read_bytes()).decode().splitlines()]
    responses = [e["response"] for e in events if e["type"] == "model_response"]
    assert len(responses) == len(SCRIPT) and all(r["provider_name"] == "openai" for r in responses)
    assert max(sum(p["part_kind"] == "tool-call" for p in r["parts"]) for r in responses) >= 2


def test_the_golden_model_run_of_a_goal_without_a_repo_searched_the_hub():
    """A goal naming no repo reached the model with its hints, and the model's search is in the recording."""
    (scenario,) = [s for s in SCENARIOS if s.server == "tests.agent.openai_chat_find_script:serve"]
    events = [json.loads(line) for line in gzip.decompress(scenario.path.read_bytes()).decode().splitlines()]
    prompt = next(e for e in events if e["type"] == "model_request")["messages"][0]["parts"][0]["content"]
    assert "Repo: none named" in prompt and "Target: Kimi-K2.6" in prompt and "Algorithm: EAGLE3" in prompt
    calls = [e["tool"] for e in events if e["type"] == "tool_call"]
    assert calls.index("search_hub") < calls.index("read_drafter_config") and "start_download" not in calls
    end = next(e for e in events if e["type"] == "run_end")
    assert end["status"] == "completed"


# -- the scripted server's streaming ---------------------------------------------------------------

STREAMED = Answer(
    text="Both at once.",
    reasoning="both are read-only",
    calls=(ToolCall("host_facts"), ToolCall("find_models", {"name": "Kimi-K2.6", "roots": ["~/models", "/data"]})),
)


async def test_the_scripted_server_streams_as_a_chat_completions_server_does(monkeypatch):
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    with ScriptedChatServer([STREAMED] * 3, turn_by="request", chunk_chars=6) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="sk-none")
        stream = await client.chat.completions.create(
            model=MODEL_NAME,
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
        # Each call's arguments in several chunks after the one that names it; the usage in a last, choice-less chunk.
        deltas = [c.choices[0].delta.tool_calls[0] for c in chunks if c.choices and c.choices[0].delta.tool_calls]
        pieces = [d for d in deltas if d.index == 1 and d.id is None]
        assert len(pieces) >= 3 and "".join(p.function.arguments for p in pieces) == STREAMED.calls[1].arguments
        assert [d.id for d in deltas if d.id] == ["call_0_0", "call_0_1"]
        assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
            "tool_calls"
        ]
        assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == server.requests[0].usage["prompt_tokens"]

        # pydantic-ai's OpenAIChatModel, streamed and not: the same answer.
        model = openai_chat_model(MODEL_NAME, base_url=server.base_url)
        messages = [ModelRequest(parts=[UserPromptPart("go")])]
        params = ModelRequestParameters(
            function_tools=[
                ToolDefinition(name=c.name, parameters_json_schema={"type": "object"}) for c in STREAMED.calls
            ],
            allow_text_output=True,
        )
        async with model.request_stream(messages, None, params) as streamed:
            async for _ in streamed:
                pass
        whole = await model.request(messages, None, params)
    assert server.requests[1].stream and server.requests[1].body["stream_options"] == {"include_usage": True}
    assert not server.requests[2].stream
    for response, request in ((streamed.get(), server.requests[1]), (whole, server.requests[2])):
        thinking = [p.content for p in response.parts if isinstance(p, ThinkingPart)]
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        called = [
            (p.tool_name, p.args_as_dict(), p.tool_call_id) for p in response.parts if isinstance(p, ToolCallPart)
        ]
        assert thinking == [STREAMED.reasoning] and text == STREAMED.text
        assert called == [
            ("host_facts", {}, "call_1_0" if request.stream else "call_2_0"),
            ("find_models", STREAMED.calls[1].args, "call_1_1" if request.stream else "call_2_1"),
        ]
        assert response.finish_reason == "tool_call" and response.usage.input_tokens == request.usage["prompt_tokens"]
        assert response.usage.cache_read_tokens == request.usage["prompt_tokens_details"]["cached_tokens"]
