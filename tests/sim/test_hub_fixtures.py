"""The fixture repos: what the host builder and the emulator rely on."""

import hashlib
import json
import os

import pytest
import yaml

from specops.sim.hub.fixtures import FixtureFile, load_fixtures

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


def test_the_scenario_repos_are_there(fixtures):
    assert {
        DRAFTER,
        "SubSir/Kimi-K2.6-DFlash-bad-layers",
        "moonshotai/Kimi-K2.6",
        "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
        "Qwen/Qwen3-8B",
        "z-lab/Qwen3-8B-DFlash-b16",
        "meta-llama/Llama-3.1-8B-Instruct",
    } <= set(fixtures)
    assert fixtures["meta-llama/Llama-3.1-8B-Instruct"].gated
    assert not fixtures[DRAFTER].gated


def test_declared_sizes_are_the_modelled_ones(fixtures):
    gib = 1024**3
    assert fixtures[DRAFTER].revision().total_size() == pytest.approx(8.21e9, rel=0.01)
    assert fixtures["moonshotai/Kimi-K2.6"].revision().total_size() / gib == pytest.approx(553.8, abs=0.1)
    assert fixtures["Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"].revision().total_size() / gib == pytest.approx(221, abs=1)
    assert fixtures["Qwen/Qwen3-8B"].revision().total_size() == pytest.approx(16.4e9, rel=0.01)
    shards = [f for f in fixtures["moonshotai/Kimi-K2.6"].revision().files if f.path.endswith(".safetensors")]
    assert len(shards) == 64


def _config(repo, ref=None):
    return json.loads(repo.revision(ref).file("config.json").content)


def test_drafter_configs(fixtures):
    main = _config(fixtures[DRAFTER])
    assert main["architectures"] == ["DFlashDraftModel"]
    assert main["block_size"] == 8 and main["num_hidden_layers"] == 6
    assert main["dflash_config"] == {
        "mask_token": "<|MASK|>",
        "mask_token_id": 163838,
        "target_layer_ids": [1, 12, 24, 35, 47, 58],
    }
    older = [r for r in fixtures[DRAFTER].revisions if "main" not in r.refs]
    assert len(older) == 1 and _config(fixtures[DRAFTER], older[0].sha)["block_size"] == 16
    target_layers = _config(fixtures["moonshotai/Kimi-K2.6"])["text_config"]["num_hidden_layers"]
    assert target_layers == 61
    bad = _config(fixtures["SubSir/Kimi-K2.6-DFlash-bad-layers"])["dflash_config"]["target_layer_ids"]
    assert max(bad) >= target_layers
    assert _config(fixtures["Qwen/Qwen3-8B"])["architectures"] == ["Qwen3ForCausalLM"]
    index = json.loads(fixtures[DRAFTER].revision().file("model.safetensors.index.json").content)
    assert set(index["weight_map"].values()) == {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}


def test_revision_lookup(fixtures):
    repo = fixtures[DRAFTER]
    main = repo.revision()
    assert repo.revision("main") is main and repo.revision(main.sha) is main
    assert repo.revision(main.sha[:7]) is main
    with pytest.raises(KeyError):
        repo.revision("no-such-branch")


