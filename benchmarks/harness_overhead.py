"""The agent harness's own cost per step, tool time excluded.

A scripted policy (a pydantic-ai FunctionModel: no model time) rewrites the
todo list STEPS times and finishes; the run goes through the real loop on the
local host (recorder with fsync, guard, budgets, report). Two runs, of STEPS
and 4 x STEPS steps: the harness's time (wall time minus time inside tools)
per model request, for each, since a step's cost grows with the history the
model is sent (it is serialised and recorded every turn). Run:

    .venv/bin/python benchmarks/harness_overhead.py [STEPS]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from specops.agent.budget import Budgets
from specops.agent.run import RunOptions, run_goal
from specops.transcripts import read_transcript

GOAL = "benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"


def policy(steps: int) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = sum(1 for m in messages if m.kind == "response")
        if n < steps:
            todos = [
                {
                    "id": f"t{i}",
                    "content": f"step {i}",
                    "priority": "low",
                    "status": "completed" if i < n else "in_progress" if i == n else "pending",
                }
                for i in range(steps)
            ]
            return ModelResponse(parts=[ToolCallPart("todowrite", {"todos": todos})])
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, {"status": "completed", "summary": "done"})]
        )

    return FunctionModel(respond)


def measure(steps: int) -> tuple[float, int]:
    """(harness seconds, model requests) of one run of `steps` steps."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        outcome = run_goal(
            GOAL,
            host="local",
            policy=policy(steps),
            run_dir=Path(tmp) / "run",
            options=RunOptions(),
            budgets=Budgets(max_requests=steps + 10, max_tool_calls=steps + 10),
        )
        wall = time.perf_counter() - started
        events = read_transcript(outcome.run_dir / "transcript.jsonl").events
    assert outcome.status == "completed", outcome.reason
    tool_s = sum(e.duration_s for e in events if e.type == "tool_result")
    requests = sum(1 for e in events if e.type == "model_request")
    print(
        f"{steps:4d} steps: {requests} model requests, {len(events)} events, wall {wall:.2f} s, in tools {tool_s:.2f} s"
    )
    return wall - tool_s, requests


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    short, short_requests = measure(steps)
    long, long_requests = measure(4 * steps)
    print(
        f"harness overhead per step, tool time excluded: {1e3 * short / short_requests:.0f} ms over {steps} steps, "
        f"{1e3 * long / long_requests:.0f} ms over {4 * steps} (run set-up and the report included)"
    )
    marginal = (long - short) / (long_requests - short_requests)
    print(f"marginal cost of a step between the two: {1e3 * marginal:.0f} ms")


if __name__ == "__main__":
    main()
