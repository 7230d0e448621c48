"""The wire path: the agent through the real openai client against a local OpenAI-compatible endpoint.

An aiohttp server on loopback plays a Chat Completions server with scripted
tool calls (no model behind it); the policy is `openai-chat:NAME` + base URL.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from pydantic_ai import models

from specops.agent.run import RunOptions, run_goal_async

from .scripted import GOAL, events, world_host  # noqa: F401

pytestmark = pytest.mark.timeout(60)

SCRIPT = [
    ("todowrite", {"todos": [{"id": "disk", "content": "Check disk", "status": "in_progress", "priority": "high"}]}),
    ("check_disk", {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long", "target": "~/models/dflash"}),
    ("final_result", {"status": "completed", "summary": "checked the disk"}),
]


def _completion(index: int, tool: str, args: dict) -> dict:
    return {
        "id": f"chatcmpl-{index}", "object": "chat.completion", "created": 1764000000, "model": "scripted-drafter-agent",
        "choices": [{
            "index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{index}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}},
            ]},
        }],
        "usage": {"prompt_tokens": 100 + index, "completion_tokens": 20, "total_tokens": 120 + index},
    }  # fmt: skip


@pytest.fixture
async def chat_server() -> AsyncIterator[tuple[str, list[dict]]]:
    received: list[dict] = []

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        received.append({"body": body, "auth": request.headers.get("Authorization")})
        tool, args = SCRIPT[min(len(received) - 1, len(SCRIPT) - 1)]
        return web.json_response(_completion(len(received), tool, args))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", received
    finally:
        await runner.cleanup()


async def test_openai_chat_policy_over_http(world_host, chat_server, tmp_path, monkeypatch):
    base_url, received = chat_server
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # loopback only: the server above
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test-wire-secret-123456")
    outcome = await run_goal_async(
        GOAL, host=world_host, policy="openai-chat:scripted-drafter-agent", run_dir=tmp_path / "run",
        options=RunOptions(fsync=False, base_url=base_url, api_key_env="SCRIPTED_KEY"),
    )  # fmt: skip
    assert outcome.status == "completed", outcome.reason
    assert outcome.final is not None and outcome.final.summary == "checked the disk"
    assert len(received) == 3
    first = received[0]["body"]
    assert first["model"] == "scripted-drafter-agent"
    assert received[0]["auth"] == "Bearer sk-test-wire-secret-123456"
    systems = [m for m in first["messages"] if m["role"] == "system"]
    assert len(systems) == 1 and "specops" in systems[0]["content"] and "Current plan" in systems[0]["content"]
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert {"todowrite", "check_disk", "start_download", "final_result"} <= set(tools)
    assert not any(t.get("strict") for t in tools.values())
    assert set(tools["check_disk"]["parameters"]["properties"]) >= {"repo_id", "target"}  # the args' own fields
    # The tool's answer went back over the wire as the tool message of the next request.
    tool_messages = [m for m in received[2]["body"]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[-1]["content"])["ok"] is True
    results = {e.tool: e for e in events(outcome, "tool_result")}
    assert results["check_disk"].ok and results["todowrite"].ok
    responses = events(outcome, "model_response")
    assert [r.usage.input_tokens for r in responses] == [101, 102, 103]
    start = events(outcome, "run_start")[0]
    assert start.policy.settings["base_url"] == base_url and start.policy.settings["api_key_env"] == "SCRIPTED_KEY"
    transcript = (outcome.run_dir / "transcript.jsonl").read_text()
    assert "sk-test-wire-secret-123456" not in transcript
