"""read_drafter_config against the Hub emulator's fixture repos and the target on the seed host's disk."""

import json

import httpx
import pytest
from huggingface_hub.errors import EntryNotFoundError
from pydantic import ValidationError

from specops.tools.drafters import (
    ConfigNotFound,
    IncompatibleDrafter,
    NotADrafter,
    ReadDrafterConfigArgs,
    card_base_models,
    config_target_model,
    read_drafter_config,
)
from specops.tools.drafters import sources as drafter_sources
from specops.tools.hub import RepoNotFound

from .worlds import ctx, host, world  # noqa: F401

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

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
    (directory / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["DFlashDraftModel"],
                "num_hidden_layers": 2,
                "hidden_size": 7168,
                "vocab_size": 163840,
                "block_size": 16,
                "dflash_config": {"block_size": 4},
            }
        )
    )
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


# -- the model the drafter was trained for --------------------------------------------------------------------------

QWEN_SIZED = {"architectures": ["DFlashDraftModel"], "num_hidden_layers": 2, "hidden_size": 4096, "vocab_size": 151936}


def _drafter_dir(world, name, config, card=None):  # noqa: F811
    directory = world.layout.home / "models" / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    if card is not None:
        (directory / "README.md").write_text(card)
    return {"path": f"models/{name}"}


def test_hub_drafters_name_their_target_in_the_model_card(ctx):  # noqa: F811
    kimi = read(ctx, {"repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long"}, KIMI_ON_DISK)
    assert kimi.target_model == "moonshotai/Kimi-K2.6" and kimi.target_model_source == "model_card"
    assert "DFlash drafter for moonshotai/Kimi-K2.6," in kimi.summary
    # models/Kimi-K2.6 is moonshotai/Kimi-K2.6 by name: nothing to note.
    assert not any("trained for" in note for note in kimi.notes)
    qwen = read(ctx, {"repo_id": "z-lab/Qwen3-8B-DFlash-b16"}, {"repo_id": "Qwen/Qwen3-8B"})
    assert qwen.target_model == "Qwen/Qwen3-8B" and qwen.target_model_source == "model_card" and not qwen.notes
    assert read(ctx, {"repo_id": "z-lab/Qwen3-8B-DFlash-b16"}).target_model == "Qwen/Qwen3-8B"


def test_the_config_names_the_target_before_the_model_card(ctx, world):  # noqa: F811
    drafter = _drafter_dir(
        world,
        "config-names-target",
        {
            **QWEN_SIZED,
            "base_model": "Qwen/Qwen3-8B-Base",
            "dflash_config": {"target_model_name_or_path": "Qwen/Qwen3-8B", "target_layer_ids": [1, 9]},
        },
        card="---\nbase_model: someone/else\n---\n# a drafter\n",
    )
    config = read(ctx, drafter, {"repo_id": "Qwen/Qwen3-8B"})
    assert config.target_model == "Qwen/Qwen3-8B" and config.target_model_source == "config"
    assert not any("trained for" in note for note in config.notes)


def test_a_drafter_on_disk_reads_its_model_card(ctx, world):  # noqa: F811
    card = "---\nlicense: mit\nbase_model:\n- Qwen/Qwen3-8B\n- Qwen/Qwen3-8B-Base\ntags: [dflash]\n---\n\n# Drafter\n"
    config = read(ctx, _drafter_dir(world, "card-lists-two", QWEN_SIZED, card=card))
    assert config.target_model == "Qwen/Qwen3-8B" and config.target_model_source == "model_card"
    assert any("2 base models" in note and "Qwen/Qwen3-8B-Base" in note for note in config.notes)


def test_no_config_key_and_no_card_say_nothing(ctx, world):  # noqa: F811
    bare = read(ctx, _drafter_dir(world, "no-card", QWEN_SIZED))
    assert bare.target_model is None and bare.target_model_source is None
    assert "DFlash drafter, 2 draft layers" in bare.summary
    prose = read(ctx, _drafter_dir(world, "card-without-metadata", QWEN_SIZED, card="# Drafter for Qwen3-8B\n"))
    assert prose.target_model is None and prose.target_model_source is None


