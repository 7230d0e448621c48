"""The playbook through the real agent loop on simulated worlds: the seed's run, a goal it cannot do, a bad drafter."""

from __future__ import annotations

import json

import pytest

from specops.agent.run import RunOptions, run_goal
from specops.tools.hosts import HostRequest

SEED_GOAL = (
    "https://huggingface.co/SubSir/Kimi-K2.6-DFlash-tmp-long -- try to download, evaluate accept lens, "
    "then deply, then benchmark"
)


def _tools(run_dir) -> list[tuple[str, dict, dict]]:
    """(tool, args, result event) of every call in the transcript, in order."""
    events = [json.loads(line) for line in (run_dir / "transcript.jsonl").read_text().splitlines()]
    calls = {e["call_id"]: e for e in events if e["type"] == "tool_call"}
    return [(e["tool"], calls[e["call_id"]]["args"], e) for e in events if e["type"] == "tool_result"]


@pytest.mark.timeout(400)
def test_seed_run_recovers_from_full_disk_and_broken_cli(tmp_path):
    # The room on / is another model's cache: deleting it takes the user's approval, given as the README does.
    # Every layout, without tuning and bracketing (their own tests cover them): what this run proves is the seed's
    # recovery and finding, and under four test workers the whole job takes minutes.
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
    tools = _tools(outcome.run_dir)
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


@pytest.mark.timeout(60)
def test_goal_it_cannot_do(tmp_path):
    outcome = run_goal(
        "fine-tune SubSir/Kimi-K2.6-DFlash-tmp-long on my logs",
        host="sim:seed-ct200",
        policy="playbook",
        options=RunOptions(runs_dir=tmp_path, fsync=False),
    )
    assert outcome.final is not None and outcome.final.status == "cannot_do"
    assert [t for t, _, _ in _tools(outcome.run_dir)] == []


@pytest.mark.timeout(90)
def test_incompatible_drafter_stops_with_nothing_downloaded(tmp_path):
    outcome = run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-bad-layers",
        host="sim:seed-ct200",
        policy="playbook",
        options=RunOptions(runs_dir=tmp_path, fsync=False),
    )
    assert outcome.final is not None and outcome.final.status == "failed"
    names = [t for t, _, _ in _tools(outcome.run_dir)]
    assert "start_download" not in names and "launch_server" not in names
    assert "incompatible_drafter" in " ".join(outcome.final.unresolved)


@pytest.mark.timeout(120)
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
    launches = [(a["config"], r) for t, a, r in _tools(outcome.run_dir) if t == "launch_server"]
    assert len(launches) == 2 and launches[0][0] == launches[1][0]
    assert all(r["error"]["details"]["cause"] == "stalled" for _, r in launches)
    assert outcome.final is not None and not outcome.final.left_running
    why = outcome.final.unresolved[-1]  # the run's last line (`why:`)
    assert "stalled twice" in why and "min of the host's time" in why and "nothing else was launched" in why
    assert why.endswith("--launch-wait (the whole start-up)") and "--stall-wait" in why


def _ask_once_on_the_full_disk(tmp_path, answer: str):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": answer}))
    return run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=HostRequest(spec="sim:seed-ct200", options={"faults": ("full_disk", "broken_cli")}),
        policy="playbook:levels=1,32;ar_layouts=1;spec_layouts=1;tune=false;bracket=false;acceptance_prompts=4",
        options=RunOptions(runs_dir=tmp_path / "runs", fsync=False, ask_once=True, answers_file=answers),
    )


@pytest.mark.timeout(180)
def test_ask_once_approving_one_deletion_deletes_exactly_that_and_completes(tmp_path):
    outcome = _ask_once_on_the_full_disk(tmp_path, "yes")
    assert outcome.status == "completed", outcome.reason
    tools = _tools(outcome.run_dir)
    names = [t for t, _, _ in tools if t != "todowrite"]
    # Asked once, after the read-only checks and before the first change, for what would make room (never the
    # goal's own target model), then freed exactly that.
    asked = [a for t, a, _ in tools if t == "ask_user"]
    assert asked == [{"delete": ["cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"]}]
    assert names.index("list_freeable") < names.index("ask_user") < names.index("free_space")
    deleted = [
        d for t, a, r in tools if t == "free_space" and not a.get("dry_run", True) for d in r["result"]["deleted"]
    ]
    assert deleted and all("Qwen3-235B-A22B-Instruct-2507-FP8" in d["path"] for d in deleted)
    assert all("--ask-once round" in d["approved_by"] for d in deleted)


@pytest.mark.timeout(120)
def test_ask_once_declined_deletes_nothing_and_says_what_would_free_room(tmp_path):
    outcome = _ask_once_on_the_full_disk(tmp_path, "no")
    assert outcome.status == "failed"
    tools = _tools(outcome.run_dir)
    assert [t for t, _, _ in tools if t == "ask_user"] == ["ask_user"]
    assert not [a for t, a, _ in tools if t == "free_space" and not a.get("dry_run", True)]
    assert outcome.final is not None
    said = " ".join([outcome.final.summary, *outcome.final.unresolved])
    assert "not approved" in said and "Nothing was deleted" in said
