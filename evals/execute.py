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

import yaml
from pydantic import BaseModel, ConfigDict, Field

from specops.sim.faults import parse_fault
from specops.sim.profiles import Profile, load_profile
from specops.sim.world.world import SimWorld

from .host_state import HostSnapshot, LiveServer, live_servers
from .negative_controls import is_negative_control, negative_control_model
from .scenario import UNREACHABLE_HOST, Scenario

EVAL_RUN = "eval_run.json"
SSH_HOST_NAME = "eval-sim-over-ssh"
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


def scenario_profile(scenario: Scenario) -> Profile:
    """The scenario's sim profile, with its download bandwidth when it sets one."""
    assert scenario.host.profile is not None, "a reachable host has a sim profile (HostSetup checks it)"
    profile = load_profile(scenario.host.profile)
    if scenario.host.download_mb_s is not None:
        network = profile.network.model_copy(update={"download_mb_s": scenario.host.download_mb_s})
        profile = profile.model_copy(update={"network": network})
    return profile


def _start_world(scenario: Scenario) -> SimWorld:
    faults = [parse_fault(f) for f in scenario.host.faults]
    scales = {
        k: v
        for k, v in {"time_scale": scenario.host.time_scale, "load_time_scale": scenario.host.load_time_scale}.items()
        if v is not None
    }
    return SimWorld.start_fast(scenario_profile(scenario), faults=faults, **scales)


def _ssh_inventory(world: SimWorld, run_dir: Path) -> str:
    """Serve the world over SSH and name it in an inventory this process points SPECOPS_INVENTORY at."""
    ssh = world.start_ssh()
    options = ssh.options()
    inventory = run_dir / "inventory.yaml"
    inventory.write_text(
        yaml.safe_dump({SSH_HOST_NAME: {"url": ssh.url, **options, "key_filename": [options["key_filename"]]}})
    )
    os.environ["SPECOPS_INVENTORY"] = str(inventory)
    return SSH_HOST_NAME


async def execute(scenario: Scenario, run_dir: Path, policy: str) -> ScenarioRun:
    from specops.agent.budget import Budgets
    from specops.agent.run import RunOptions, run_goal_async

    run_dir.mkdir(parents=True, exist_ok=True)
    record = ScenarioRun(scenario=scenario, policy=policy, run_dir=str(run_dir))
    budgets = Budgets(
        max_requests=scenario.run.max_requests,
        max_tool_calls=scenario.run.max_tool_calls,
        max_wall_s=scenario.run.max_wall_s,
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
    world = None
    start = time.monotonic()
    try:
        if scenario.host.unreachable:
            host = UNREACHABLE_HOST
        else:
            world = _start_world(scenario)
            record.home = str(world.layout.home)
            record.before = HostSnapshot.take(world.layout)
            host = _ssh_inventory(world, run_dir) if scenario.host.over_ssh else world.host_spec
        model = negative_control_model(policy) if is_negative_control(policy) else policy
        outcome = await run_goal_async(
            scenario.goal, host=host, policy=model, budgets=budgets, run_dir=run_dir, options=options
        )
        record.run_status, record.reason = outcome.status, outcome.reason
        if world is not None:
            record.after = HostSnapshot.take(world.layout)
            record.live_servers = live_servers(world.layout, os.getpid())
    except Exception as exc:  # the harness (world start, snapshot) failed: graded as a failure, with the cause
        record.harness_error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
    finally:
        record.duration_s = round(time.monotonic() - start, 2)
        if world is not None:
            world.close()
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
