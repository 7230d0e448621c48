"""A start-up that hangs, through the real agent loop on the seed's simulated host: the playbook relaunches it once,
then stops and says how to wait longer (each file is one test worker's: this run is one of the suite's long ones)."""

from __future__ import annotations

import pytest

from specops.agent.run import RunOptions, run_goal
from specops.tools.hosts import HostRequest

from ..jobs import job_timeout
from .transcript_calls import tool_calls


@pytest.mark.slow
@job_timeout()
def test_a_stuck_load_is_relaunched_once_then_the_run_stops_naming_both_waits(tmp_path):
    # Every start-up hangs silently a third of the way (as an NCCL hang at start-up does): relaunching each of the
    # seven layouts would be hours of silence on a real host.
    outcome = run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=HostRequest(spec="sim:seed-ct200", options={"faults": ("load_hang:at_fraction=0.3",)}),
        policy="playbook",
        options=RunOptions(runs_dir=tmp_path, fsync=False),
    )
    assert outcome.status == "failed", outcome.reason
    launches = [(a["config"], r) for t, a, r in tool_calls(outcome.run_dir) if t == "launch_server"]
    assert len(launches) == 2 and launches[0][0] == launches[1][0]
    assert all(r["error"]["details"]["cause"] == "stalled" for _, r in launches)
    assert outcome.final is not None and not outcome.final.left_running
    why = outcome.final.unresolved[-1]  # the run's last line (`why:`)
    assert "stalled twice" in why and "min of the host's time" in why and "nothing else was launched" in why
    assert why.endswith("--launch-wait (the whole start-up)") and "--stall-wait" in why
