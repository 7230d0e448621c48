"""The acceptance eval against a DFlash server on sim:seed-ct200: within 0.05 of the profile's truth.

Truth: the profile's accept_length for each prompt's kind (as the simulator
classifies it), averaged with the weights the prompt mix gives. Per-request
acceptance scatters around its kind's mean (the profile's accept_spread), so per
category the truth must lie in the reported 95% interval, and overall within 0.05 (or the interval). The prompts are
the standard datasets as the host fetches them from the Hub emulator (its fixture rows).
"""

from __future__ import annotations

import pytest

from specops.prompts.acceptance import CATEGORIES, load_prompt_set
from specops.sim.profiles import load_profile
from specops.sim.serving.prompt_kind import classify_prompt
from specops.tools.acceptance import AcceptanceArgs, NotSpeculative, measure_acceptance
from specops.tools.context import ToolContext
from specops.tools.datasets import DATASET_NAMES, STANDARD_DATASETS, load_standard_prompts, standard_dataset

from .worlds import BACKENDS, reach, start_world, wait_until_ready

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]
TIME_SCALE = 50.0
PROFILE = load_profile("seed-ct200")
FAST_LOAD = PROFILE.model_copy(
    update={
        "serving": PROFILE.serving.model_copy(
            update={"target": PROFILE.serving.target.model_copy(update={"load_seconds": 2 * TIME_SCALE})}
        )
    }
)
DFLASH = next(s for s in PROFILE.serving.speculative if s.name == "dflash_ep4")


def _launch(host, home: str, *extra: str):
    server = host.start_detached(
        [
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            f"{home}/models/Kimi-K2.6",
            "--tp",
            "8",
            "--ep",
            "4",
            "--port",
            "30000",
            *extra,
        ],
        log_path="logs/sglang.log",
    )
    return wait_until_ready(host, server, "logs/sglang.log")


