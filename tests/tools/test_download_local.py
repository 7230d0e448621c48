"""The download tools on a LocalHost: the real `hf` of this environment against a Hub emulator (HF_ENDPOINT),
into a temporary directory, with bytes in flight counted while a large file downloads."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from specops.sim.hub.fixtures import load_fixtures
from specops.sim.hub.runner import HubEmulatorThread
from specops.tools.context import ToolContext
from specops.tools.download import download_status, start_download, wait_download
from specops.tools.download.models import DownloadState, DownloadStatusArgs, StartDownloadArgs, WaitDownloadArgs
from specops.tools.hosts import LocalHost

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

SMALL_DRAFTER = "z-lab/Qwen3-8B-DFlash-b16"
# 64 modelled bytes per stored byte: the 2.1 GB shard is 33 MB on disk, written by hf in 10 MB chunks; at
# 700 modelled MB/s that takes about three seconds, long enough to see the partial file grow.
BYTE_SCALE = 64


@pytest.fixture
def local_ctx(tmp_path, monkeypatch):
    fixtures = load_fixtures()
    with HubEmulatorThread(fixtures, byte_scale=BYTE_SCALE, download_mb_s=700) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{Path('/usr/bin')}:{Path('/bin')}")
        monkeypatch.delenv("HF_TOKEN", raising=False)
        home = tmp_path / "home"
        home.mkdir()
        ctx = ToolContext(host=LocalHost(), home=str(home), allowed_roots=(str(home),))
        yield ctx, fixtures


def test_local_download_reports_bytes_in_flight_then_finishes(local_ctx):
    ctx, fixtures = local_ctx
    handle = start_download(ctx, StartDownloadArgs(repo_id=SMALL_DRAFTER, target_dir="models/drafter"))
    assert handle.target_dir == f"{ctx.home}/models/drafter"
    shard = next(f for f in handle.files if f.path == "model.safetensors")
    assert shard.listed_bytes == 2_104_518_656 and shard.stored_bytes == -(-shard.listed_bytes // BYTE_SCALE)

    deadline = time.monotonic() + 20
    status = download_status(ctx, DownloadStatusArgs(download=handle.id))
    while not (status.files_complete < status.files_total and status.stored_present_bytes > 10**6):
        assert status.state is DownloadState.RUNNING and time.monotonic() < deadline, status
        time.sleep(0.05)
        status = download_status(ctx, DownloadStatusArgs(download=handle.id))
    # The shard is in flight: its partial bytes count, converted back to listed bytes.
    assert "model.safetensors" in status.missing_files
    assert 0 < status.fraction < 1 and 10**6 * BYTE_SCALE * 0.9 < status.done_bytes < status.expected_bytes

    done = wait_download(ctx, WaitDownloadArgs(download=handle.id, timeout_s=40, poll_s=0.1)).status
    assert done.state is DownloadState.FINISHED, done
    assert done.config_json_ok is True
    stored = {f.path: f.stored_size(BYTE_SCALE) for f in fixtures[SMALL_DRAFTER].revision().files}
    target = Path(handle.target_dir)
    assert {p: (target / p).stat().st_size for p in stored} == stored
    assert Path(handle.log_path).is_relative_to(ctx.home)
