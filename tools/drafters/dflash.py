"""DFlash drafters: the fields SGLang's DFLASH worker reads, and how they must fit the target.

`block_size` and `target_layer_ids`, `mask_token`, `mask_token_id` may sit at the top
level or in `dflash_config`; dflash_config wins. Every target layer id must be a layer
the target has (`num_hidden_layers`, nested in `text_config` for multimodal targets such
as Kimi-K2.6); hidden size and vocabulary must match the target's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .fit import Fit
from .model_facts import ModelConfigFacts

SGLANG_DEFAULT_BLOCK_SIZE = 16
DEFAULT_MASK_TOKEN = "<|MASK|>"
FieldSource = Literal["dflash_config", "top_level", "absent"]


@dataclass(frozen=True)
class DFlashFields:
    block_size: int | None
    block_size_from: FieldSource
    target_layer_ids: Any
    target_layer_ids_from: FieldSource
    mask_token: str
    mask_token_id: int | None
    num_target_layers: Any


def _value(config: dict[str, Any], name: str) -> tuple[Any, FieldSource]:
    nested = config.get("dflash_config")
    if isinstance(nested, dict) and nested.get(name) is not None:
        return nested[name], "dflash_config"
    if config.get(name) is not None:
        return config[name], "top_level"
    return None, "absent"


def read_dflash(config: dict[str, Any]) -> DFlashFields:
    block, block_from = _value(config, "block_size")
    layer_ids, layers_from = _value(config, "target_layer_ids")
    mask_token, _ = _value(config, "mask_token")
    mask_id, _ = _value(config, "mask_token_id")
    return DFlashFields(
        block_size=int(block) if isinstance(block, int) else None,
        block_size_from=block_from,
        target_layer_ids=layer_ids,
        target_layer_ids_from=layers_from,
        mask_token=str(mask_token) if mask_token else DEFAULT_MASK_TOKEN,
        mask_token_id=mask_id if isinstance(mask_id, int) else None,
        num_target_layers=config.get("num_target_layers"),
    )


def dflash_notes(fields: DFlashFields) -> list[str]:
    """What the drafter's own config leaves to SGLang; a malformed target_layer_ids is refused by the caller."""
    notes = []
    if fields.block_size is None:
        notes.append(
            f"no block_size in the config: SGLang warns and uses {SGLANG_DEFAULT_BLOCK_SIZE} "
            "unless --speculative-num-draft-tokens is given"
        )
    if fields.target_layer_ids is None:
        notes.append("no target_layer_ids: SGLang spreads the draft's inputs evenly over the target's layers")
    return notes


def layer_ids_problem(fields: DFlashFields) -> str | None:
    ids = fields.target_layer_ids
    if ids is None or (isinstance(ids, list) and ids and all(isinstance(i, int) for i in ids)):
        return None
    return f"target_layer_ids must be a non-empty list of integers, got {ids!r}; SGLang refuses it at load"


def check_dflash(fields: DFlashFields, drafter: ModelConfigFacts, target: ModelConfigFacts, fit: Fit) -> None:
    fit.layers_within(
        "target_layer_ids",
        fields.target_layer_ids,
        target.num_hidden_layers,
        "SGLang cannot capture those hidden states and the server fails at load",
    )
    declared, layers = fields.num_target_layers, target.num_hidden_layers
    if isinstance(declared, int) and layers is not None and declared != layers:
        fit.notes.append(f"the drafter says it was trained for a {declared}-layer target; this target has {layers}")
    fit.same(
        "hidden_size",
        drafter.hidden_size,
        target.hidden_size,
        "the drafter's input projection does not fit the target's hidden states: weight shapes mismatch at load",
    )
    fit.same(
        "vocab_size",
        drafter.vocab_size,
        target.vocab_size,
        "draft tokens would not be the target's tokens: load fails or every draft is rejected",
    )
    mask_id, vocab = fields.mask_token_id, target.vocab_size
    if mask_id is not None and vocab is not None and not 0 <= mask_id < vocab:
        fit.problems.append(f"mask_token_id {mask_id} is outside the target's vocabulary of {vocab}")
