"""The fixture repos: what the host builder and the emulator rely on."""

import hashlib
import json
import os

import pytest

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
