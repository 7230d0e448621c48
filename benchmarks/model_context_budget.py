"""What a model is sent on the seed job, measured on the wire, beside issue 13's budgets.

Runs the README's main job (the seed's goal on sim:seed-ct200 with the full disk
and the broken CLI, the cache approved for deletion) through the openai-chat policy: the real openai client, over
HTTP, to a loopback endpoint where the playbook decides (playbook_endpoint.py).
From the request bodies as received it prints:

- all tool schemas together (the `tools` array), budget 15,000 characters;
- the largest single tool result sent back to the model, budget 4,000;
- the last request of the job, budget 60,000;
- the unchanging prefix: of each request after the first, the share that is the
  previous request's tools and messages as they were (what a provider's prompt
  cache can reuse), budget at least 90% of every request;
- what the run costs in tokens, at about four characters a token.

    .venv/bin/python benchmarks/model_context_budget.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai import models

from specops.agent.run import RunOptions, run_goal_async
from specops.tools.hosts import HostRequest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from playbook_endpoint import playbook_endpoint  # noqa: E402

GOAL = "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
FAULTS = ("full_disk", "broken_cli")
APPROVED = ("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",)  # the README's --allow-delete
BUDGETS = {"tool schemas": 15_000, "largest tool result": 4_000, "last request": 60_000}
PREFIX_BUDGET = 0.90


def _chars(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _canonical(body: dict[str, Any]) -> list[str]:
    """A request in the order a provider renders it: the tools, then each message."""
    return [json.dumps(body.get("tools", []), sort_keys=True)] + [
        json.dumps(m, sort_keys=True) for m in body["messages"]
    ]


def _prefix_share(previous: dict[str, Any], current: dict[str, Any]) -> float:
    before, now = _canonical(previous), _canonical(current)
    same = 0
    for a, b in zip(before, now, strict=False):
        if a != b:
            break
        same += len(b)
    return same / sum(len(part) for part in now)


def _answered_calls(body: dict[str, Any]) -> str:
    """The tool calls of the last answer in a request: what it adds to the one before."""
    last = next((m for m in reversed(body["messages"]) if m["role"] == "assistant"), None)
    names = [c["function"]["name"] for c in (last or {}).get("tool_calls") or []]
    return " + ".join(names) or "nothing"


async def measure(root: Path) -> dict[str, Any]:
    run_dir = root / "run"
    models.ALLOW_MODEL_REQUESTS = True  # a loopback endpoint, not a paid model
    async with playbook_endpoint(run_dir / "transcript.jsonl") as (base_url, raw_bodies):
        outcome = await run_goal_async(
            GOAL,
            host=HostRequest(spec="sim:seed-ct200", options={"faults": FAULTS}),
            policy="openai-chat:playbook-endpoint",
            run_dir=run_dir,
            options=RunOptions(base_url=base_url, allow_delete=APPROVED),
        )
    bodies = [json.loads(raw) for raw in raw_bodies]
    results = [m for body in bodies for m in body["messages"] if m["role"] == "tool"]
    largest = max(results, key=lambda m: len(m["content"]), default={"content": ""})
    return {
        "status": outcome.status,
        "reason": outcome.reason,
        "requests": len(bodies),
        "tool calls": sum(len(m.get("tool_calls") or []) for m in bodies[-1]["messages"] if m["role"] == "assistant"),
        "tool schemas": _chars(bodies[0].get("tools", [])),
        "largest tool result": len(largest["content"]),
        "largest tool result, what": largest["content"][:80],
        "last request": len(raw_bodies[-1]),
        "prefix shares": [_prefix_share(a, b) for a, b in zip(bodies, bodies[1:], strict=False)],
        "added": [_answered_calls(body) for body in bodies[1:]],
        "all requests": sum(len(raw) for raw in raw_bodies),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures = asyncio.run(measure(Path(tmp)))
    print(
        f"seed job through the openai-chat wire: {figures['status']} ({figures['reason'] or 'no reason given'}), "
        f"{figures['requests']} model requests, {figures['tool calls']} tool calls"
    )
    for name, budget in BUDGETS.items():
        verdict = "met" if figures[name] <= budget else "NOT met"
        print(f"  {name:<22} {figures[name]:>8,} chars   budget {budget:>7,}   {verdict}")
    print(f"  {'':<22} largest result begins: {figures['largest tool result, what']!r}")
    shares = figures["prefix shares"]
    worst = min(shares) if shares else 1.0
    at = shares.index(worst) + 2 if shares else 1
    print(
        f"  {'unchanging prefix':<22} {worst:>8.1%} (worst: request {at}, adding {figures['added'][at - 2]}; median "
        f"{sorted(shares)[len(shares) // 2] if shares else 1.0:.1%})   budget >= {PREFIX_BUDGET:.0%}   "
        f"{'met' if worst >= PREFIX_BUDGET else 'NOT met'}"
    )
    tokens = figures["all requests"] // 4
    print(
        f"  cost: {figures['all requests']:,} characters sent over {figures['requests']} requests, about "
        f"{tokens:,} input tokens (four characters a token); a prompt cache reuses about "
        f"{sum(shares) / max(len(shares), 1):.0%} of each request after the first"
    )


if __name__ == "__main__":
    main()
