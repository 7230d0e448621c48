"""A benchmark level the server died in, measured again on a fresh server of the same configuration before the
playbook concludes (agent/policies/playbook_level_failure.py): the playbook through the real agent loop on the
seed's simulated host, with a crash under load that does or does not come back."""

from __future__ import annotations

import pytest

from specops.agent.run import RunOptions, run_goal
from specops.tools.hosts import HostRequest

from ..jobs import job_timeout
from .transcript_calls import tool_calls


def _crash_at_64(tmp_path, fault: str):
    # 48 running requests: above the acceptance eval's 40 at once (4 prompts x 5 datasets x thinking on and off),
    # below the top level's 64.
    return run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=HostRequest(spec="sim:seed-ct200", options={"faults": (fault,)}),
        policy="playbook:levels=1,64;ar_layouts=1;spec_layouts=1;tune=false;bracket=false;acceptance_prompts=4",
        options=RunOptions(runs_dir=tmp_path, fsync=False),
    )


def _speculative_launches(run_dir) -> list[dict]:
    return [
        a["config"]
        for t, a, _ in tool_calls(run_dir)
        if t == "launch_server" and a["config"].get("speculative_algorithm")
    ]


@pytest.mark.slow
@job_timeout()
def test_a_crash_that_does_not_come_back_on_a_fresh_server_is_transient_and_caps_nothing(tmp_path):
    # The first DFlash server dies under load at C=64; the second one of the same configuration does not.
    outcome = _crash_at_64(tmp_path, "crash_under_load:at_running=48,times=1")
    assert outcome.status == "completed", outcome.reason
    launches = _speculative_launches(outcome.run_dir)
    assert len(launches) >= 3 and launches[0] == launches[1]  # measured again on the same configuration; deployed
    # Nothing capped: every DFlash server may run as many requests as the top level sends (the playbook's default).
    assert all(config["max_running_requests"] == 64 for config in launches)
    summary = outcome.final.summary
    assert "measured again from C=64 on a fresh server" in summary and "transient" in summary
    assert "only recommended under" not in (outcome.final.recommendation or "")


@pytest.mark.slow
@job_timeout()
def test_a_crash_that_comes_back_on_a_fresh_server_caps_what_is_deployed(tmp_path):
    outcome = _crash_at_64(tmp_path, "crash_under_load:at_running=48")
    launches = _speculative_launches(outcome.run_dir)
    assert launches[0] == launches[1] and launches[-1].get("max_running_requests") == 1
    assert "failed again" in outcome.final.summary and "it reproduces" in outcome.final.summary
    assert "only recommended under C=64" in (outcome.final.recommendation or "")
