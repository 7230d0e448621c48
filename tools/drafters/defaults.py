"""The speculative settings SGLang picks when a launch passes none, for one algorithm, target and release.

EAGLE, EAGLE3, NEXTN and STANDALONE: steps, top-k and draft tokens chosen by the
target's architecture (`_auto_choose_speculative_params`); NGRAM: its own defaults;
DFLASH: one step of `block_size` tokens. Every table is the release's, read from its wheel.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ...sglang_releases.facts import ReleaseFacts
from ..sglang.config import SpeculativeAlgorithm
from .dflash import SGLANG_DEFAULT_BLOCK_SIZE


class DraftSettings(BaseModel):
    """--speculative-num-steps, --speculative-eagle-topk and --speculative-num-draft-tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_steps: int = Field(ge=1)
    eagle_topk: int = Field(ge=1)
    num_draft_tokens: int = Field(ge=1)

    def label(self) -> str:
        return f"steps {self.num_steps}, topk {self.eagle_topk}, draft tokens {self.num_draft_tokens}"


def sglang_defaults(
    algorithm: SpeculativeAlgorithm, release: ReleaseFacts, target_architecture: str, block_size: int | None = None
) -> DraftSettings | None:
    """None where the release has no such choice (an algorithm it predates)."""
    if algorithm is SpeculativeAlgorithm.DFLASH:
        return DraftSettings(num_steps=1, eagle_topk=1, num_draft_tokens=block_size or SGLANG_DEFAULT_BLOCK_SIZE)
    if algorithm is SpeculativeAlgorithm.NGRAM:
        ngram = release.ngram_defaults
        if ngram.num_draft_tokens is None or ngram.eagle_topk is None:
            return None
        steps = ngram.num_steps or max(ngram.num_draft_tokens // ngram.eagle_topk, 1)
        return DraftSettings(num_steps=steps, eagle_topk=ngram.eagle_topk, num_draft_tokens=ngram.num_draft_tokens)
    try:
        steps, topk, tokens = release.auto_params(algorithm.value, target_architecture)
    except LookupError:
        return None
    return DraftSettings(num_steps=steps, eagle_topk=topk, num_draft_tokens=tokens)
