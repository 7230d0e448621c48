"""The playbook through the real agent loop on simulated worlds: the seed's run, a goal it cannot do, a bad drafter."""

from __future__ import annotations

import json

import pytest

from specops.agent.run import RunOptions, run_goal
from specops.tools.hosts import HostRequest

from ..jobs import job_timeout
from .transcript_calls import tool_calls

SEED_GOAL = (
    "https://huggingface.co/SubSir/Kimi-K2.6-DFlash-tmp-long -- try to download, evaluate accept lens, "
    "then deply, then benchmark"
)


@pytest.mark.slow
@job_timeout()
def test_seed_run_recovers_from_full_disk_and_broken_cli(tmp_path):
    # The room on / is another model's cache: deleting it takes the user's approval, given as the README does.
    # Every layout, without tuning and bracketing (their own tests cover them): what this run proves is the seed's
    # recovery and finding, and under four test workers the whole job takes minutes (5 beside two busy processes
    # and the rest of the suite: the timeout is a safety net for a hung run, not a speed limit).
    outcome = run_goal(
        SEED_GOAL,
        host=HostRequest(spec="sim:seed-ct200", options={"faults": ("full_disk", "broken_cli")}),
        policy="playbook:tune=false;bracket=false",
        options=RunOptions(
            runs_dir=tmp_path,
            fsync=False,
            allow_delete=("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",),
        ),
    )
    assert outcome.status == "completed", outcome.reason
    final = outcome.final
    tools = tool_calls(outcome.run_dir)
    names = [t for t, _, _ in tools if t != "todowrite"]
    assert tools[0][0] == "todowrite"
    # Full disk: checked, only what the user approved freed (dry run first), checked again, then the download.
    assert names.index("check_disk") < names.index("free_space") < names.index("start_download")
    frees = [(a, r) for t, a, r in tools if t == "free_space"]
    assert [f.get("dry_run", True) for f, _ in frees] == [True, False]
    assert all(d["approved_by"].startswith("--allow-delete cache:Qwen/") for d in frees[-1][1]["result"]["deleted"])
    # Broken CLI: the download went through the library and finished.
    assert any(a["method"] == "library" for t, a, _ in tools if t == "start_download")
    assert "hf CLI does not work" in final.summary or "restarted with the library" in final.summary
    # Baseline measured while downloading; DFlash only on layouts SGLang allows.
    watched = [t for t in tools if t[0] != "todowrite"]
    finished_at = next(
        i
        for i, (t, _, r) in enumerate(watched)
        if r["ok"] and (t == "wait_download" and r["result"]["status"]["state"] == "finished")
    )
    assert names.index("start_download") < names.index("benchmark") < finished_at
    launches = [a["config"] for t, a, r in tools if t == "launch_server" and r["ok"]]
    assert any(c.get("pp", 1) == 8 for c in launches)
    assert not any(c.get("speculative_algorithm") and c.get("pp", 1) > 1 for c in launches)
    report = json.loads((outcome.run_dir / "report.json").read_text())
    assert report["acceptance"]["overall"]["request_mean"] > 3.0
    kinds = {(b["speculative"], b["config"]) for b in report["benchmarks"]}
    assert any(spec for spec, _ in kinds) and any(not spec for spec, _ in kinds)
    # The seed's finding: DFlash wins at low load and loses the peak; said in words, crossover included.
    assert "wins at C=1" in final.recommendation and "crossover" in final.recommendation
    assert len(final.left_running) == 1 and "left running" in final.left_running[0]


@pytest.mark.slow
@job_timeout()
def test_goal_it_cannot_do(tmp_path):
    outcome = run_goal(
        "fine-tune SubSir/Kimi-K2.6-DFlash-tmp-long on my logs",
        host="sim:seed-ct200",
        policy="playbook",
        options=RunOptions(runs_dir=tmp_path, fsync=False),
    )
    assert outcome.final is not None and outcome.final.status == "cannot_do"
    assert [t for t, _, _ in tool_calls(outcome.run_dir)] == []


@pytest.mark.slow
@job_timeout()
def test_incompatible_drafter_stops_with_nothing_downloaded(tmp_path):
    outcome = run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-bad-layers",
        host="sim:seed-ct200",
        policy="playbook",
        options=RunOptions(runs_dir=tmp_path, fsync=False),
    )
    assert outcome.final is not None and outcome.final.status == "failed"
    names = [t for t, _, _ in tool_calls(outcome.run_dir)]
    assert "start_download" not in names and "launch_server" not in names
    assert "incompatible_drafter" in " ".join(outcome.final.unresolved)
