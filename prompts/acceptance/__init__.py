"""The shipped prompt sets for the acceptance-length eval (math, code, chat): the offline fallback.

Acceptance is measured first on the standard datasets drafters' model cards
report on (GSM8K, MATH-500, HumanEval, MBPP, MT-Bench), which the GPU host
fetches from the Hugging Face Hub (specops.tools.datasets). These sets stand in
when the host cannot reach the Hub or a dataset fails to load: they ship with
the code and need no network.

Each file states its source and license next to the prompts. The sets are
original text written for specops in the style of the public benchmarks the
DFlash and EAGLE papers use (GSM8K/MATH, HumanEval/MBPP, MT-Bench/Alpaca), so
they can ship with the code; results measured on them are labelled with the
set's name and size, never passed off as a published benchmark's figure.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Category = Literal["math", "code", "chat"]
CATEGORIES: tuple[Category, ...] = ("math", "code", "chat")
_DIR = Path(__file__).parent


class PromptSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    category: Category
    source: str
    license: str
    prompts: list[str] = Field(min_length=1)

    @property
    def name(self) -> str:
        return f"specops-{self.category}-{len(self.prompts)}"


@cache
def load_prompt_set(category: Category) -> PromptSet:
    if category not in CATEGORIES:
        raise ValueError(f"no prompt set {category!r}; there are {', '.join(CATEGORIES)}")
    return PromptSet.model_validate(json.loads((_DIR / f"{category}.json").read_text()))
