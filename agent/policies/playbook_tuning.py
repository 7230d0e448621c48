"""Which speculative settings the playbook measures beside SGLang's defaults: a few, chosen from the acceptance.

Not a grid. The acceptance length measured at SGLang's defaults says how far the
drafts get: `(accept_length - 1) / steps` is the share of draft steps accepted.

- Mostly accepted: a longer chain (two more steps) pays at low load, where a verify
  step costs about the same whatever its length.
- Often rejected early, top-k 1: a tree of four branches per step rescues drafts
  whose first token was wrong.
- Always, when the defaults draft more than one step: a short chain (fewer draft
  tokens per verify), because at high concurrency the verify pass is compute-bound and
  every rejected draft token costs a real token's work. The same idea gives n-gram a
  third of its draft tokens and DFlash half its block.

A setting for low load is tried on the speculative layout fastest at the lowest level,
one for high load on the layout (CUDA graphs on or off) fastest at the top level. Each
is measured over every level against the best autoregressive configuration at that level; the recommendation then says which setting to serve at which load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specops.tools.drafters import DraftSettings
from specops.tools.sglang.config import EAGLE_FAMILY, SpeculativeAlgorithm

MOSTLY_ACCEPTED = 0.55  # share of draft steps accepted above which a longer chain is tried
OFTEN_REJECTED = 0.4  # below which (with top-k 1) a wider tree is tried
TREE_TOPK = 4


@dataclass(frozen=True)
class Tuning:
    """One setting to measure: the launch config fields it changes, and why it was chosen."""

    changes: dict[str, Any]
    why: str
    high_load: bool = False  # tried on the layout fastest at the top level, not the one fastest at the lowest


def _chain(steps: int, topk: int, draft_tokens: int) -> dict[str, Any]:
    return {"speculative_num_steps": steps, "speculative_eagle_topk": topk, "block_size": draft_tokens}


def settings_to_try(
    algorithm: SpeculativeAlgorithm, defaults: DraftSettings | None, accept_length: float | None
) -> list[Tuning]:
    """The settings to measure beside the defaults, most promising first; none when the defaults are unknown."""
    if defaults is None:
        return []
    steps, topk, tokens = defaults.num_steps, defaults.eagle_topk, defaults.num_draft_tokens
    found: list[Tuning] = []
    if algorithm in EAGLE_FAMILY:
        accepted = (accept_length - 1) / steps if accept_length is not None and steps else None
        if accepted is not None and accepted >= MOSTLY_ACCEPTED:
            longer = steps + 2
            found.append(
                Tuning(
                    _chain(longer, 1, longer + 1),
                    f"{accepted:.0%} of draft steps accepted at the defaults: a {longer}-step chain for low load",
                )
            )
        if accepted is not None and accepted < OFTEN_REJECTED and topk == 1:
            found.append(
                Tuning(
                    _chain(steps, TREE_TOPK, min(2 * (steps + 1), TREE_TOPK * steps + 1)),
                    f"only {accepted:.0%} of draft steps accepted at the defaults: a {TREE_TOPK}-branch tree",
                )
            )
        if steps > 1 or topk > 1:
            shorter = max(1, steps - 2)
            found.append(
                Tuning(
                    _chain(shorter, 1, shorter + 1),
                    f"{shorter + 1} tokens per verify instead of {tokens}: a cheaper verify step for high load",
                    high_load=True,
                )
            )
    elif algorithm is SpeculativeAlgorithm.NGRAM and tokens >= 6:
        fewer = tokens // 3
        found.append(
            Tuning(
                {"block_size": fewer},
                f"{fewer} draft tokens instead of {tokens}: a cheaper verify for high load",
                high_load=True,
            )
        )
    elif algorithm is SpeculativeAlgorithm.DFLASH and tokens >= 8:
        half = tokens // 2
        found.append(
            Tuning(
                {"block_size": half}, f"block {half} instead of the drafter's {tokens}: a cheaper verify for high load"
            )
        )
    return found