def test_stored_bytes_are_deterministic_and_seekable(fixtures):
    f = fixtures[DRAFTER].revision().file("model-00002-of-00002.safetensors")
    assert f.stored_size(1024) == -(-3_240_000_000 // 1024)
    whole = b"".join(f.iter_stored_bytes(1024))
    assert len(whole) == f.stored_size(1024)
    assert hashlib.sha256(whole).hexdigest() == f.sha256(1024)
    start = 3 * 65536 + 123
    assert b"".join(f.iter_stored_bytes(1024, start=start, chunk=1000)) == whole[start:]
    again = load_fixtures()[DRAFTER].revision().file(f.path)
    assert again.sha256(1024) == f.sha256(1024)
    # Blocks differ, so bytes resumed at a wrong offset would change the hash.
    assert whole[:65536] != whole[65536:131072]


def test_text_files_are_stored_as_they_are(fixtures):
    f = fixtures[DRAFTER].revision().file("config.json")
    assert not f.is_lfs and f.stored_size(1024) == f.size == len(f.content)
    blob = hashlib.sha1(b"blob %d\0" % len(f.content) + f.content).hexdigest()
    assert f.blob_id(1024) == blob == f.etag(1024)


def test_write_to_full_and_sparse(tmp_path, fixtures):
    f = fixtures[DRAFTER].revision().file("model-00001-of-00002.safetensors")
    full, sparse = tmp_path / "full", tmp_path / "sparse"
    f.write_to(full, 1024)
    f.write_to(sparse, 1024, sparse=True)
    assert hashlib.sha256(full.read_bytes()).hexdigest() == f.sha256(1024)
    assert os.path.getsize(sparse) == f.stored_size(1024)
    assert os.stat(sparse).st_blocks * 512 < f.stored_size(1024) // 4


def test_bad_offset_is_refused():
    f = FixtureFile(path="x.bin", size=1000, is_lfs=True, seed="x")
    with pytest.raises(ValueError):
        next(f.iter_stored_bytes(1, start=1001))


# Repos shaped like real ones: EAGLE-3 drafters, an MTP target and a standalone drafter with its target.
KIMI_EAGLE = "lightseekorg/kimi-k2.6-eagle3.1-mla"
LLAMA_EAGLE = "lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge"
DEEPSEEK = "deepseek-ai/DeepSeek-V3"
QWEN_32B = "Qwen/Qwen3-32B"
QWEN_06B = "Qwen/Qwen3-0.6B"
REAL_SHAPED = [KIMI_EAGLE, LLAMA_EAGLE, DEEPSEEK, QWEN_32B, QWEN_06B]


def _front_matter(repo):
    text = repo.revision().file("README.md").content.decode()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def _weights(revision):
    return {f.path: f.size for f in revision.files if f.is_lfs and f.path.endswith(".safetensors")}


@pytest.mark.parametrize("repo_id", REAL_SHAPED)
def test_real_shaped_repos_load_with_weights_and_valid_json(fixtures, repo_id):
    repo = fixtures[repo_id]
    main = repo.revision()
    assert not repo.gated and repo.note
    for f in main.files:
        if not f.is_lfs:
            assert len(f.content) < 10_000_000
            if f.path.endswith(".json"):
                json.loads(f.content)
    assert _weights(main)
    config = _config(repo)
    assert config["architectures"] and config["hidden_size"] and config["vocab_size"]


@pytest.mark.parametrize("repo_id", [KIMI_EAGLE, LLAMA_EAGLE, QWEN_06B])
def test_single_file_repos_have_no_index(fixtures, repo_id):
    main = fixtures[repo_id].revision()
    assert list(_weights(main)) == ["model.safetensors"]
    with pytest.raises(KeyError):
        main.file("model.safetensors.index.json")


@pytest.mark.parametrize("repo_id", [DEEPSEEK, QWEN_32B])
def test_index_names_declared_shards_and_totals_the_declared_size(fixtures, repo_id):
    main = fixtures[repo_id].revision()
    index = json.loads(main.file("model.safetensors.index.json").content)
    declared = _weights(main)
    assert set(index["weight_map"].values()) == set(declared)
    assert sum(declared.values()) == index["metadata"]["total_size"]


def test_kimi_eagle3_mla_drafter(fixtures):
    repo = fixtures[KIMI_EAGLE]
    config = _config(repo)
    assert config["architectures"] == ["Eagle3DeepseekV2ForCausalLM"]
    assert config["num_hidden_layers"] == 1 and config["hidden_size"] == 7168 and config["vocab_size"] == 163840
    assert config["draft_vocab_size"] == 163840
    assert {k: config[k] for k in ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim")} == {
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
    }
    assert config["v_head_dim"] == 128 and config["fc_norm"] and config["norm_output"]
    eagle = config["eagle_config"]
    assert eagle["use_aux_hidden_state"] is True
    target = _config(fixtures["moonshotai/Kimi-K2.6"])["text_config"]
    assert eagle["eagle_aux_hidden_state_layer_ids"] == [1, 29, 57]
    assert all(0 <= i < target["num_hidden_layers"] for i in eagle["eagle_aux_hidden_state_layer_ids"])
    assert config["hidden_size"] == target["hidden_size"] and config["vocab_size"] == target["vocab_size"]
    assert _front_matter(repo)["base_model"] == "moonshotai/Kimi-K2.6"
    assert _weights(repo.revision())["model.safetensors"] == pytest.approx(6.03e9, rel=0.01)


def test_llama_eagle3_drafter(fixtures):
    repo = fixtures[LLAMA_EAGLE]
    config = _config(repo)
    assert config["architectures"] == ["LlamaForCausalLMEagle3"]
    assert config["num_hidden_layers"] == 1 and config["hidden_size"] == 4096
    assert config["vocab_size"] == 128256 and config["draft_vocab_size"] == 32000
    target = _config(fixtures["meta-llama/Llama-3.1-8B-Instruct"])
    assert config["hidden_size"] == target["hidden_size"] and config["vocab_size"] == target["vocab_size"]
    assert _weights(repo.revision())["model.safetensors"] == pytest.approx(0.85e9, rel=0.01)


def test_deepseek_v3_has_one_mtp_layer(fixtures):
    repo = fixtures[DEEPSEEK]
    config = _config(repo)
    assert config["architectures"] == ["DeepseekV3ForCausalLM"]
    assert config["num_nextn_predict_layers"] == 1 and config["num_hidden_layers"] == 61
    assert config["hidden_size"] == 7168 and config["vocab_size"] == 129280
    assert config["quantization_config"]["quant_method"] == "fp8"
    assert config["quantization_config"]["weight_block_size"] == [128, 128]
    main = repo.revision()
    shards = _weights(main)
    assert len(shards) == 163 and all(p.endswith("-of-000163.safetensors") for p in shards)
    assert sum(shards.values()) == pytest.approx(688e9, rel=0.005)
    weight_map = json.loads(main.file("model.safetensors.index.json").content)["weight_map"]
    layers = {int(name.split(".")[2]) for name in weight_map if name.startswith("model.layers.")}
    assert layers == set(range(62))
    mtp = [name for name in weight_map if name.startswith("model.layers.61.")]
    for part in ("enorm", "hnorm", "eh_proj", "embed_tokens", "shared_head.head", "self_attn.kv_a_proj_with_mqa"):
        assert f"model.layers.61.{part}.weight" in mtp
    assert weight_map["lm_head.weight"] == "model-00163-of-000163.safetensors"
    assert weight_map["model.embed_tokens.weight"] == "model-00001-of-000163.safetensors"


def test_qwen3_standalone_drafter_and_target(fixtures):
    target, drafter = _config(fixtures[QWEN_32B]), _config(fixtures[QWEN_06B])
    assert target["architectures"] == drafter["architectures"] == ["Qwen3ForCausalLM"]
    assert (target["num_hidden_layers"], target["hidden_size"]) == (64, 5120)
    assert (drafter["num_hidden_layers"], drafter["hidden_size"]) == (28, 1024)
    assert target["vocab_size"] == drafter["vocab_size"] == 151936
    assert drafter["tie_word_embeddings"] is True and target["tie_word_embeddings"] is False
    shards = _weights(fixtures[QWEN_32B].revision())
    assert len(shards) == 17 and sum(shards.values()) == 65_524_246_528
    assert _weights(fixtures[QWEN_06B].revision()) == {"model.safetensors": 1_503_300_328}
