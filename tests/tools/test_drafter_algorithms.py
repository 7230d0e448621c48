"""read_drafter_config settles the speculative algorithm from the evidence and checks each algorithm's fit.

Drafters and targets are the Hub emulator's fixtures, shaped like the real repos; the
seed host (SGLang 0.5.23) holds Kimi-K2.6 on its disk.
"""

import pytest

from specops.sglang_releases.facts import load
from specops.tools.drafters import (
    IncompatibleDrafter,
    NotADrafter,
    ReadDrafterConfigArgs,
    read_drafter_config,
    sglang_defaults,
)
from specops.tools.errors import ToolError
from specops.tools.sglang.config import SpeculativeAlgorithm as Algorithm

from .worlds import ctx, host, world  # noqa: F401

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

KIMI_ON_DISK = {"path": "models/Kimi-K2.6"}
KIMI_EAGLE3 = {"repo_id": "lightseekorg/kimi-k2.6-eagle3.1-mla"}


def read(ctx, drafter=None, target=None, algorithm=None):  # noqa: F811
    args = ReadDrafterConfigArgs(drafter=drafter, target=target, algorithm=algorithm)
    return read_drafter_config(ctx, args)


def _settings(config):
    d = config.sglang_defaults
    return (d.num_steps, d.eagle_topk, d.num_draft_tokens)


def test_an_eagle3_mla_drafter_for_kimi(ctx):  # noqa: F811
    config = read(ctx, KIMI_EAGLE3, KIMI_ON_DISK)
    assert config.algorithm is Algorithm.EAGLE3 and "Eagle3DeepseekV2ForCausalLM" in config.identified_by
    assert config.target_layer_ids == [1, 29, 57] and config.target_layer_ids_from == "eagle_config"
    assert config.block_size is None and config.mask_token is None and config.sglang_version == "0.5.23"
    # Kimi-K2.6's architecture is none SGLang lists: the default (3, 1, 4).
    assert _settings(config) == (3, 1, 4)
    assert any("hidden_size 7168 matches" in c for c in config.checks)
    assert any("[1, 29, 57] lie within the target's 61 layers" in c for c in config.checks)
    assert config.target_model == "moonshotai/Kimi-K2.6" and "EAGLE-3 drafter" in config.summary


def test_the_llama_eagle3_drafter_alone(ctx):  # noqa: F811
    # meta-llama's repo is gated: the drafter is read alone, and SGLang's defaults are those for an unknown target.
    config = read(ctx, {"repo_id": "lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge"})
    assert config.algorithm is Algorithm.EAGLE3 and config.draft_vocab_size == 32000 and _settings(config) == (3, 1, 4)
    assert any("reduced vocabulary" in n for n in config.notes)
    assert any("no target given" in n for n in config.notes)


def test_sglang_defaults_follow_the_targets_architecture():
    release = load("0.5.23")
    assert sglang_defaults(Algorithm.EAGLE3, release, "LlamaForCausalLM").label() == "steps 5, topk 4, draft tokens 8"
    assert sglang_defaults(Algorithm.NEXTN, release, "DeepseekV3ForCausalLM").num_draft_tokens == 4
    assert sglang_defaults(Algorithm.STANDALONE, release, "LlamaForCausalLM").num_steps == 3
    assert sglang_defaults(Algorithm.DFLASH, release, "KimiK25ForConditionalGeneration", 8).num_draft_tokens == 8


def test_an_eagle3_drafter_for_another_target_does_not_fit(ctx):  # noqa: F811
    with pytest.raises(IncompatibleDrafter) as caught:
        read(ctx, KIMI_EAGLE3, {"repo_id": "Qwen/Qwen3-8B"})
    assert "hidden_size 7168 differs" in caught.value.what and caught.value.details["algorithm"] == "EAGLE3"


def test_mtp_heads_in_the_target(ctx):  # noqa: F811
    config = read(ctx, None, {"repo_id": "deepseek-ai/DeepSeek-V3"}, Algorithm.NEXTN)
    assert config.algorithm is Algorithm.NEXTN and config.drafter is None and _settings(config) == (3, 1, 4)
    assert any("1 MTP layer" in c for c in config.checks) and "MTP heads in the target" in config.summary
    # Without a drafter and without a word the target's heads are what is left.
    assert read(ctx, None, {"repo_id": "deepseek-ai/DeepSeek-V3"}).algorithm is Algorithm.NEXTN


def test_a_target_without_mtp_heads_is_refused(ctx):  # noqa: F811
    with pytest.raises(IncompatibleDrafter) as caught:
        read(ctx, None, KIMI_ON_DISK, Algorithm.NEXTN)
    assert "carries no MTP heads" in caught.value.what


def test_a_standalone_drafter_of_the_same_family(ctx):  # noqa: F811
    config = read(ctx, {"repo_id": "Qwen/Qwen3-0.6B"}, {"repo_id": "Qwen/Qwen3-32B"}, Algorithm.STANDALONE)
    assert config.algorithm is Algorithm.STANDALONE and _settings(config) == (3, 1, 4)
    assert any("vocab_size 151936 matches" in c for c in config.checks)
    assert any("both are qwen3 models" in c for c in config.checks)


def test_a_plain_model_is_no_drafter_unless_standalone_is_asked(ctx):  # noqa: F811
    with pytest.raises(NotADrafter) as caught:
        read(ctx, {"repo_id": "Qwen/Qwen3-0.6B"}, {"repo_id": "Qwen/Qwen3-32B"})
    assert "STANDALONE" in caught.value.remedy
    with pytest.raises(IncompatibleDrafter) as caught:
        read(ctx, {"repo_id": "Qwen/Qwen3-0.6B"}, KIMI_ON_DISK, Algorithm.STANDALONE)
    assert "vocab_size 151936 differs" in caught.value.what


def test_asking_for_another_algorithm_than_the_drafters(ctx):  # noqa: F811
    with pytest.raises(NotADrafter) as caught:
        read(ctx, {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long"}, KIMI_ON_DISK, Algorithm.EAGLE3)
    assert "is a DFLASH drafter" in caught.value.what and "not a EAGLE3 one" in caught.value.what
    # EAGLE for an EAGLE-3 drafter is the same family: served by the worker that loads it.
    config = read(ctx, KIMI_EAGLE3, KIMI_ON_DISK, Algorithm.EAGLE)
    assert config.algorithm is Algorithm.EAGLE3 and "asked for EAGLE" in config.identified_by


def test_ngram_needs_nothing(ctx):  # noqa: F811
    config = read(ctx, None, KIMI_ON_DISK, Algorithm.NGRAM)
    assert config.algorithm is Algorithm.NGRAM and config.drafter is None
    # SGLang 0.5.23: 12 draft tokens, top-k from --speculative-ngram-max-bfs-breadth (10), steps 12 // 10.
    assert _settings(config) == (1, 10, 12)


def test_a_dflash_family_drafter_of_another_architecture(ctx):  # noqa: F811
    config = read(ctx, {"repo_id": "SubSir/Kimi-K2.6-DFlash2-b8"}, KIMI_ON_DISK)
    assert config.algorithm is Algorithm.DFLASH and "DFlash2DraftModel" in config.identified_by
    assert any("older releases serve only DFlashDraftModel" in n for n in config.notes)
    assert _settings(config) == (1, 1, 8)


def test_a_drafter_that_needs_a_drafter_is_asked_for_one(ctx):  # noqa: F811
    with pytest.raises(ToolError) as caught:
        read(ctx, None, KIMI_ON_DISK, Algorithm.EAGLE3)
    assert "needs a draft model" in caught.value.what
