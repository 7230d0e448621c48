"""The five standard datasets drafters' model cards report acceptance on, and how each becomes prompts.

Repo ids, configs, splits, files and columns are the real ones on the Hugging Face
Hub; the prompt formatting is the one z-lab/dflash's benchmark (dflash/benchmark.py)
uses, so that a measured acceptance length compares with the figures a DFlash model
card gives. Sample counts are the usual ones in the literature (EAGLE, DFlash): the
whole of HumanEval and of MT-Bench's 80 questions, 128 of the others.

The file is named in full (not a pattern): the download asks for that one file, and
a repo that renames it fails with a clear "file not found" rather than reading
something else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DatasetName = Literal["gsm8k", "math500", "humaneval", "mbpp", "mt-bench"]
PromptCategory = Literal["math", "code", "chat"]

# The line DFlash's benchmark (after Qwen's math evaluation) appends to a math problem.
BOXED_LINE = "Please reason step by step, and put your final answer within \\boxed{}."
HUMANEVAL_LEAD = "Write a solution to the following problem and make sure that it passes the tests:"
DFLASH_BENCHMARK = "z-lab/dflash's benchmark (dflash/benchmark.py)"


def _literal(text: str) -> str:
    """`text` as a piece of a str.format template (its braces kept as they are)."""
    return text.replace("{", "{{").replace("}", "}}")


class StandardDataset(BaseModel):
    """One standard dataset: where it lives on the Hub, what is read from it, how a row becomes a prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: DatasetName
    title: str = Field(description="The name model cards use")
    repo_id: str
    config: str | None = Field(description="The `datasets` config (subset) the file belongs to; None: the default")
    split: str
    path: str = Field(description="The data file in the repo")
    file_format: Literal["parquet", "jsonl"]
    columns: tuple[str, ...] = Field(description="The columns read: those the prompt uses")
    template: str = Field(description="str.format template over the row's columns")
    turn: int | None = Field(
        default=None, description="For a column holding a conversation's turns: which turn the prompt is (0: first)"
    )
    category: PromptCategory = Field(description="What the prompts are about (the shipped sets' categories)")
    default_samples: int = Field(ge=1, description="Prompts taken when no count is given: the usual number")
    rows_on_hub: int = Field(ge=1, description="Rows of the split on the Hub, for the record")

    def format(self, row: Mapping[str, Any]) -> str:
        """The prompt for one row (values of `columns`)."""
        values = dict(row)
        if self.turn is not None:
            for column in self.columns:
                turns = values[column]
                if not isinstance(turns, list) or len(turns) <= self.turn:
                    raise ValueError(f"{self.name}: column {column!r} holds no turn {self.turn}")
                values[column] = turns[self.turn]
        for column in self.columns:
            if not isinstance(values.get(column), str):
                raise ValueError(f"{self.name}: column {column!r} is not text")
        return self.template.format(**values)

    def describe(self) -> str:
        """The dataset as a person names it: repo, config and split."""
        config = f", config {self.config}" if self.config else ""
        return f"{self.repo_id} ({self.title}{config}, split {self.split})"


STANDARD_DATASETS: dict[str, StandardDataset] = {
    d.name: d
    for d in (
        StandardDataset(
            name="gsm8k",
            title="GSM8K",
            repo_id="openai/gsm8k",
            config="main",
            split="test",
            path="main/test-00000-of-00001.parquet",
            file_format="parquet",
            columns=("question",),
            template="{question}\n" + _literal(BOXED_LINE),
            category="math",
            default_samples=128,
            rows_on_hub=1319,
        ),
        StandardDataset(
            name="math500",
            title="MATH-500",
            repo_id="HuggingFaceH4/MATH-500",
            config=None,
            split="test",
            path="test.jsonl",
            file_format="jsonl",
            columns=("problem",),
            template="{problem}\n" + _literal(BOXED_LINE),
            category="math",
            default_samples=128,
            rows_on_hub=500,
        ),
        StandardDataset(
            name="humaneval",
            title="HumanEval",
            repo_id="openai/openai_humaneval",
            config=None,
            split="test",
            path="openai_humaneval/test-00000-of-00001.parquet",
            file_format="parquet",
            columns=("prompt",),
            template=_literal(HUMANEVAL_LEAD) + "\n```python\n{prompt}\n```",
            category="code",
            default_samples=164,
            rows_on_hub=164,
        ),
        StandardDataset(
            name="mbpp",
            title="MBPP",
            repo_id="google-research-datasets/mbpp",
            config="sanitized",
            split="test",
            path="sanitized/test-00000-of-00001.parquet",
            file_format="parquet",
            columns=("prompt",),
            template="{prompt}",
            category="code",
            default_samples=128,
            rows_on_hub=257,
        ),
        StandardDataset(
            name="mt-bench",
            title="MT-Bench",
            repo_id="HuggingFaceH4/mt_bench_prompts",
            config=None,
            split="train",
            # push_to_hub's name, hash included, as the repo holds it.
            path="data/train-00000-of-00001-67c6c9fef07685a3.parquet",
            file_format="parquet",
            columns=("prompt",),
            template="{prompt}",
            turn=0,  # the server benchmark sends the first turn of each conversation
            category="chat",
            default_samples=80,
            rows_on_hub=80,
        ),
    )
}
DATASET_NAMES: tuple[DatasetName, ...] = ("gsm8k", "math500", "humaneval", "mbpp", "mt-bench")
assert DATASET_NAMES == tuple(STANDARD_DATASETS)


def standard_dataset(name: str) -> StandardDataset:
    """The catalog entry for `name`; KeyError for a name it lacks."""
    return STANDARD_DATASETS[name]
