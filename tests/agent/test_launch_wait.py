"""--launch-wait reaches the launch: a load longer than the user's limit is stopped at it, and the error says how to
wait longer (in the modelled host's seconds on a sim host)."""

from __future__ import annotations

import json

import pytest

from specops.transcripts import pair_tool_calls, read_transcript

from ..jobs import job_timeout
from .scripted import invoke_run

pytestmark = [job_timeout(), pytest.mark.slow]

QUICK = "playbook:levels=1;ar_layouts=1;spec_layouts=1;acceptance_prompts=4"


def test_a_load_past_the_users_launch_wait_is_stopped_there_and_says_how_to_wait_longer(tmp_path):
    # 6 x 420 s of loading against a 1000 s wait: every launch is cut at the wait, its log still moving.
    result = invoke_run(
        tmp_path,
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
        "--host",
        "sim:seed-ct200",
        "--model",
        QUICK,
        "--sim-fault",
        "slow_load:factor=6",
        "--launch-wait",
        "1000",
    )
    assert result.exit_code == 1, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    launches = [
        p for p in pair_tool_calls(read_transcript(run_dir / "transcript.jsonl").events) if p.tool == "launch_server"
    ]
    assert launches and all(p.result is not None and p.result.error is not None for p in launches)
    error = launches[0].result.error
    assert error.details["cause"] == "timeout" and "still starting after 1000 s" in error.what
    assert "--launch-wait (now 1000 s)" in error.remedy
    assert json.loads((run_dir / "report.json").read_text())["run"]["status"] == "failed"
