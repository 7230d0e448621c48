"""Run one scenario: start its world, snapshot the host, run the agent, snapshot again, record what still runs.

The runner calls this in a child process per scenario (`python -m specops.evals.execute RUN_DIR`,
the Scenario as JSON on stdin), so that scenarios run side by side on both cores
and each run's logging and world stay its own. Everything the graders need is
written to RUN_DIR: the run's transcript and report (the agent writes them) and
eval_run.json (this module), which is also what `specops eval --regrade` reads.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import traceback
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .host_state import HostSnapshot, LiveServer
from .negative_controls import is_negative_control, negative_control_model
from .scenario import UNREACHABLE_HOST, Scenario
from .sim_host import HostUnderTest, start_host

EVAL_RUN = "eval_run.json"
EVAL_HUB_TOKEN = "hf_evalScenarioToken0123456789"  # a token the Hub emulator accepts for ungated repos


class ScenarioRun(BaseModel):
    """What one execution of a scenario left for the graders (besides the transcript and report)."""

    model_config = ConfigDict(extra="forbid")

    scenario: Scenario
    policy: str
    run_dir: str
    run_status: str | None = None
    reason: str | None = None
    duration_s: float = 0.0
    home: str | None = None
    before: HostSnapshot | None = None
    after: HostSnapshot | None = None
    live_servers: list[LiveServer] = Field(default_factory=list)
    harness_error: str | None = Field(default=None, description="The eval harness itself failed (not the agent)")


async def execute(scenario: Scenario, run_dir: Path, policy: str) -> ScenarioRun:
    from specops.agent.budget import Budgets
    from specops.agent.run import RunOptions, run_goal_async

    run_dir.mkdir(parents=True, exist_ok=True)
    record = ScenarioRun(scenario=scenario, policy=policy, run_dir=str(run_dir))
    budgets = Budgets(
        max_requests=scenario.run.max_requests,
        max_tool_calls=scenario.run.max_tool_calls,
        max_wall_s=scenario.run.max_wall_s,
        max_host_s=scenario.run.max_host_s,
    )
    options = RunOptions(
        runs_dir=run_dir.parent,
        allow_delete=tuple(scenario.run.allow_delete),
        max_repeats=scenario.run.max_repeats,
        fsync=False,
    )
    if scenario.run.hub_token:
        os.environ["HF_TOKEN"] = EVAL_HUB_TOKEN
    else:
        os.environ.pop("HF_TOKEN", None)
        os.environ.pop("HUGGING_FACE_HUB_TOKEN", None)
    sim: HostUnderTest | None = None
    start = time.monotonic()
    try:
        if scenario.host.unreachable:
            host = UNREACHABLE_HOST
        else:
            sim = start_host(scenario, run_dir)
            record.home = sim.home
            record.before = sim.snapshot()
            host = sim.spec
        model = negative_control_model(policy) if is_negative_control(policy) else policy
        outcome = await run_goal_async(
            scenario.goal, host=host, policy=model, budgets=budgets, run_dir=run_dir, options=options
        )
        record.run_status, record.reason = outcome.status, outcome.reason
        if sim is not None:
            record.after = sim.snapshot()
            record.live_servers = sim.live_servers()
    except Exception as exc:  # the harness (world start, snapshot) failed: graded as a failure, with the cause
        record.harness_error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
    finally:
        record.duration_s = round(time.monotonic() - start, 2)
        if sim is not None:
            sim.close()
        (run_dir / EVAL_RUN).write_text(record.model_dump_json(indent=1), encoding="utf-8")
    return record


def load_run(run_dir: Path) -> ScenarioRun:
    return ScenarioRun.model_validate_json((run_dir / EVAL_RUN).read_text(encoding="utf-8"))


def main(argv: list[str]) -> int:
    """RUN_DIR POLICY, the Scenario as JSON on stdin."""
    run_dir, policy = Path(argv[0]), argv[1]
    scenario = Scenario.model_validate_json(sys.stdin.read())
    record = asyncio.run(execute(scenario, run_dir, policy))
    return 0 if record.harness_error is None else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
