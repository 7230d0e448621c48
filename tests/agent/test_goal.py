"""Goals are parsed before anything runs; unusable ones are refused with a message, nothing written."""

from __future__ import annotations

import re

import pytest

from specops.agent.goal import GoalRefused, parse_goal
from specops.agent.policies.playbook_goal import nothing_to_go_on
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
        ("benchmark org/drafter;rm -rf ~", "the goal has ';' right after \"org/drafter\""),
        (
            "deploy https://huggingface.co/org/$(reboot)",
            "the goal has '\\$' right after \"https://huggingface.co/org/\"",
        ),
        ("deploy org/dr--after", "'org/dr--after' has '-' twice in a row"),
    ],
)
def test_refusals_say_what_to_write(text, message):
    with pytest.raises(GoalRefused, match=message):
        parse_goal(text)


# What a reviewer slipped through before: each was cut to foo/bar and run.
@pytest.mark.parametrize(
    ("text", "char", "words"),
    [
        ("foo/bar>/tmp/x", ">", "the goal has '>' right after \"foo/bar\""),
        ("deploy foo/bar$IFS${IFS}x", "$", "the goal has '$' right after \"foo/bar\""),
        ("deploy foo/bar\nrm -rf ~", "\n", 'the goal has a newline right after "deploy foo/bar"'),
        ("deploy foo/bar\r", "\r", "the goal has a carriage return"),
        ("deploy foo/bar\x00", "\x00", "the goal has a NUL byte"),
        ("deploy foo/bar\u2028then", "\u2028", "the goal has a line separator (U+2028 LINE SEPARATOR)"),
        ("deploy foo/bar|tee x", "|", "the goal has '|' right after \"foo/bar\""),
        ("deploy foo/bar&&id", "&", "the goal has '&'"),
        ("deploy foo/bar`id`", "`", "the goal has '`'"),
        ("deploy foo/bar<in", "<", "the goal has '<'"),
        ("deploy <foo/bar", "<", "the goal has '<' right before \"foo/bar\""),
        ("benchmark foo/bar's throughput", "'", 'the goal has "\'" right after "foo/bar"'),
        ("deploy foo/bar@main", "@", "the goal has '@' right after \"foo/bar\""),
        ("deploy https://hf.co/foo/bar>/tmp/x", ">", "the goal has '>' right after \"https://hf.co/foo/bar\""),
        ("deploy https://hf.co/foo/bar?x=1", "?", "the goal has '?'"),
        ("deploy foo/modèle", "è", "the goal has 'è' (U+00E8"),
    ],
)
def test_a_repo_id_glued_to_anything_is_refused_naming_the_character(text, char, words):
    with pytest.raises(GoalRefused) as refused:
        parse_goal(text)
    message = str(refused.value)
    assert words in message and refused.value.char == char
    assert len(message.splitlines()) == 1, message


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("deploy foo/bar.", "foo/bar"),
        ("deploy foo/bar, then benchmark it", "foo/bar"),
        ('deploy "foo/bar" and benchmark', "foo/bar"),
        ("deploy (foo/bar): at 64 tok/s", "foo/bar"),
        ("deploy 'foo/bar'.", "foo/bar"),
        ("deploy\tfoo/bar", "foo/bar"),  # a tab is a space
        ("benchmark foo/bar against the server at localhost:30000/v1", "foo/bar"),
        ("see https://huggingface.co/models/foo/bar.", "foo/bar"),
        ("see https://huggingface.co/foo/bar/blob/main/config.json", "foo/bar"),
    ],
)
def test_a_repo_id_delimited_cleanly_is_taken_as_written(text, repo):
    assert parse_goal(text).repo_id == repo


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("deploy https://huggingface.co/foo", "names no repo"),
        ("deploy https://huggingface.co/datasets/foo/bar", "a Hub datasets page, not a model repo"),
        ("deploy foo/-bar", "'-bar' starts with '-'"),
    ],
)
def test_urls_and_ids_that_name_no_model_repo_are_refused(text, words):
    with pytest.raises(GoalRefused, match=re.escape(words)):
        parse_goal(text)


