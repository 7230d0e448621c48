"""Opening the run's host: one that does not answer ends the run cleanly; sim:PROFILE starts a world for the run."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from specops.agent.run import RunOptions, run_goal_async
from specops.sim.profiles import load_profile
from specops.tools.hosts import HostRequest

from ..jobs import job_timeout
from .scripted import GOAL, call, events, scripted

pytestmark = [job_timeout(), pytest.mark.slow]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when we return: nothing listens there


@pytest.mark.parametrize("host", ["ssh://root@127.0.0.1:{closed_port}", "sim:/nonexistent/world"])
async def test_a_host_that_does_not_answer_ends_the_run(host, tmp_path):
    # The port is found when the test runs, not when it is collected (parallel workers collect apart).
    host = host.format(closed_port=_closed_port())
    outcome = await run_goal_async(
        GOAL, host=host, policy=scripted(call("host_facts")), run_dir=tmp_path / "run", options=RunOptions(fsync=False)
    )
    assert outcome.status == "failed" and outcome.exit_code != 0
    assert host.split("@")[-1].split(":")[0] in outcome.reason or "nonexistent" in outcome.reason
    kinds = [e.type for e in events(outcome)]
    assert "model_request" not in kinds and "tool_call" not in kinds  # the policy never ran
    assert [e.kind for e in events(outcome, "error")][0] == "host_not_answering"
    assert kinds[-1] == "run_end"


async def test_sim_profile_starts_a_world_for_the_run_and_closes_it(tmp_path):
    outcome = await run_goal_async(
        GOAL,
        host=HostRequest(spec="sim:seed-ct200", options={"faults": ("missing_repo:repo_id=nobody/missing",)}),
        policy=scripted(call("check_disk", {"repo_id": "nobody/missing", "target": "~/m"})),
        run_dir=tmp_path / "run",
        options=RunOptions(fsync=False),
    )
    assert outcome.status == "completed"
    [opened] = [e.host for e in events(outcome, "host_opened")]
    # A quick run (no --time-scale) runs at the profile's fast_time_scale; the world's summary reports it.
    assert opened.sim["time_scale"] == load_profile("seed-ct200").sim.fast_time_scale
    assert "missing_repo" in str(opened.sim)
    root = Path(opened.sim["root"])
    assert not root.exists()  # the world the run started is gone with it
    assert events(outcome, "tool_result")[0].error.kind == "repo_not_found"
