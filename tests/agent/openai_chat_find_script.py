"""Test support: a scripted `openai-chat:` agent for a goal as people say it, naming no repo, served over HTTP.

"is there an EAGLE-3 drafter for Kimi-K2.6 worth trying?" names no repo id; the harness gives it to the model with
its hints (target Kimi-K2.6, algorithm EAGLE3, no repo). The right course: read the host, find the target, search
the Hub, take the EAGLE-3 drafter whose card names the target, read its config against the target, and answer with
the choice and why, downloading nothing (the question asks whether one exists, not to benchmark it). The drafter is
taken from search_hub's answer and the target's path from find_models', as a model would copy them.

Recorded as the golden transcript `openai-chat-find-drafter` (agent/replay/golden.py), so its replay checks what a
model is sent and offered for such a goal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

from .chat_server import Answer, ReceivedRequest, ScriptedChatServer, ToolCall, calls

GOAL = "is there an EAGLE-3 drafter for Kimi-K2.6 worth trying?"
_TARGET = re.compile(r"(/[^\s\"',]*?/models/Kimi-K2\.6)(?![\w-]|\.\w)")


def plan(*statuses: str) -> dict:
    steps = [
        ("facts", "Read the host and find the target"),
        ("search", "Search the Hub for an EAGLE-3 drafter for Kimi-K2.6"),
        ("check", "Check the likeliest one's config against the target"),
    ]
    return {
        "todos": [
            {"id": i, "content": c, "status": s, "priority": "high"} for (i, c), s in zip(steps, statuses, strict=True)
        ]
    }


def _tool_answers(request: ReceivedRequest) -> list[str]:
    return [msg.get("content") or "" for msg in request.messages if msg.get("role") == "tool"]


def _found_drafter(request: ReceivedRequest) -> str:
    """The EAGLE-3 repo search_hub listed for the target, by its card's base model, as a model would pick it."""
    for content in _tool_answers(request):
        try:
            listing = json.loads(content)
        except ValueError:
            continue
        for model in listing.get("models", []) if isinstance(listing, dict) else []:
            bases = " ".join(model.get("base_models", []))
            if "EAGLE3" in model.get("algorithm_words", []) and "moonshotai/Kimi-K2.6" in bases:
                return model["repo_id"]
    raise AssertionError("no search_hub answer of this conversation lists an EAGLE-3 drafter for Kimi-K2.6")


def check_config(request: ReceivedRequest) -> Answer:
    target = next((m for m in (_TARGET.search(c) for c in _tool_answers(request)) if m), None)
    if target is None:
        raise AssertionError("no tool answer of this conversation names the target's path")
    drafter = _found_drafter(request)
    return calls(
        ("todowrite", plan("completed", "completed", "in_progress")),
        ("read_drafter_config", {"drafter": {"repo_id": drafter}, "target": {"path": target.group(1)}}),
    )


def answer(request: ReceivedRequest) -> Answer:
    drafter = _found_drafter(request)
    return Answer(
        reasoning="the config reads as EAGLE3 for moonshotai/Kimi-K2.6 and fits the target on the host",
        calls=(
            ToolCall("todowrite", plan("completed", "completed", "completed")),
            ToolCall(
                "final_result",
                {
                    "status": "completed",
                    "summary": f"Yes: {drafter} is an EAGLE-3 drafter whose card names Kimi-K2.6 as its base; its "
                    "config reads as EAGLE3 and fits the Kimi-K2.6 on the host. Nothing was downloaded.",
                    "recommendation": f"benchmark it: specops run 'deploy and benchmark {drafter}'",
                },
            ),
        ),
    )


SCRIPT = [
    calls(("todowrite", plan("in_progress", "pending", "pending")), text="Plan first, then the host."),
    calls(("host_facts", {}), ("find_models", {})),
    calls(
        ("todowrite", plan("completed", "in_progress", "pending")),
        ("search_hub", {"search": "Kimi-K2.6", "sort": "downloads", "limit": 20}),
    ),
    check_config,
    answer,
]


@contextmanager
def serve() -> Iterator[str]:
    """The script served on loopback; its base URL (golden.py records the golden run through this)."""
    with ScriptedChatServer(SCRIPT) as server:
        yield server.base_url
