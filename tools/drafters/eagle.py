"""EAGLE and EAGLE-3 drafters: what SGLang's EAGLE worker reads from them, and how they must fit the target.

An EAGLE-3 drafter takes the target's hidden states from a few of its layers
(`eagle_config.eagle_aux_hidden_state_layer_ids`; without them SGLang picks low,
middle and high layers) and its embeddings and LM head work in the target's hidden
size. Its output vocabulary may be a reduced `draft_vocab_size`, mapped back to the
target's vocabulary by the d2t table it ships; its `vocab_size` is the target's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fit import Fit
from .model_facts import ModelConfigFacts


@dataclass(frozen=True)
class EagleFields:
    aux_layer_ids: list[int] | None
    draft_vocab_size: int | None


def read_eagle(config: dict[str, Any]) -> EagleFields:
    nested = config.get("eagle_config")
    nested = nested if isinstance(nested, dict) else {}
    ids = nested.get("eagle_aux_hidden_state_layer_ids", config.get("eagle_aux_hidden_state_layer_ids"))
    draft_vocab = config.get("draft_vocab_size")
    return EagleFields(
        aux_layer_ids=ids if isinstance(ids, list) and all(isinstance(i, int) for i in ids) else None,
        draft_vocab_size=draft_vocab if isinstance(draft_vocab, int) else None,
    )


def eagle_notes(fields: EagleFields, drafter: ModelConfigFacts) -> list[str]:
    """What the drafter's own config says about how it drafts, target or not."""
    notes = []
    vocab, draft_vocab = drafter.vocab_size, fields.draft_vocab_size
    if draft_vocab is not None and vocab is not None and draft_vocab < vocab:
        notes.append(
            f"draft_vocab_size {draft_vocab} < vocab_size {vocab}: the drafter proposes from a reduced vocabulary "
            "mapped onto the target's (its d2t table); tokens outside it are never drafted"
        )
    if fields.aux_layer_ids is None:
        notes.append("no eagle_aux_hidden_state_layer_ids: SGLang takes low, middle and high target layers")
    return notes


def check_eagle(fields: EagleFields, drafter: ModelConfigFacts, target: ModelConfigFacts, fit: Fit) -> None:
    fit.same(
        "hidden_size",
        drafter.hidden_size,
        target.hidden_size,
        "the draft layer takes the target's hidden states and embeddings: weight shapes mismatch at load",
    )
    fit.same(
        "vocab_size",
        drafter.vocab_size,
        target.vocab_size,
        "draft tokens would not map onto the target's tokens: every draft is rejected or the load fails",
    )
    fit.layers_within(
        "eagle_aux_hidden_state_layer_ids",
        fields.aux_layer_ids,
        target.num_hidden_layers,
        "SGLang cannot capture those hidden states and the server fails at load",
    )
