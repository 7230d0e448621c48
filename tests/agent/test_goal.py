"""Goals are parsed before anything runs; unusable ones are refused with a message, nothing written."""

from __future__ import annotations

import pytest

from specops.agent.goal import GoalRefused, parse_goal
from specops.agent.run import RunOptions, run_goal

SEED = (
    "https://huggingface.co/SubSir/Kimi-K2.6-DFlash-tmp-long -- try to download, evaluate accept lens, then deply, "
    "then benchmark; Do not ask questions or stop, run non-interactively"
)


def test_the_seed_goal():
    goal = parse_goal(SEED)
    assert goal.repo_id == "SubSir/Kimi-K2.6-DFlash-tmp-long"
    assert goal.intents == ("deploy", "evaluate", "benchmark")


@pytest.mark.parametrize(
    ("text", "repo", "intents"),
    [
        ("benchmark z-lab/Qwen3-8B-DFlash-b16 at 1 and 64 tok/s levels", "z-lab/Qwen3-8B-DFlash-b16", ("benchmark",)),
        ("compare https://hf.co/org/drafter/tree/main. against the baseline", "org/drafter", ("compare",)),
        ("org/drafter", "org/drafter", ("deploy", "evaluate", "benchmark")),
    ],
)
def test_repo_ids_and_intents(text, repo, intents):
    goal = parse_goal(text)
    assert (goal.repo_id, goal.intents) == (repo, intents)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("deploy the drafter and benchmark it", "names no Hugging Face repo"),
        ("benchmark org/drafter;rm -rf ~", "shell metacharacters"),
        ("deploy https://huggingface.co/org/$(reboot)", "shell metacharacters"),
        ("deploy org/dr--after", "not a Hugging Face repo id"),
    ],
)
def test_refusals_say_what_to_write(text, message):
    with pytest.raises(GoalRefused, match=message):
        parse_goal(text)


def test_a_refused_goal_writes_nothing_and_opens_no_host(tmp_path):
    with pytest.raises(GoalRefused):
        run_goal(
            "benchmark org/x`id`", host="ssh://root@127.0.0.1:1", policy="test", options=RunOptions(runs_dir=tmp_path)
        )
    assert list(tmp_path.iterdir()) == []
