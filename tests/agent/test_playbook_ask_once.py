"""`--ask-once` with the playbook on the seed's full disk, through the real agent loop: the one round of questions
approves or declines freeing another model's cache."""

from __future__ import annotations

import json

import pytest

from specops.agent.run import RunOptions, run_goal
from specops.tools.hosts import HostRequest

from ..jobs import job_timeout
from .transcript_calls import tool_calls


def _ask_once_on_the_full_disk(tmp_path, answer: str):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": answer}))
    return run_goal(
        "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
        host=HostRequest(spec="sim:seed-ct200", options={"faults": ("full_disk", "broken_cli")}),
        policy="playbook:levels=1,32;ar_layouts=1;spec_layouts=1;tune=false;bracket=false;acceptance_prompts=4",
        options=RunOptions(runs_dir=tmp_path / "runs", fsync=False, ask_once=True, answers_file=answers),
    )


@pytest.mark.slow
@job_timeout()
def test_ask_once_approving_one_deletion_deletes_exactly_that_and_completes(tmp_path):
    outcome = _ask_once_on_the_full_disk(tmp_path, "yes")
    assert outcome.status == "completed", outcome.reason
    tools = tool_calls(outcome.run_dir)
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


@pytest.mark.slow
@job_timeout()
def test_ask_once_declined_deletes_nothing_and_says_what_would_free_room(tmp_path):
    outcome = _ask_once_on_the_full_disk(tmp_path, "no")
    assert outcome.status == "failed"
    tools = tool_calls(outcome.run_dir)
    assert [t for t, _, _ in tools if t == "ask_user"] == ["ask_user"]
    assert not [a for t, a, _ in tools if t == "free_space" and not a.get("dry_run", True)]
    assert outcome.final is not None
    said = " ".join([outcome.final.summary, *outcome.final.unresolved])
    assert "not approved" in said and "Nothing was deleted" in said
