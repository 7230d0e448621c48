"""How the playbook ranks Hub search results when the goal names no drafter: the listing's evidence, in order."""

from __future__ import annotations

from specops.agent.policies.playbook_search import drafter_candidates
from specops.tools.hub_search import HubModel, _algorithm_words, _base_models


def listed(repo_id: str, downloads: int, tags: list[str], *, gated: bool = False) -> HubModel:
    return HubModel(
        repo_id=repo_id,
        downloads=downloads,
        likes=0,
        gated=gated,
        base_models=_base_models(tags),
        algorithm_words=_algorithm_words(repo_id, tags),
        tags=tags,
    )


LISTING = [
    listed("Qwen/Qwen3-8B-AWQ", 900_000, ["awq", "base_model:quantized:Qwen/Qwen3-8B"]),
    listed("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", 500_000, ["base_model:finetune:Qwen/Qwen3-8B"]),
    listed("z-lab/Qwen3-8B-DFlash-b16", 12_000, ["dflash", "base_model:Qwen/Qwen3-8B"]),
    listed("z-lab/Qwen3-4B-DFlash-b16", 30_000, ["dflash", "base_model:Qwen/Qwen3-4B"]),
    listed("someuser/Qwen3-8B-dflash-experimental", 90_000, ["dflash"], gated=True),
    listed("AngelSlim/Qwen3-8B_eagle3", 8_000, ["eagle3", "base_model:Qwen/Qwen3-8B"]),
    listed("Tengyunw/qwen3_8b_eagle3", 2_000, ["eagle3"]),
]


def test_the_listing_says_what_names_and_tags_claim():
    assert _base_models(["base_model:Qwen/Qwen3-8B", "base_model:quantized:Qwen/Qwen3-8B"]) == [
        "Qwen/Qwen3-8B (quantized)"
    ]
    assert _algorithm_words("AngelSlim/Qwen3-8B_eagle3", []) == ["EAGLE3"]
    assert _algorithm_words("x/Kimi-K2.6-DFlash2-b8", ["speculative-decoding"]) == ["DFLASH"]
    assert _algorithm_words("x/tiny-drafter", []) == ["SPECULATIVE"]
    assert _algorithm_words("Qwen/Qwen3-8B-AWQ", ["awq"]) == []


def test_dflash_drafters_for_the_target_rank_by_evidence_then_openness_then_downloads():
    ranked = [c.repo_id for c in drafter_candidates(LISTING, "Qwen3-8B", "DFLASH")]
    # The other target's drafter and the decoys are out; the card naming the target beats a gated name match.
    assert ranked == ["z-lab/Qwen3-8B-DFlash-b16", "someuser/Qwen3-8B-dflash-experimental"]


def test_eagle3_drafters_whatever_their_separators():
    ranked = [c.repo_id for c in drafter_candidates(LISTING, "Qwen3-8B", "EAGLE3")]
    assert ranked == ["AngelSlim/Qwen3-8B_eagle3", "Tengyunw/qwen3_8b_eagle3"]


def test_without_an_algorithm_every_drafter_for_the_target():
    ranked = [c.repo_id for c in drafter_candidates(LISTING, "Qwen3-8B", None)]
    assert ranked == [
        "z-lab/Qwen3-8B-DFlash-b16",
        "AngelSlim/Qwen3-8B_eagle3",
        "Tengyunw/qwen3_8b_eagle3",
        "someuser/Qwen3-8B-dflash-experimental",  # gated: last
    ]


def test_the_evidence_in_words():
    [best, *_] = drafter_candidates(LISTING, "Qwen3-8B", "DFLASH")
    assert (
        best.why("DFLASH")
        == "DFLASH in its name or tags, its card names the target as its base model, 12,000 downloads"
    )
