"""Test support: a scripted `openai-chat:` agent for the incompatible drafter, served over HTTP (chat_server.py).

The goal is eval scenario incompatible-drafter's: the drafter's target layers reach past the target's 61, so
the right course is to read the host, find the target, read the drafter's config, and stop with the reason,
downloading nothing. Six model requests; two answers call two tools at once; one answer comes with text, one
with reasoning; the target's path is taken from find_models' result, as a model would copy it. Nothing in it
changes the host, so it runs again the same on any seed-ct200 world.

Used by the openai-chat tests (run, replay, resume, fork, eval) and by the golden transcript
`openai-chat-incompatible-drafter` (agent/replay/golden.py records it through `serve`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from .chat_server import Answer, ReceivedRequest, ScriptedChatServer, ToolCall, calls

MODEL_NAME = "scripted-agent"
POLICY = f"openai-chat:{MODEL_NAME}"
REPO = "SubSir/Kimi-K2.6-DFlash-bad-layers"
GOAL = f"deploy and benchmark {REPO}"
SUMMARY = "Stopped before downloading: the drafter's target layers 64 and 70 are outside Kimi-K2.6's 61 layers."
_TARGET = re.compile(r"(/[^\s\"',]*?/models/Kimi-K2\.6)(?![\w-]|\.\w)")


def plan(facts: str, target: str, config: str, rest: str = "pending") -> dict:
    todos = [
        {"id": "facts", "content": "Read the host: GPUs, disks, SGLang", "status": facts, "priority": "high"},
        {"id": "target", "content": "Find the target model on the host", "status": target, "priority": "high"},
        {"id": "config", "content": f"Check {REPO} against the target", "status": config, "priority": "high"},
        {"id": "deploy", "content": "Download, launch and benchmark the drafter", "status": rest, "priority": "medium"},
    ]
    if rest == "cancelled":
        todos[-1]["reason"] = "the drafter does not fit the target"
    return {"todos": todos}


def read_config(request: ReceivedRequest) -> Answer:
    """The drafter's config against the target find_models reported (its path, copied from the tool's answer)."""
    found = next(
        (
            m
            for m in (_TARGET.search(msg.get("content") or "") for msg in request.messages if msg.get("role") == "tool")
            if m
        ),
        None,
    )
    if found is None:
        raise AssertionError("no tool answer of this conversation names the target's path")
    return calls(
        ("read_drafter_config", {"drafter": {"repo_id": REPO}, "target": {"path": found.group(1)}}),
        ("check_disk", {"repo_id": REPO, "target": "~/models/Kimi-K2.6-DFlash-bad-layers"}),
    )


SCRIPT = [
    calls(("todowrite", plan("in_progress", "pending", "pending")), text="I will plan, then read the host."),
    calls(("host_facts", {}), ("find_models", {})),
    calls(("todowrite", plan("completed", "completed", "in_progress"))),
    read_config,
    Answer(
        reasoning="read_drafter_config says target_layer_ids [64, 70]; Kimi-K2.6 has 61 layers, so SGLang cannot "
        "load this drafter. Nothing to download.",
        calls=(ToolCall("todowrite", plan("completed", "completed", "completed", rest="cancelled")),),
    ),
    calls(
        (
            "final_result",
            {
                "status": "failed",
                "summary": SUMMARY,
                "unresolved": ["a drafter trained for Kimi-K2.6's 61 layers is needed"],
            },
        )
    ),
]
# Each answer's parts: (text, reasoning, tool calls).
SHAPE = [(1, 0, 1), (0, 0, 2), (0, 0, 1), (0, 0, 2), (0, 1, 1), (0, 0, 1)]


@contextmanager
def serve() -> Iterator[str]:
    """The script served on loopback; its base URL (golden.py records the golden run through this)."""
    with ScriptedChatServer(SCRIPT) as server:
        yield server.base_url