def test_a_target_under_another_name_is_noted(ctx, world):  # noqa: F811
    drafter = _drafter_dir(world, "trained-for-14b", {**QWEN_SIZED, "target_model": "Qwen/Qwen3-14B"})
    config = read(ctx, drafter, {"repo_id": "Qwen/Qwen3-8B"})
    assert config.target_model == "Qwen/Qwen3-14B" and config.target_model_source == "config"
    [note] = [note for note in config.notes if "trained for" in note]
    assert "Qwen/Qwen3-14B" in note and "Qwen/Qwen3-8B@main" in note


def test_a_hub_model_card_that_is_missing_or_unreadable(ctx, monkeypatch):  # noqa: F811
    real = drafter_sources.hub_file  # the seam where the Hub is read: a card that cannot be had

    def without_card(repo_id, filename, *args):
        if filename == "README.md":
            raise EntryNotFoundError(f"{repo_id} has no {filename}")
        return real(repo_id, filename, *args)

    monkeypatch.setattr(drafter_sources, "hub_file", without_card)
    config = read(ctx, {"repo_id": "z-lab/Qwen3-8B-DFlash-b16"})
    assert config.target_model is None and not any("model card" in note for note in config.notes)

    def card_unreachable(repo_id, filename, *args):
        if filename == "README.md":
            raise httpx.ConnectError("connection refused")
        return real(repo_id, filename, *args)

    monkeypatch.setattr(drafter_sources, "hub_file", card_unreachable)
    config = read(ctx, {"repo_id": "z-lab/Qwen3-8B-DFlash-b16"})
    assert config.target_model is None and config.block_size == 16
    assert any("model card" in note and "connection refused" in note for note in config.notes)


@pytest.mark.parametrize(
    ("card", "bases"),
    [
        ("---\nbase_model: moonshotai/Kimi-K2.6\n---\n# x\n", ["moonshotai/Kimi-K2.6"]),
        ("---\nbase_model:\n  - Qwen/Qwen3-8B\n  - Qwen/Qwen3-8B-Base\n---\n", ["Qwen/Qwen3-8B", "Qwen/Qwen3-8B-Base"]),
        ("---\nbase_model: ['a/b', 'c/d']\nlicense: mit\n---\n", ["a/b", "c/d"]),
        ('\ufeff---\r\nbase_model: "Qwen/Qwen3-8B"\r\n---\r\nbody\r\n', ["Qwen/Qwen3-8B"]),
        ("---\nlicense: mit\n---\nbase_model: not/in-the-front-matter\n", []),
        ("# Title\n\nbase_model: not/front-matter\n", []),
        ("---\nbase_model: [unclosed\n---\n", []),
        ("---\nbase_model: a/b\n", []),
        ("---\nbase_model: 42\n---\n", []),
        ("---\n- just\n- a list\n---\n", []),
        ("", []),
    ],
)
def test_base_models_of_a_model_card(card, bases):
    assert card_base_models(card) == bases


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"target_model": "Qwen/Qwen3-8B"}, "Qwen/Qwen3-8B"),
        ({"target_model_name_or_path": "/models/Qwen3-8B"}, "/models/Qwen3-8B"),
        ({"verifier": "moonshotai/Kimi-K2.6"}, "moonshotai/Kimi-K2.6"),
        ({"base_model": "Qwen/Qwen3-8B"}, "Qwen/Qwen3-8B"),
        ({"base_model": "Qwen/Qwen3-8B-Base", "target_model": "Qwen/Qwen3-8B"}, "Qwen/Qwen3-8B"),
        ({"target_model": "top/level", "dflash_config": {"target_model": "nested/wins"}}, "nested/wins"),
        ({"target_model": "  Qwen/Qwen3-8B  "}, "Qwen/Qwen3-8B"),
        ({"target_model": "", "base_model": "Qwen/Qwen3-8B"}, "Qwen/Qwen3-8B"),
        ({"target_model": "not a model id"}, None),
        ({"target_model": {"name": "Qwen/Qwen3-8B"}}, None),
        ({"num_target_layers": 36, "target_layer_ids": [1, 9]}, None),
        ({"dflash_config": None}, None),
    ],
)
def test_target_model_keys_of_a_config(config, named):
    assert config_target_model(config) == named
