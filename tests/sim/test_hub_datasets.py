"""The Hub emulator's dataset routes, driven by the real huggingface_hub client and the real `hf` CLI.

The dataset fixtures (sim/hub/fixtures/datasets/, written by sim/hub/dataset_fixtures.py)
carry the real repos' ids, files and columns with made-up rows.
"""

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from huggingface_hub.errors import GatedRepoError, RemoteEntryNotFoundError, RepositoryNotFoundError

from specops.sim.faults import GatedRepo, MissingRepo
from specops.sim.hub import dataset_fixtures
from specops.sim.hub.fixtures import load_dataset_fixtures, load_fixtures
from specops.sim.hub.runner import HubEmulatorThread

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

HF = Path(sys.executable).with_name("hf")
GSM8K = "openai/gsm8k"
GSM8K_FILE = "main/test-00000-of-00001.parquet"
MT_BENCH_FILE = "data/train-00000-of-00001-67c6c9fef07685a3.parquet"
FIVE = {
    "openai/gsm8k": GSM8K_FILE,
    "HuggingFaceH4/MATH-500": "test.jsonl",
    "openai/openai_humaneval": "openai_humaneval/test-00000-of-00001.parquet",
    "google-research-datasets/mbpp": "sanitized/test-00000-of-00001.parquet",
    "HuggingFaceH4/mt_bench_prompts": MT_BENCH_FILE,
}


@pytest.fixture(scope="module")
def datasets():
    return load_dataset_fixtures()


@pytest.fixture(scope="module")
def hub():
    faults = [GatedRepo(repo_id="openai/openai_humaneval"), MissingRepo(repo_id="google-research-datasets/mbpp")]
    with HubEmulatorThread(load_fixtures(), faults=faults, time_scale=10_000) as running:
        yield running


@pytest.fixture
def api(hub):
    return HfApi(endpoint=hub.url, token=False)


def _hf(hub, tmp_path, *args):
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
        "NO_COLOR": "1",
    }
    env.pop("HF_TOKEN", None)
    return subprocess.run([str(HF), "download", *args], env=env, capture_output=True, text=True, timeout=60)


def test_the_five_dataset_fixtures_have_the_real_layout(datasets):
    assert set(datasets) == set(FIVE)
    for repo_id, path in FIVE.items():
        repo = datasets[repo_id]
        assert repo.repo_type == "dataset" and "Real:" in repo.note and "Written by this project" in repo.note
        data = repo.revision().file(path)
        # Parquet is stored through LFS on the Hub (listed with an lfs block); the jsonl is a plain file.
        assert data.is_lfs is path.endswith(".parquet")
        assert data.stored_size(1024) == data.size == len(data.content)
    # Model fixtures and dataset fixtures are two namespaces.
    assert not set(datasets) & set(load_fixtures())


def test_the_committed_files_hold_the_generators_rows(datasets):
    for spec in dataset_fixtures.datasets():
        content = datasets[spec.repo_id].revision().file(spec.path).content
        assert content is not None
        if spec.is_parquet:
            table = pq.read_table(io.BytesIO(content))
            assert table.column_names == list(spec.schema)
            rows = table.to_pylist()
        else:
            rows = [json.loads(line) for line in content.decode().splitlines()]
            assert list(rows[0]) == list(spec.schema)
        assert rows == spec.rows and 12 <= len(rows) <= 20


def test_mt_bench_prompt_ids_follow_the_cards_formula(datasets):
    spec = next(d for d in dataset_fixtures.datasets() if d.repo_id == "HuggingFaceH4/mt_bench_prompts")
    for row in spec.rows:
        digest = int(hashlib.sha256("".join(row["prompt"]).encode()).hexdigest(), 16) % 10**8
        assert row["prompt_id"] == digest and len(row["prompt"]) == 2 and row["reference"] == []


def test_dataset_info_tree_and_paths_info(api, datasets):
    main = datasets[GSM8K].revision()
    info = api.dataset_info(GSM8K, files_metadata=True)
    assert info.id == GSM8K and info.sha == main.sha and info.gated is False
    siblings = {s.rfilename: s for s in info.siblings}
    parquet = main.file(GSM8K_FILE)
    assert siblings[GSM8K_FILE].size == parquet.size
    assert siblings[GSM8K_FILE].lfs.sha256 == hashlib.sha256(parquet.content).hexdigest()
    assert siblings["README.md"].lfs is None
    tree = {e.path for e in api.list_repo_tree(GSM8K, repo_type="dataset", recursive=True)}
    assert tree == {"main", GSM8K_FILE, "README.md", ".gitattributes"}
    found = api.get_paths_info(GSM8K, ["main", "README.md", "nowhere.txt"], repo_type="dataset")
    assert sorted(type(e).__name__ + ":" + e.path for e in found) == ["RepoFile:README.md", "RepoFolder:main"]
    refs = api.list_repo_refs(GSM8K, repo_type="dataset")
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", main.sha)]
    with pytest.raises(RemoteEntryNotFoundError):
        list(api.list_repo_tree(GSM8K, repo_type="dataset", path_in_repo="nowhere"))


