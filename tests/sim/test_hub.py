"""The Hub emulator driven by the real huggingface_hub client and the real `hf` CLI, over loopback."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from specops.sim.faults import GatedRepo, MissingRepo
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.hub.runner import HubEmulatorThread

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
GATED = "meta-llama/Llama-3.1-8B-Instruct"
HF = Path(sys.executable).with_name("hf")


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


@pytest.fixture(scope="module")
def hub(fixtures):
    # Faults: the drafter's sibling repo made gated, and z-lab's drafter made missing.
    faults = [GatedRepo(repo_id="SubSir/Kimi-K2.6-DFlash-bad-layers"), MissingRepo(repo_id="z-lab/Qwen3-8B-DFlash-b16")]
    with HubEmulatorThread(fixtures, faults=faults, time_scale=10_000) as running:
        yield running


@pytest.fixture
def api(hub):
    return HfApi(endpoint=hub.url, token=False)


def _cache(tmp_path):
    return str(tmp_path / "cache")


def test_model_info_lists_declared_sizes(api, fixtures):
    info = api.model_info(DRAFTER, files_metadata=True)
    main = fixtures[DRAFTER].revision()
    assert info.id == DRAFTER and info.sha == main.sha and info.gated is False
    sizes = {s.rfilename: s.size for s in info.siblings}
    assert sizes["model-00001-of-00002.safetensors"] == 4_970_000_000
    assert sizes["model-00002-of-00002.safetensors"] == 3_240_000_000
    lfs = {s.rfilename: s.lfs for s in info.siblings if s.lfs}
    shard = main.file("model-00001-of-00002.safetensors")
    assert lfs[shard.path].size == 4_970_000_000 and lfs[shard.path].sha256 == shard.sha256(1024)
    assert sum(s.size for s in info.siblings) == main.total_size()
    assert info.config["architectures"] == ["DFlashDraftModel"]
    assert api.model_info(GATED).gated == "manual"


def test_model_info_of_an_older_revision(api, fixtures):
    older = next(r for r in fixtures[DRAFTER].revisions if "main" not in r.refs)
    assert api.model_info(DRAFTER, revision=older.sha).sha == older.sha
    with pytest.raises(RevisionNotFoundError):
        api.model_info(DRAFTER, revision="no-such-branch")


def test_tree_listing_recursive_expanded_and_paged(api, hub):
    files = list(api.list_repo_tree("moonshotai/Kimi-K2.6", recursive=True, expand=True))
    assert len(files) == 73 and all(f.last_commit is not None for f in files)
    # 50 entries a page when expanded: the client followed the Link header.
    assert len([r for r in hub.emulator.requests_to("/api/models/moonshotai/Kimi-K2.6/tree/main")]) >= 2
    top = {e.path for e in api.list_repo_tree(GATED)}
    assert "original" in top and "original/params.json" not in top
    assert {e.path for e in api.list_repo_tree(GATED, path_in_repo="original")} == {
        "original/params.json",
        "original/tokenizer.model",
    }
    with pytest.raises(RemoteEntryNotFoundError):
        list(api.list_repo_tree(GATED, path_in_repo="nowhere"))


def test_paths_info(api):
    found = api.get_paths_info(GATED, ["original", "config.json", "missing.txt"])
    assert sorted(type(e).__name__ + ":" + e.path for e in found) == ["RepoFile:config.json", "RepoFolder:original"]


def test_hf_hub_download_stores_scaled_bytes(hub, fixtures, tmp_path):
    main = fixtures[DRAFTER].revision()
    shard = main.file("model-00002-of-00002.safetensors")
    path = Path(hf_hub_download(DRAFTER, shard.path, endpoint=hub.url, cache_dir=_cache(tmp_path), token=False))
    assert path.stat().st_size == -(-3_240_000_000 // 1024)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == shard.sha256(1024)
    assert main.sha in str(path)
    config = Path(hf_hub_download(DRAFTER, "config.json", endpoint=hub.url, cache_dir=_cache(tmp_path), token=False))
    assert config.read_bytes() == main.file("config.json").content


def test_snapshot_download_fetches_every_file(hub, fixtures, tmp_path):
    folder = Path(snapshot_download(DRAFTER, endpoint=hub.url, local_dir=tmp_path / "d", token=False))
    main = fixtures[DRAFTER].revision()
    for f in main.files:
        assert (folder / f.path).stat().st_size == f.stored_size(1024), f.path


def test_errors_are_the_hubs(hub, api, tmp_path):
    with pytest.raises(RepositoryNotFoundError) as missing:
        api.model_info("nobody/no-such-model")
    assert missing.value.response.status_code == 401  # anonymous: the Hub cannot say private from missing
    with pytest.raises(RepositoryNotFoundError) as missing_authed:
        HfApi(endpoint=hub.url, token="hf_user").model_info("nobody/no-such-model")
    assert missing_authed.value.response.status_code == 404
    with pytest.raises(RepositoryNotFoundError):  # the MissingRepo fault
        api.model_info("z-lab/Qwen3-8B-DFlash-b16")
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(DRAFTER, "nope.bin", endpoint=hub.url, cache_dir=_cache(tmp_path), token=False)


@pytest.mark.parametrize("repo_id", [GATED, "SubSir/Kimi-K2.6-DFlash-bad-layers"])
def test_gated_repo_needs_a_granted_token(hub, tmp_path, repo_id):
    def download(token):
        return hf_hub_download(repo_id, "config.json", endpoint=hub.url, cache_dir=_cache(tmp_path), token=token)

    with pytest.raises(GatedRepoError) as anonymous:
        download(False)
    assert anonymous.value.response.status_code == 401
    with pytest.raises(GatedRepoError) as not_granted:
        download("hf_someone")
    assert not_granted.value.response.status_code == 403
    assert json.loads(Path(download("hf_granted_someone")).read_text())


def test_whoami(hub):
    assert HfApi(endpoint=hub.url).whoami(token="hf_user")["name"] == "sim-user"
    with pytest.raises(HfHubHTTPError) as bad:
        HfApi(endpoint=hub.url).whoami(token="not-a-token")
    assert bad.value.response.status_code == 401


def _hf(hub, tmp_path, *args, timeout=60):
    env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf-home"), NO_COLOR="1")
    env.pop("HF_TOKEN", None)
    return subprocess.run([str(HF), "download", *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_hf_cli_download_to_local_dir(hub, fixtures, tmp_path):
    target = tmp_path / "drafter"
    done = _hf(hub, tmp_path, DRAFTER, "--local-dir", str(target))
    assert done.returncode == 0, done.stderr
    assert str(target) in done.stdout
    assert json.loads((target / "config.json").read_text())["block_size"] == 8
    shard = fixtures[DRAFTER].revision().file("model-00001-of-00002.safetensors")
    assert (target / shard.path).stat().st_size == shard.stored_size(1024)


def test_hf_cli_revision_gets_the_older_config(hub, fixtures, tmp_path):
    older = next(r for r in fixtures[DRAFTER].revisions if "main" not in r.refs)
    target = tmp_path / "older"
    done = _hf(hub, tmp_path, DRAFTER, "--revision", older.sha, "--local-dir", str(target))
    assert done.returncode == 0, done.stderr
    assert json.loads((target / "config.json").read_text())["block_size"] == 16


def test_hf_cli_dry_run_downloads_nothing(hub, tmp_path):
    done = _hf(hub, tmp_path, DRAFTER, "--dry-run", "--local-dir", str(tmp_path / "dry"))
    assert done.returncode == 0, done.stderr
    assert "[dry-run]" in done.stdout and "model-00001-of-00002.safetensors" in done.stdout
    assert not any((tmp_path / "dry").glob("*.safetensors"))


def test_hf_cli_missing_repo_fails(hub, tmp_path):
    done = _hf(hub, tmp_path, "nobody/no-such-model")
    assert done.returncode != 0
    assert "Repository Not Found" in done.stderr or "not found" in done.stderr.lower()
