"""STANDALONE: a small model of the target's family as drafter (Qwen3-0.6B for Qwen3-32B).

SGLang runs it as a full model beside the target: it must share the target's
tokenizer (the same vocabulary), and it pays only if it is much smaller than the
target. Hidden sizes may differ: it reads no hidden states.
"""

from __future__ import annotations

from .fit import Fit
from .model_facts import ModelConfigFacts

WORTH_IT = 0.25  # a draft model above this share of the target's weights costs about what it saves


def check_standalone(drafter: ModelConfigFacts, target: ModelConfigFacts, fit: Fit) -> None:
    fit.same(
        "vocab_size",
        drafter.vocab_size,
        target.vocab_size,
        "a standalone drafter must share the target's tokenizer: its tokens would not be the target's",
    )
    if drafter.model_type and target.model_type and drafter.model_type != target.model_type:
        fit.notes.append(
            f"the drafter is a {drafter.model_type} model and the target a {target.model_type} model: "
            "drafts from another family are accepted less often"
        )
    elif drafter.model_type:
        fit.checks.append(f"both are {drafter.model_type} models")
    mine, theirs = drafter.weight_bytes, target.weight_bytes
    if mine and theirs:
        share = mine / theirs
        if share > WORTH_IT:
            fit.notes.append(
                f"the drafter weighs {share:.0%} of the target: each draft step costs nearly a target step, "
                "so speculation is unlikely to pay"
            )
        else:
            fit.checks.append(f"the drafter weighs {share:.1%} of the target")