def test_a_refused_goal_writes_nothing_and_opens_no_host(tmp_path):
    with pytest.raises(GoalRefused):
        run_goal(
            "benchmark org/x`id`", host="ssh://root@127.0.0.1:1", policy="test", options=RunOptions(runs_dir=tmp_path)
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "repo", "target", "algorithm"),
    [
        ("deploy and benchmark lightseekorg/kimi-k2.6-eagle3.1-mla", "lightseekorg/kimi-k2.6-eagle3.1-mla", None, None),
        ("benchmark MTP on deepseek-ai/DeepSeek-V3", None, "deepseek-ai/DeepSeek-V3", "NEXTN"),
        (
            "deploy and benchmark Qwen/Qwen3-0.6B as a standalone drafter for Qwen/Qwen3-32B",
            "Qwen/Qwen3-0.6B",
            "Qwen/Qwen3-32B",
            "STANDALONE",
        ),
        ("benchmark n-gram speculation on Kimi-K2.6", None, "Kimi-K2.6", "NGRAM"),
        ("benchmark ngram on Kimi-K2.6.", None, "Kimi-K2.6", "NGRAM"),
        ("serve org/drafter with EAGLE-3", "org/drafter", None, "EAGLE3"),
        ("multi-token prediction on deepseek-ai/DeepSeek-V3", None, "deepseek-ai/DeepSeek-V3", "NEXTN"),
        # A word inside a repo id is its name, not a request.
        ("deploy SubSir/Kimi-K2.6-DFlash-tmp-long", "SubSir/Kimi-K2.6-DFlash-tmp-long", None, None),
    ],
)
def test_the_algorithm_and_the_target_a_goal_names(text, repo, target, algorithm):
    goal = parse_goal(text)
    assert (goal.repo_id, goal.target, goal.algorithm) == (repo, target, algorithm)


@pytest.mark.parametrize(
    ("text", "target", "algorithm"),
    [
        ("find a DFlash drafter for Qwen3-8B and benchmark it", "Qwen3-8B", "DFLASH"),
        ("benchmark the z-lab DFlash drafter for Qwen3-8B", "Qwen3-8B", "DFLASH"),
        ("is there an EAGLE-3 head for Llama 3.1 8B worth serving?", "Llama-3.1-8B", "EAGLE3"),
        ("find me a drafter for Qwen3-8B", "Qwen3-8B", None),
        ("deploy the drafter and benchmark it", None, None),
    ],
)
def test_a_goal_without_a_repo_is_a_hint(text, target, algorithm):
    goal = parse_goal(text)
    assert (goal.repo_id, goal.target, goal.algorithm) == (None, target, algorithm)


def test_a_word_about_another_algorithm_is_a_mention_not_a_request():
    goal = parse_goal("try lightseekorg/kimi-k2.6-eagle3.1-mla and tell me if it beats dflash")
    assert (goal.repo_id, goal.algorithm, goal.mentioned) == ("lightseekorg/kimi-k2.6-eagle3.1-mla", None, ("DFLASH",))


def test_the_playbook_needs_a_drafter_or_a_target_to_search_for():
    assert nothing_to_go_on(parse_goal("find a DFlash drafter for Qwen3-8B")) is None
    missing = nothing_to_go_on(parse_goal("deploy the drafter and benchmark it"))
    assert missing is not None and "names no drafter repo and no target model" in missing


def test_an_algorithm_without_a_drafter_needs_a_target():
    with pytest.raises(GoalRefused, match="names no target model"):
        parse_goal("benchmark n-gram speculation")