@pytest.fixture(scope="module")
def dflash_world():
    """One world serving the DFlash drafter for the module; every backend below reaches the same server."""
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world, reach(world, "sim") as host:
        home = "/root"
        host.run(
            ["hf", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", "--local-dir", f"{home}/models/dflash"], timeout=120
        ).check()
        server = _launch(
            host,
            home,
            "--speculative-algorithm",
            "DFLASH",
            "--speculative-draft-model-path",
            f"{home}/models/dflash",
            "--max-running-requests",
            "256",
        )
        yield world
        host.stop(server)


@pytest.fixture(scope="module")
def dflash(dflash_world):
    with reach(dflash_world, "sim") as host:
        yield ToolContext.for_host(host)


@pytest.mark.parametrize("backend", BACKENDS)
def test_acceptance_on_every_backend(dflash_world, backend):
    # A short eval per backend (the full one above runs on sim:): the same server, reached three ways.
    with reach(dflash_world, backend) as host:
        result = measure_acceptance(
            ToolContext.for_host(host),
            AcceptanceArgs(
                categories=["code"], prompts_per_category=8, max_new_tokens=128, ignore_eos=True, thinking="on"
            ),
        )
    assert result.host == host.spec and result.speculative_algorithm == "DFLASH" and result.block_size == 8
    assert result.failed_requests == 0 and result.overall.prompts == 8 and result.overall.thinking == "on"
    assert result.overall.completion_tokens == 8 * 128
    truth = DFLASH.accept_length["code"]
    low, high = result.overall.request_mean_ci95
    assert abs(result.overall.request_mean - truth) < max(1.5 * (high - low) / 2, 0.05), (truth, result.overall)


def test_acceptance_is_within_005_of_the_truth_with_thinking_on_and_off(dflash):
    # Kimi K2.6's chat template has a thinking switch: by default both modes are measured.
    result = measure_acceptance(dflash, AcceptanceArgs(max_new_tokens=512, ignore_eos=True, concurrency=16))
    assert result.speculative_algorithm == "DFLASH" and result.block_size == 8 and result.warning is None
    assert [o.thinking for o in result.overall_by_thinking] == ["on", "off"] and result.overall.thinking == "on"
    truths: dict[str, list[float]] = {"on": [], "off": []}
    # The standard datasets, as the host fetched them from the Hub (its emulator), each dataset's fixture rows.
    datasets = load_standard_prompts(dflash, DATASET_NAMES).by_name()
    assert {s.category for s in result.categories} == set(DATASET_NAMES) and not result.notes
    for summary in result.categories:
        prompts, kind = datasets[summary.category].prompts, standard_dataset(summary.category).category
        kinds = [classify_prompt(p) for p in prompts]
        assert kinds == [kind] * len(prompts), "the simulator sees each prompt as its dataset's kind"
        table = DFLASH.accept_length if summary.thinking == "on" else DFLASH.accept_length_thinking_off
        truth = table[kind]
        truths[summary.thinking] += [truth] * len(prompts)
        assert summary.prompts == len(prompts) >= 12
        assert summary.prompt_set == f"{datasets[summary.category].repo_id} ({summary.prompt_set.split(' (')[1]}"
        # SGLang's per-request histogram, pooled: every verify step counted once, positions falling off.
        assert summary.histogram is not None and sum(summary.histogram) == summary.verify_steps
        rates = summary.position_accept_rate or []
        assert len(rates) == DFLASH.num_draft_tokens - 1 and rates == sorted(rates, reverse=True)
        # Ten 95% intervals: one missing its truth by chance is likely, so each is widened by half (~99.7%).
        low, high = summary.request_mean_ci95
        half = (high - low) / 2
        assert abs(summary.request_mean - truth) < 1.5 * half, (
            f"{summary.category}: {truth} vs {summary.request_mean_ci95}"
        )
        assert summary.token_weighted_ci95[0] < summary.token_weighted < summary.token_weighted_ci95[1]
        assert summary.completion_tokens == 512 * summary.prompts
    for overall in result.overall_by_thinking:
        overall_truth = sum(truths[overall.thinking]) / len(truths[overall.thinking])
        assert overall.prompts == sum(s.prompts for s in result.categories if s.thinking == overall.thinking)
        # Within 0.05, or within the interval widened by half where the fixture datasets' few rows make it wider.
        half = (overall.request_mean_ci95[1] - overall.request_mean_ci95[0]) / 2
        assert abs(overall.request_mean - overall_truth) < max(0.05, 1.5 * half), overall
        assert abs(overall.token_weighted - overall_truth) < max(0.05, 1.5 * half), overall
        # Token weighting is a harmonic-style mean of per-request tau: never above the request mean.
        assert overall.token_weighted <= overall.request_mean
    for words in (
        "Student-t",
        "bootstrap",
        "temperature 0",
        "spec_verify_ct",
        "openai/gsm8k (GSM8K, config main, split test)",
        "HuggingFaceH4/mt_bench_prompts",
        "chat_template.jinja",
        "thinking on and thinking off",
    ):
        assert words in result.method


def test_a_dataset_the_host_cannot_fetch_is_measured_on_the_shipped_set_of_its_kind(dflash, monkeypatch):
    gone = STANDARD_DATASETS["mbpp"].model_copy(update={"repo_id": "google-research-datasets/no-such-dataset"})
    monkeypatch.setitem(STANDARD_DATASETS, "mbpp", gone)
    result = measure_acceptance(
        dflash,
        AcceptanceArgs(
            categories=["gsm8k", "mbpp"], prompts_per_category=4, max_new_tokens=64, ignore_eos=True, thinking="on"
        ),
    )
    assert [s.category for s in result.categories] == ["gsm8k", "code"]
    assert result.categories[1].prompt_set == load_prompt_set("code").name and result.categories[1].prompts == 4
    [note] = result.notes
    assert note.startswith("mbpp: ") and "no-such-dataset" in note and "shipped code set instead" in note


def test_raw_text_measures_one_mode(dflash):
    result = measure_acceptance(
        dflash, AcceptanceArgs(categories=["math"], prompts_per_category=8, max_new_tokens=128, thinking="raw")
    )
    assert result.overall_by_thinking == [] and result.overall.thinking is None
    assert "raw prompt text" in result.method


def test_a_break_even_above_the_measured_tau_gives_a_warning(dflash):
    result = measure_acceptance(
        dflash,
        AcceptanceArgs(categories=["chat"], prompts_per_category=8, max_new_tokens=128, break_even_accept_length=4.5),
    )
    assert result.overall.prompts == 8
    assert result.warning is not None and "4.5" in result.warning


def test_bad_input_is_refused_before_anything_runs():
    from pydantic import ValidationError

    for bad in (
        {"concurrency": 0},
        {"port": 0},
        {"categories": ["poetry"]},
        {"categories": []},
        {"categories": ["math", "math"]},
        {"prompt_template": "no slot"},
        {"max_new_tokens": 0},
        {"thinking": "on", "prompt_template": "<s>{prompt}"},
        {"thinking": "maybe"},
    ):
        with pytest.raises(ValidationError):
            AcceptanceArgs(**bad)
    assert set(CATEGORIES) == {"math", "code", "chat"}


def test_a_server_without_speculation_is_named_as_such():
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world, reach(world, "sim") as host:
        server = _launch(host, "/root")
        try:
            with pytest.raises(NotSpeculative):
                measure_acceptance(
                    ToolContext.for_host(host),
                    AcceptanceArgs(categories=["math"], prompts_per_category=2, max_new_tokens=16),
                )
        finally:
            host.stop(server)
