"""read_drafter_config against the Hub emulator's fixture repos and the target on the seed host's disk."""

import json

import pytest
from pydantic import ValidationError

from specops.tools.drafter_config import (
    ConfigNotFound,
    IncompatibleDrafter,
    NotADrafter,
    ReadDrafterConfigArgs,
    read_drafter_config,
)
from specops.tools.hub import RepoNotFound

from .worlds import ctx, host, world  # noqa: F401

KIMI_ON_DISK = {"path": "models/Kimi-K2.6"}


def read(ctx, drafter, target=None):  # noqa: F811
    return read_drafter_config(ctx, ReadDrafterConfigArgs(drafter=drafter, target=target))


def test_kimi_drafter_fits_the_target_on_disk(ctx):  # noqa: F811
    config = read(ctx, {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long"}, KIMI_ON_DISK)
    assert config.is_dflash and config.block_size == 8 and config.block_size_from == "top_level"
    assert config.target_layer_ids == [1, 12, 24, 35, 47, 58] and config.target_layer_ids_from == "dflash_config"
    assert config.mask_token_id == 163838 and config.mask_token == "<|MASK|>" and config.draft_layers == 6
    assert config.drafter.hidden_size == 7168 and config.drafter.dtype == "bfloat16"
    assert config.drafter.weight_bytes == 4_970_000_000 + 3_240_000_000
    # K2.6 nests its layer count in text_config; its weights come from the index on disk.
    assert config.target.num_hidden_layers == 61 and config.target.weight_bytes > 500 * 1024**3
    assert len(config.checks) == 3


def test_layer_ids_out_of_range(ctx):  # noqa: F811
    with pytest.raises(IncompatibleDrafter) as caught:
        read(ctx, {"repo_id": "SubSir/Kimi-K2.6-DFlash-bad-layers"}, KIMI_ON_DISK)
    assert "[64, 70]" in caught.value.what and "SGLang" in caught.value.what
    assert caught.value.details["target_layers"] == 61


def test_not_a_drafter(ctx):  # noqa: F811
    with pytest.raises(NotADrafter) as caught:
        read(ctx, {"repo_id": "Qwen/Qwen3-8B"})
    assert "Qwen3ForCausalLM" in caught.value.what and caught.value.kind == "not_a_drafter"


def test_qwen_drafter_fits_qwen_and_not_kimi(ctx):  # noqa: F811
    config = read(ctx, {"repo_id": "z-lab/Qwen3-8B-DFlash-b16"}, {"repo_id": "Qwen/Qwen3-8B"})
    assert config.block_size == 16 and config.target.num_hidden_layers == 36 and not config.notes
    with pytest.raises(IncompatibleDrafter) as caught:
        read(ctx, {"repo_id": "z-lab/Qwen3-8B-DFlash-b16"}, KIMI_ON_DISK)
    assert "hidden_size 4096" in caught.value.what and "vocab_size 151936" in caught.value.what


def test_dflash_config_wins_and_defaults_are_noted(ctx, world):  # noqa: F811
    directory = world.layout.home / "models" / "handmade-drafter"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps({
        "architectures": ["DFlashDraftModel"], "num_hidden_layers": 2, "hidden_size": 7168, "vocab_size": 163840,
        "block_size": 16, "dflash_config": {"block_size": 4},
    }))
    config = read(ctx, {"path": "models/handmade-drafter"}, KIMI_ON_DISK)
    assert config.block_size == 4 and config.block_size_from == "dflash_config"
    assert config.target_layer_ids is None and any("evenly" in n for n in config.notes)
    (directory / "config.json").write_text(json.dumps({"architectures": ["DFlashDraftModel"], "num_hidden_layers": 2}))
    config = read(ctx, {"path": "models/handmade-drafter"})
    assert config.block_size == 16 and config.block_size_from == "sglang_default"


def test_missing_things_are_typed_errors(ctx):  # noqa: F811
    with pytest.raises(ConfigNotFound):
        read(ctx, {"path": "models/nothing-here"})
    with pytest.raises(RepoNotFound):
        read(ctx, {"repo_id": "nobody/no-such-drafter"})


def test_bad_input_is_refused():
    for bad in ({"repo_id": "a/b|c"}, {"path": "models/`x`"}, {}, {"repo_id": "a/b", "path": "x"}):
        with pytest.raises(ValidationError):
            ReadDrafterConfigArgs(drafter=bad)
