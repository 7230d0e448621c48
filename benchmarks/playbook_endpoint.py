"""The playbook behind an OpenAI-compatible endpoint: a run through the openai-chat wire with the playbook deciding.

A measuring harness, not a policy: it lets the seed job run through the real
openai client, over HTTP, with every request on the wire exactly as a model
would receive it, and the playbook's decisions. The wire carries the compact
views a model is sent; the playbook plans on full results, so the endpoint
reads those from the run's transcript by tool-call id (the only thing the
wire does not carry). It records each request body as received.

    async with playbook_endpoint(transcript_path) as (base_url, bodies): ...
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart

from specops.agent.final import FinalAnswer
from specops.agent.policies.playbook import next_action
from specops.transcripts import read_transcript

OUTPUT_TOOL = "final_result"


def _full_results(transcript: Path) -> dict[str, dict[str, Any]]:
    results = {}
    for event in read_transcript(transcript).events:
        if event.type == "tool_result":
            error = event.error.model_dump(mode="json") if event.error is not None else None
            results[event.call_id] = {"ok": True, "result": event.result} if event.ok else {"ok": False, "error": error}
    return results


def _history(body: dict[str, Any], transcript: Path) -> list[ModelMessage]:
    """What the playbook reads: the goal (the first user message) and each tool return, in full, by call id."""
    full = _full_results(transcript)
    names: dict[str, str] = {}  # call id -> tool, from the calls the assistant made: the playbook reads results typed
    messages: list[ModelMessage] = []
    for message in body["messages"]:
        if message["role"] == "user" and not messages:
            messages.append(ModelRequest(parts=[UserPromptPart(str(message["content"]))]))
        elif message["role"] == "assistant":
            names.update({c["id"]: c["function"]["name"] for c in message.get("tool_calls") or []})
        elif message["role"] == "tool":
            call_id = message["tool_call_id"]
            content = full.get(call_id) or json.loads(message["content"])
            messages.append(ModelRequest(parts=[ToolReturnPart(names.get(call_id, ""), content, tool_call_id=call_id)]))
    return messages


def _completion(index: int, calls: list[tuple[str, str, dict[str, Any]]], prompt_chars: int) -> dict[str, Any]:
    tool_calls = [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for call_id, name, args in calls
    ]
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": 1764000000,
        "model": "playbook-endpoint",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
            }
        ],
        # About four characters a token: enough to show what a run costs, not a tokenizer's count.
        "usage": {
            "prompt_tokens": prompt_chars // 4,
            "completion_tokens": 20 * len(calls),
            "total_tokens": prompt_chars // 4 + 20 * len(calls),
        },
    }


@asynccontextmanager
async def playbook_endpoint(transcript: Path) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A loopback Chat Completions server whose answers are the playbook's; yields (base URL, raw request bodies)."""
    bodies: list[bytes] = []

    async def completions(request: web.Request) -> web.Response:
        raw = await request.read()
        bodies.append(raw)
        action = next_action(_history(json.loads(raw), transcript))
        if isinstance(action, FinalAnswer):
            calls = [("pb-final", OUTPUT_TOOL, action.model_dump(mode="json"))]
        else:
            step, chosen = action
            calls = [(f"pb-{step}-{i}", c.tool, c.args) for i, c in enumerate(chosen)]
        return web.json_response(_completion(len(bodies), calls, len(raw)))

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", bodies
    finally:
        await runner.cleanup()
