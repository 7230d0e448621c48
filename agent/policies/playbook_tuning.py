"""Which speculative settings the playbook measures beside SGLang's defaults: a few, chosen from the acceptance.

Not a grid. The acceptance length measured at SGLang's defaults says how far the
drafts get: `(accept_length - 1) / steps` is the share of draft steps accepted.

- Low load, where a verify step costs about the same whatever its length: a tree of four
  branches per step (top-k 4) when the defaults draft a chain, since it rescues drafts
  whose first token was wrong at no cost there; and, when drafts are mostly accepted, a
  longer chain (two more steps).
- High load, whenever the defaults draft more than one token: a short chain (fewer draft
  tokens per verify), because at high concurrency the verify pass is compute-bound and
  every rejected draft token costs a real token's work. The same idea gives n-gram a
  third of its draft tokens and DFlash half its block; where that half block wins at the
  top level, a quarter of it is measured too (`further`): the trend is followed one
  step, not guessed.

A setting for low load is tried on the speculative layout fastest at the lowest level; one
for high load on every layout measured at the defaults, the fastest at each higher level
first, as the best layout changes with the load and with the setting (on the seed's host
TP8 at C=32, EP4 with block 4 at C=64, DP attention above). Each is measured over every
level against the best autoregressive configuration at that level; the recommendation then
says which setting to serve at which load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specops.tools.drafters import DraftSettings
from specops.tools.sglang.config import EAGLE_FAMILY, SpeculativeAlgorithm

MOSTLY_ACCEPTED = 0.55  # share of draft steps accepted above which a longer chain is tried
TREE_TOPK = 4


@dataclass(frozen=True)
class Tuning:
    """One setting to measure: the launch config fields it changes, and why it was chosen."""

    changes: dict[str, Any]
    why: str
    high_load: bool = False  # tried on the layouts fastest above the lowest level, not the one fastest at the lowest
    further: Tuning | None = None  # the next step the same way, measured where this one wins at the top level


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
        share = f"{accepted:.0%} of draft steps accepted at the defaults" if accepted is not None else "at low load"
        if topk == 1:
            found.append(
                Tuning(
                    _chain(steps, TREE_TOPK, min(2 * (steps + 1), TREE_TOPK * steps + 1)),
                    f"{share}: a {TREE_TOPK}-branch tree for low load, where a wider verify costs little",
                )
            )
        if accepted is not None and accepted >= MOSTLY_ACCEPTED:
            longer = steps + 2
            found.append(Tuning(_chain(longer, 1, longer + 1), f"{share}: a {longer}-step chain for low load"))
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
        half, quarter = tokens // 2, tokens // 4
        found.append(
            Tuning(
                {"block_size": half},
                f"block {half} instead of the drafter's {tokens}: a cheaper verify for high load",
                high_load=True,
                further=Tuning(
                    {"block_size": quarter},
                    f"block {quarter}: block {half} beat the drafter's {tokens} at the top level, so a cheaper one yet",
                    high_load=True,
                ),
            )
        )
    return found
