"""The wire path: the agent through the real openai client against a local OpenAI-compatible endpoint.

The scripted Chat Completions server (chat_server.py) plays the model on loopback, one tool call per answer
here; the policy is `openai-chat:NAME` + base URL. test_openai_chat.py drives the same path further (several
calls in one answer, replay, resume, fork, eval).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic_ai import models

from specops.agent.plan_reminder import PLAN_MARK
from specops.agent.run import RunOptions, run_goal_async

from ..jobs import job_timeout
from .chat_server import ReceivedRequest, ScriptedChatServer, calls
from .scripted import GOAL, events, world_host  # noqa: F401

pytestmark = [job_timeout(), pytest.mark.slow]

SCRIPT = [
    calls(
        ("todowrite", {"todos": [{"id": "disk", "content": "Check disk", "status": "in_progress", "priority": "high"}]})
    ),
    calls(("check_disk", {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"})),
    calls(("final_result", {"status": "completed", "summary": "checked the disk"})),
]


@pytest.fixture
def chat_server() -> Iterator[tuple[str, list[ReceivedRequest]]]:
    with ScriptedChatServer(SCRIPT, model="scripted-drafter-agent") as server:
        yield server.base_url, server.requests


async def test_openai_chat_policy_over_http(world_host, chat_server, tmp_path, monkeypatch):
    base_url, received = chat_server
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # loopback only: the server above
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test-wire-secret-123456")
    outcome = await run_goal_async(
        GOAL,
        host=world_host,
        policy="openai-chat:scripted-drafter-agent",
        run_dir=tmp_path / "run",
        options=RunOptions(fsync=False, base_url=base_url, api_key_env="SCRIPTED_KEY"),
    )
    assert outcome.status == "completed", outcome.reason
    assert outcome.final is not None and outcome.final.summary == "checked the disk"
    assert len(received) == 3
    first = received[0].body
    assert first["model"] == "scripted-drafter-agent"
    assert received[0].headers["Authorization"] == "Bearer sk-test-wire-secret-123456"
    systems = [m for m in first["messages"] if m["role"] == "system"]
    assert len(systems) == 1 and "specops" in systems[0]["content"]
    # The plan travels at the end of each request (plan_reminder.py), not in the instructions.
    assert first["messages"][-1]["role"] == "user" and first["messages"][-1]["content"].startswith(PLAN_MARK)
    assert all(PLAN_MARK not in m["content"] for m in systems)
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert {"todowrite", "check_disk", "start_download", "final_result"} <= set(tools)
    assert not any(t.get("strict") for t in tools.values())
    assert set(tools["check_disk"]["parameters"]["properties"]) >= {"repo_id", "target"}  # the args' own fields
    # The tool's answer went back over the wire as the tool message of the next request.
    tool_messages = [m for m in received[2].messages if m["role"] == "tool"]
    assert "error" not in json.loads(tool_messages[-1]["content"])  # the view itself, no envelope
    results = {e.tool: e for e in events(outcome, "tool_result")}
    assert results["check_disk"].ok and results["todowrite"].ok
    responses = events(outcome, "model_response")
    assert [r.usage.input_tokens for r in responses] == [r.usage["prompt_tokens"] for r in received]
    start = events(outcome, "run_start")[0]
    assert start.policy.settings["base_url"] == base_url and start.policy.settings["api_key_env"] == "SCRIPTED_KEY"
    transcript = (outcome.run_dir / "transcript.jsonl").read_text()
    assert "sk-test-wire-secret-123456" not in transcript