def test_datasets_and_models_are_separate_namespaces(api, hub):
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(GSM8K)  # a dataset is not a model
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info("SubSir/Kimi-K2.6-DFlash-tmp-long")  # nor a model a dataset
    assert api.model_info("SubSir/Kimi-K2.6-DFlash-tmp-long").id == "SubSir/Kimi-K2.6-DFlash-tmp-long"
    assert hub.emulator.requests_to("/api/datasets/openai/gsm8k")


def test_hf_hub_download_of_a_dataset_file(hub, datasets, tmp_path):
    main = datasets["HuggingFaceH4/MATH-500"].revision()
    path = Path(
        hf_hub_download(
            "HuggingFaceH4/MATH-500",
            "test.jsonl",
            repo_type="dataset",
            endpoint=hub.url,
            cache_dir=str(tmp_path / "cache"),
            token=False,
        )
    )
    assert path.read_bytes() == main.file("test.jsonl").content
    assert f"datasets--HuggingFaceH4--MATH-500/snapshots/{main.sha}" in str(path)
    parquet = Path(
        hf_hub_download(
            GSM8K, GSM8K_FILE, repo_type="dataset", endpoint=hub.url, cache_dir=str(tmp_path / "cache"), token=False
        )
    )
    assert pq.read_table(parquet).num_rows == 16
    assert hub.emulator.requests_to(f"/datasets/{GSM8K}/resolve/main/{GSM8K_FILE}")


def test_the_hf_cli_downloads_a_dataset_file_into_a_local_dir(hub, datasets, tmp_path):
    repo = "HuggingFaceH4/mt_bench_prompts"
    done = _hf(hub, tmp_path, repo, MT_BENCH_FILE, "--repo-type", "dataset", "--local-dir", str(tmp_path / "d"))
    assert done.returncode == 0, done.stderr
    main = datasets[repo].revision()
    assert (tmp_path / "d" / MT_BENCH_FILE).read_bytes() == main.file(MT_BENCH_FILE).content
    metadata = tmp_path / "d" / ".cache" / "huggingface" / "download" / f"{MT_BENCH_FILE}.metadata"
    assert metadata.read_text().splitlines()[0] == main.sha  # the commit the download came from
    # A subfolder as hf names it (snapshot_download underneath: dataset info, then the files).
    done = _hf(hub, tmp_path, GSM8K, "main/", "--repo-type", "dataset", "--local-dir", str(tmp_path / "g"))
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "g" / GSM8K_FILE).column_names == ["question", "answer"]


def test_snapshot_download_of_a_dataset(hub, datasets, tmp_path):
    folder = Path(
        snapshot_download("HuggingFaceH4/MATH-500", repo_type="dataset", endpoint=hub.url, local_dir=tmp_path / "s")
    )
    for f in datasets["HuggingFaceH4/MATH-500"].revision().files:
        assert (folder / f.path).read_bytes() == f.content


def test_missing_and_gated_datasets_answer_as_the_hub_does(hub, api, tmp_path):
    with pytest.raises(RepositoryNotFoundError):  # the MissingRepo fault
        api.dataset_info("google-research-datasets/mbpp")
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info("nobody/no-such-dataset")
    with pytest.raises(GatedRepoError) as gated:
        hf_hub_download(
            "openai/openai_humaneval",
            FIVE["openai/openai_humaneval"],
            repo_type="dataset",
            endpoint=hub.url,
            cache_dir=str(tmp_path / "c"),
            token=False,
        )
    assert "dataset openai/openai_humaneval" in str(gated.value)
    missing = _hf(hub, tmp_path, "nobody/no-such-dataset", "x.parquet", "--repo-type", "dataset")
    assert missing.returncode == 1 and "Dataset 'nobody/no-such-dataset' not found" in missing.stderr
    no_file = _hf(hub, tmp_path, GSM8K, "main/nope.parquet", "--repo-type", "dataset")
    assert no_file.returncode == 1 and "File not found in dataset 'openai/gsm8k'" in no_file.stderr