@pytest.mark.parametrize(
    ("text", "drafters", "target", "intents"),
    [
        (
            "does lightseekorg/kimi-k2.6-eagle3.1-mla beat SubSir/Kimi-K2.6-DFlash-tmp-long?",
            ("lightseekorg/kimi-k2.6-eagle3.1-mla", "SubSir/Kimi-K2.6-DFlash-tmp-long"),
            None,
            ("evaluate", "benchmark", "compare"),
        ),
        (
            "z-lab/Qwen3-8B-DFlash-b16 vs AngelSlim/Qwen3-8B_eagle3 for Qwen3-8B",
            ("z-lab/Qwen3-8B-DFlash-b16", "AngelSlim/Qwen3-8B_eagle3"),
            "Qwen3-8B",
            ("compare",),
        ),
        (
            "which of z-lab/Qwen3-8B-DFlash-b16 and AngelSlim/Qwen3-8B_eagle3 should I serve? deploy the winner",
            ("z-lab/Qwen3-8B-DFlash-b16", "AngelSlim/Qwen3-8B_eagle3"),
            None,
            ("deploy", "compare"),
        ),
        # A second repo after "for" is the target, as before; one without a comparison word too.
        ("Qwen/Qwen3-0.6B as a standalone drafter for Qwen/Qwen3-32B", ("Qwen/Qwen3-0.6B",), "Qwen/Qwen3-32B", None),
        ("deploy org/drafter org/target", ("org/drafter",), "org/target", ("deploy",)),
    ],
)
def test_a_goal_naming_several_drafters_compares_them(text, drafters, target, intents):
    goal = parse_goal(text)
    assert (goal.drafters, goal.repo_id, goal.target) == (drafters, drafters[0], target)
    assert goal.compares_drafters == (len(drafters) > 1)
    if intents is not None:
        assert goal.intents == intents


def test_a_target_repo_alone_is_a_drafter_to_find():
    goal = parse_goal("benchmark a DFlash drafter for Qwen/Qwen3-8B")
    assert (goal.repo_id, goal.drafters, goal.target, goal.algorithm) == (None, (), "Qwen/Qwen3-8B", "DFLASH")


@pytest.mark.parametrize(
    ("text", "algorithms", "intents"),
    [
        (
            "which is faster for Qwen3-8B, DFlash or EAGLE-3?",
            ("DFLASH", "EAGLE3"),
            ("evaluate", "benchmark", "compare"),
        ),
        ("compare the DFlash and EAGLE-3 drafters for Qwen3-8B", ("DFLASH", "EAGLE3"), ("compare",)),
        ("deploy whichever is faster for Qwen3-8B, DFlash or EAGLE-3", ("DFLASH", "EAGLE3"), ("deploy", "compare")),
        ("find a DFlash drafter for Qwen3-8B and benchmark it", (), ("benchmark",)),
    ],
)
def test_a_goal_naming_algorithms_but_no_repo_compares_a_drafter_of_each(text, algorithms, intents):
    goal = parse_goal(text)
    assert (goal.compares_algorithms, goal.intents, goal.target) == (algorithms, intents, "Qwen3-8B")


@pytest.mark.parametrize(
    ("text", "author"),
    [
        ("benchmark the z-lab DFlash drafter for Qwen3-8B", "z-lab"),
        ("find a DFlash drafter for Qwen3-8B from z-lab", "z-lab"),
        ("the AngelSlim EAGLE-3 head for Qwen3-8B", "AngelSlim"),
        ("find the best DFlash drafter for Qwen3-8B", None),
        ("benchmark it from scratch for Qwen3-8B with DFlash", None),
    ],
)
def test_the_organisation_a_goal_names_for_its_drafter(text, author):
    assert parse_goal(text).author == author


def test_a_drafters_repo_after_on_is_still_the_drafter():
    goal = parse_goal("benchmark DFlash on SubSir/Kimi-K2.6-DFlash-tmp-long")
    assert (goal.repo_id, goal.target) == ("SubSir/Kimi-K2.6-DFlash-tmp-long", None)
