"""How long replaying a 1,000-event transcript takes (issue 5: under 2 s).

Records a real run of about 1,000 events through the agent loop on the local
host: a scripted policy (a pydantic-ai FunctionModel, so `replay` serves its
recorded responses) shaped like an agent at work: each turn it looks at the
host with CALLS `shell` calls at once (models batch independent reads), and
every third turn it updates a 10-item plan. Then it replays the run offline
(`specops replay`: no model, no host, every event compared with the
recording) and prints the wall time, best of five, reading included, and the
process's CPU time (steadier on a shared machine).

The loop's cost per turn grows with the history (pydantic-ai walks it every
turn), so the same 1,000 events in more, smaller turns take longer: --calls 1
shows that case.

    .venv/bin/python benchmarks/replay_1000_events.py [--events 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from specops.agent.budget import Budgets  # noqa: E402
from specops.agent.replay import replay_async  # noqa: E402
from specops.agent.run import RunOptions, run_goal_async  # noqa: E402
from specops.transcripts import read_transcript  # noqa: E402

GOAL = "benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
PLAN_ITEMS = 10


def scripted(turns: int, calls: int) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = sum(1 for m in messages if m.kind == "response")
        if n >= turns:
            return ModelResponse(
                parts=[ToolCallPart(info.output_tools[0].name, {"status": "completed", "summary": "done"})]
            )
        if n % 3 == 0:
            done = (n * PLAN_ITEMS) // max(turns, 1)
            todos = [
                {
                    "id": f"t{i}",
                    "content": f"step {i} of the job",
                    "priority": "medium",
                    "status": "completed" if i < done else "in_progress" if i == done else "pending",
                }
                for i in range(PLAN_ITEMS)
            ]
            return ModelResponse(parts=[ToolCallPart("todowrite", {"todos": todos}, tool_call_id=f"c{n}")])
        return ModelResponse(
            parts=[
                TextPart(f"Turn {n}: checking the host before the next step."),
                *(
                    ToolCallPart(
                        "shell",
                        {"argv": ["echo", f"round {n}, look {k}"], "reason": "look at the host"},
                        tool_call_id=f"c{n}-{k}",
                    )
                    for k in range(calls)
                ),
            ]
        )

    return FunctionModel(respond, model_name="scripted")


async def record(run_dir: Path, events: int, calls: int = 3) -> Path:
    per_turn = (2 * (2 + 2 * calls) + 5) / 3  # two turns of calls, then a plan update, in every three
    turns = int((events - 6) / per_turn)
    outcome = await run_goal_async(
        GOAL,
        host="local",
        policy=scripted(turns, calls),
        run_dir=run_dir,
        options=RunOptions(fsync=False),
        budgets=Budgets(max_requests=turns + 10, max_tool_calls=turns * calls + 10),
    )
    assert outcome.status == "completed", outcome.reason
    return run_dir


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=3, help="tool calls per turn")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = asyncio.run(record(Path(tmp) / "run", args.events, args.calls))
        events = read_transcript(run_dir / "transcript.jsonl").events
        count = len(events)
        turns = sum(e.type == "model_request" for e in events)
        times, cpu = [], []
        for _ in range(5):
            started, started_cpu = time.perf_counter(), time.process_time()
            result = asyncio.run(replay_async(run_dir))
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            assert result.ok, result.summary()
    print(
        f"replayed a {count}-event transcript ({turns} model turns, {args.calls} tool calls a turn) offline "
        f"with no divergence: best {min(times):.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)}; "
        f"CPU time of this process, best: {min(cpu):.2f} s)"
    )


if __name__ == "__main__":
    main()
