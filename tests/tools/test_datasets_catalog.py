"""The standard datasets' catalog: the real layouts, DFlash's prompt formatting, and how the simulator sees the prompts."""

from __future__ import annotations

import pytest

from specops.sim.hub import dataset_fixtures
from specops.sim.hub.fixtures import load_dataset_fixtures
from specops.sim.serving.prompt_kind import classify_prompt
from specops.tools.datasets import DATASET_NAMES, STANDARD_DATASETS, standard_dataset
from specops.tools.datasets.catalog import BOXED_LINE

BOXED = "Please reason step by step, and put your final answer within \\boxed{}."


def _fixture_rows(repo_id: str) -> list[dict]:
    return next(d for d in dataset_fixtures.datasets() if d.repo_id == repo_id).rows


def test_the_five_datasets_and_their_usual_counts():
    assert DATASET_NAMES == ("gsm8k", "math500", "humaneval", "mbpp", "mt-bench")
    assert {n: d.default_samples for n, d in STANDARD_DATASETS.items()} == {
        "gsm8k": 128,
        "math500": 128,
        "humaneval": 164,
        "mbpp": 128,
        "mt-bench": 80,
    }
    assert {n: (d.repo_id, d.config, d.split) for n, d in STANDARD_DATASETS.items()} == {
        "gsm8k": ("openai/gsm8k", "main", "test"),
        "math500": ("HuggingFaceH4/MATH-500", None, "test"),
        "humaneval": ("openai/openai_humaneval", None, "test"),
        "mbpp": ("google-research-datasets/mbpp", "sanitized", "test"),
        "mt-bench": ("HuggingFaceH4/mt_bench_prompts", None, "train"),
    }
    with pytest.raises(KeyError):
        standard_dataset("poetry")


def test_the_emulator_serves_each_catalog_file_with_its_columns():
    fixtures = load_dataset_fixtures()
    for dataset in STANDARD_DATASETS.values():
        repo = fixtures[dataset.repo_id]
        assert repo.revision().file(dataset.path).size > 0
        spec = next(d for d in dataset_fixtures.datasets() if d.repo_id == dataset.repo_id)
        assert set(dataset.columns) <= set(spec.schema) and spec.path == dataset.path
        assert dataset.file_format == ("parquet" if spec.is_parquet else "jsonl")


def test_prompts_are_formatted_as_dflashs_benchmark_formats_them():
    assert BOXED_LINE == BOXED
    assert standard_dataset("gsm8k").format({"question": "What is 2 + {x}?"}) == "What is 2 + {x}?\n" + BOXED
    assert standard_dataset("math500").format({"problem": "Find $x$."}) == "Find $x$.\n" + BOXED
    assert standard_dataset("humaneval").format({"prompt": "def f():\n"}) == (
        "Write a solution to the following problem and make sure that it passes the tests:\n```python\ndef f():\n\n```"
    )
    assert standard_dataset("mbpp").format({"prompt": "Write a function."}) == "Write a function."
    assert standard_dataset("mt-bench").format({"prompt": ["first turn", "second turn"]}) == "first turn"
    with pytest.raises(ValueError):
        standard_dataset("mt-bench").format({"prompt": []})
    with pytest.raises(ValueError):
        standard_dataset("mbpp").format({"prompt": None})


def test_the_simulator_classifies_the_fixture_prompts_as_their_datasets_category():
    # The simulated server's acceptance depends on the prompt's kind: each fixture row, once formatted,
    # must be what the real dataset is about (math for GSM8K and MATH-500, code for HumanEval and MBPP,
    # chat for MT-Bench's first turns).
    expected = {"gsm8k": "math", "math500": "math", "humaneval": "code", "mbpp": "code", "mt-bench": "chat"}
    for name, dataset in STANDARD_DATASETS.items():
        assert dataset.category == expected[name]
        prompts = [dataset.format(row) for row in _fixture_rows(dataset.repo_id)]
        assert len(prompts) >= 12
        assert [classify_prompt(p) for p in prompts] == [expected[name]] * len(prompts), name
