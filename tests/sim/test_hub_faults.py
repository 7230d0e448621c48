"""Hub faults and bandwidth, and what the real client really does about them."""

import hashlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError

from specops.sim.faults import DownloadCut, HubThrottle, SlowDownload
from specops.sim.hub.bandwidth import stored_bytes_per_second
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.hub.runner import HubEmulatorThread

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
SHARD_1 = "model-00001-of-00002.safetensors"
HF = Path(sys.executable).with_name("hf")


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


def _download(hub, tmp_path, filename, repo_id=DRAFTER):
    return Path(hf_hub_download(repo_id, filename, endpoint=hub.url, cache_dir=str(tmp_path / "c"), token=False))


def test_throttle_api_calls_are_not_retried(fixtures):
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=1, retry_after_s=0)]) as hub:
        api = HfApi(endpoint=hub.url, token=False)
        with pytest.raises(HfHubHTTPError) as throttled:
            api.model_info(DRAFTER)
        assert throttled.value.response.status_code == 429
        assert throttled.value.response.headers["Retry-After"] == "0"
        assert api.model_info(DRAFTER).id == DRAFTER  # the next request goes through
        assert hub.emulator.throttled == 1


def test_throttle_file_download_is_retried(fixtures, tmp_path):
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=1, retry_after_s=0)]) as hub:
        path = _download(hub, tmp_path, "config.json")
        assert path.read_bytes() == fixtures[DRAFTER].revision().file("config.json").content
        statuses = [(r.method, r.status) for r in hub.emulator.requests]
        assert statuses[0] == ("HEAD", 429) and ("HEAD", 200) in statuses


def test_throttle_makes_hf_download_fail(fixtures, tmp_path):
    # `hf download` lists the repo first (repo_info), which huggingface_hub does not retry on 429.
    with HubEmulatorThread(fixtures, faults=[HubThrottle(requests=3, retry_after_s=0)]) as hub:
        env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "home"), NO_COLOR="1")
        done = subprocess.run(
            [str(HF), "download", DRAFTER, "--local-dir", str(tmp_path / "d")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode != 0
        assert "429" in done.stderr
        assert not (tmp_path / "d" / SHARD_1).exists()


def test_cut_small_body_is_fetched_again_whole(fixtures, tmp_path):
    # httpx hands over 10 MB chunks: a body cut below that leaves nothing written, so the client restarts at 0.
    shard = fixtures[DRAFTER].revision().file(SHARD_1)
    with HubEmulatorThread(fixtures, faults=[DownloadCut(after_fraction=0.5, times=1)], time_scale=10_000) as hub:
        path = _download(hub, tmp_path, SHARD_1)
        gets = [r for r in hub.emulator.requests if r.method == "GET"]
        assert [g.range for g in gets] == [None, None]
        assert hub.emulator.cuts == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == shard.sha256(1024)


def test_cut_large_body_is_resumed_with_range(fixtures, tmp_path):
    shard = fixtures[DRAFTER].revision().file(SHARD_1)
    with HubEmulatorThread(
        fixtures, faults=[DownloadCut(after_fraction=0.8, times=1)], byte_scale=256, time_scale=10_000
    ) as hub:
        path = _download(hub, tmp_path, SHARD_1)
        gets = [(r.range, r.status) for r in hub.emulator.requests if r.method == "GET"]
    assert gets[-1] == ("bytes=10485760-", 206)
    assert path.stat().st_size == shard.stored_size(256)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == shard.sha256(256)


def test_cut_hf_download_recovers_byte_identical(fixtures, tmp_path):
    main = fixtures[DRAFTER].revision()
    with HubEmulatorThread(fixtures, faults=[DownloadCut(after_fraction=0.3, times=2)], time_scale=10_000) as hub:
        env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "home"), NO_COLOR="1")
        done = subprocess.run(
            [str(HF), "download", DRAFTER, "--local-dir", str(tmp_path / "d")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert hub.emulator.cuts == 2 and "Trying to resume download" in done.stderr
    for f in main.files:
        data = (tmp_path / "d" / f.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == hashlib.sha256(b"".join(f.iter_stored_bytes(1024))).hexdigest()


@pytest.mark.slow
@pytest.mark.serial
def test_transfer_takes_size_over_rate(fixtures, tmp_path):
    f = fixtures["z-lab/Qwen3-8B-DFlash-b16"].revision().file("model.safetensors")
    time_scale = 20.0
    expected = f.size / 110e6 / time_scale  # ~0.96 s: 2.1 GB at 110 MB/s, 20 times faster
    with HubEmulatorThread(fixtures, time_scale=time_scale, download_mb_s=110) as hub:
        started = time.monotonic()
        _download(hub, tmp_path, f.path, repo_id="z-lab/Qwen3-8B-DFlash-b16")
        took = time.monotonic() - started
    assert 0.8 * expected < took < 2.0 * expected + 0.5


@pytest.mark.slow
@pytest.mark.serial
def test_concurrent_transfers_share_the_link(fixtures, tmp_path):
    main = fixtures[DRAFTER].revision()
    shards = [f for f in main.files if f.is_lfs]
    time_scale = 50.0
    alone = max(f.size for f in shards) / 110e6 / time_scale  # what the larger one takes with the link to itself
    together = sum(f.size for f in shards) / 110e6 / time_scale  # ~1.5 s: both through one link
    with HubEmulatorThread(fixtures, time_scale=time_scale, download_mb_s=110) as hub:
        threads = [threading.Thread(target=_download, args=(hub, tmp_path / f.path, f.path)) for f in shards]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        took = time.monotonic() - started
    assert took > alone * 1.25
    assert 0.85 * together < took < 2.0 * together + 0.5


@pytest.mark.slow
@pytest.mark.serial
def test_slow_download_fault_sets_the_rate(fixtures, tmp_path):
    with HubEmulatorThread(fixtures, faults=[SlowDownload(mb_s=5)], time_scale=400, download_mb_s=1000) as hub:
        assert hub.emulator.link.bytes_per_second == stored_bytes_per_second(5, 400, 1024)
        f = fixtures["z-lab/Qwen3-8B-DFlash-b16"].revision().file("model.safetensors")
        expected = f.size / 5e6 / 400  # ~1.05 s
        started = time.monotonic()
        _download(hub, tmp_path, f.path, repo_id="z-lab/Qwen3-8B-DFlash-b16")
        took = time.monotonic() - started
    assert 0.8 * expected < took < 2.0 * expected + 0.5
