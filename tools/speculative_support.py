"""What the host's SGLang release allows for speculative decoding, from its version alone.

The facts come from the release's wheel (`specops.sglang_releases`), so the planner
reads them from host_facts instead of carrying rules of its own: which algorithms the
release takes, which of them it refuses with DP attention, the first release with DFLASH when this one lacks it, and whether
DFLASH may run on the DP-attention layout (0.5.11: never; 0.5.23: with the DP LM head).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..sglang_releases.facts import first_release_with, for_version

DpAttentionRule = Literal["refused", "needs_dp_lm_head", "allowed", "not_offered"]


class SpeculativeSupport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    behaves_as: str = Field(description="The modelled SGLang release this version is read as (the newest not newer)")
    algorithms: list[str] = Field(description="--speculative-algorithm values this SGLang takes")
    dflash: bool = Field(description="Whether it takes DFLASH")
    dflash_since: str | None = Field(description="The first SGLang release with DFLASH")
    dflash_pp: Literal["pp_size == 1 only"] = "pp_size == 1 only"
    dflash_with_dp_attention: DpAttentionRule = Field(
        description="refused; needs_dp_lm_head (set enable_dp_lm_head with enable_dp_attention); allowed; not_offered (no DFLASH)"
    )
    dflash_architectures: list[str] = Field(description="Drafter config architectures it serves under DFLASH")
    no_dp_attention: list[str] = Field(
        default_factory=list, description="Algorithms it refuses with DP attention (STANDALONE, NGRAM)"
    )


def speculative_support(sglang_version: str) -> SpeculativeSupport:
    release = for_version(sglang_version)
    dflash = release.offers("DFLASH")
    rule: DpAttentionRule
    if not dflash:
        rule = "not_offered"
    elif release.rule("dflash_dp_attention") is not None:
        rule = "refused"
    elif release.rule("dflash_dp_attention_needs_dp_lm_head") is not None:
        rule = "needs_dp_lm_head"
    else:
        rule = "allowed"
    return SpeculativeSupport(
        behaves_as=release.version,
        algorithms=list(release.accepted_algorithms),
        dflash=dflash,
        dflash_since=first_release_with("DFLASH"),
        dflash_with_dp_attention=rule,
        dflash_architectures=list(release.dflash_architectures),
        no_dp_attention=sorted(
            {r.algorithm for r in release.launch_rules if r.id.endswith("_dp_attention")} - {"DFLASH"}
        ),
    )
