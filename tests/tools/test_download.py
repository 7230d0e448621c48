"""The download tools on sim: and ssh:// hosts: a whole download, progress while it runs, a stop and a resume,
and bad input refused before anything runs."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from pydantic import ValidationError

from specops.sim.faults import SlowDownload
from specops.sim.hub.fixtures import load_fixtures
from specops.tools.context import ToolContext
from specops.tools.download import download_status, start_download, wait_download
from specops.tools.download.models import (
    DownloadCause,
    DownloadState,
    DownloadStatusArgs,
    StartDownloadArgs,
    WaitDownloadArgs,
)
from specops.tools.errors import PathOutsideAllowedRoots
from specops.tools.registry import REGISTRY

from .worlds import ctx, host, reach, sim_host, start_world, world  # noqa: F401

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
SMALL_DRAFTER = "z-lab/Qwen3-8B-DFlash-b16"
FIXTURES = load_fixtures()


def stored_sizes(repo_id: str, byte_scale: int) -> dict[str, int]:
    return {f.path: f.stored_size(byte_scale) for f in FIXTURES[repo_id].revision().files}


def on_disk(target: Path) -> dict[str, int]:
    """What lies under `target`, a real path on this machine (a world's layout.host_path of the host's path)."""
    root = Path(target)
    return {
        p.relative_to(root).as_posix(): p.stat().st_size
        for p in root.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(root).parts
    }


def fresh(name: str) -> str:
    """A target no other test (or backend pass over the shared world) has used."""
    return f"models/{name}-{uuid.uuid4().hex[:8]}"


def wait(ctx, handle, timeout_s: float = 30):
    return wait_download(ctx, WaitDownloadArgs(download=handle.id, timeout_s=timeout_s, poll_s=0.1)).status


@pytest.fixture(scope="module")
def sim_ctx(sim_host) -> ToolContext:
    return ToolContext.for_host(sim_host)


def test_tools_are_registered_with_what_they_change():
    assert REGISTRY["start_download"].mutates and not REGISTRY["wait_download"].mutates
    assert "download_status" not in REGISTRY  # wait_download with timeout_s 0 is the look


def test_download_finishes_and_matches_the_listing(ctx, world):
    handle = start_download(ctx, StartDownloadArgs(repo_id=SMALL_DRAFTER, target_dir=fresh("small-drafter")))
    revision = FIXTURES[SMALL_DRAFTER].revision()
    assert handle.sha == revision.sha and handle.sizes_source == "head"
    assert handle.expected_bytes == revision.total_size() and handle.expected_human.endswith("GB")
    assert handle.already_present_files == 0 and handle.target_dir.startswith(ctx.resolve("models/small-drafter-"))
    assert "--revision" in handle.command and revision.sha in handle.command

    status = wait(ctx, handle)
    assert status.state is DownloadState.FINISHED, status
    assert status.failure is None and status.config_json_ok is True
    assert status.files_complete == status.files_total == len(revision.files)
    assert status.done_bytes == status.expected_bytes and status.fraction == 1.0
    # On disk: every file at the size the Hub delivers (a large file is 1/byte_scale of its listed size here).
    assert on_disk(world.layout.host_path(handle.target_dir)) == stored_sizes(SMALL_DRAFTER, world.state.byte_scale)
    assert "exited 0" in status.log_tail
    # Both are plain JSON for the transcript and for handing the handle back.
    assert json.loads(status.model_dump_json())["state"] == "finished"
    assert type(handle).model_validate_json(handle.model_dump_json()) == handle


def test_include_selects_files_and_rerun_reports_what_is_there(sim_ctx):
    ctx = sim_ctx
    args = StartDownloadArgs(repo_id=DRAFTER, target_dir=fresh("drafter-json"), include=["*.json"])
    first = start_download(ctx, args)
    assert sorted(f.path for f in first.files) == ["config.json", "model.safetensors.index.json"]
    assert wait(ctx, first).state is DownloadState.FINISHED
    again = start_download(ctx, args)
    assert again.already_present_files == 2 and again.already_present_bytes == again.expected_bytes
    assert wait(ctx, again).state is DownloadState.FINISHED


@pytest.mark.parametrize("backend", ["sim", "ssh"])
def test_progress_while_running_then_stop_and_resume(backend):
    # The small files land first, the two shards take a second or two (longer over SSH, where polling is slower).
    mb_s = {"sim": 10.0, "ssh": 6.0}[backend]
    with start_world(faults=[SlowDownload(mb_s=mb_s)], time_scale=400) as slow_world, reach(slow_world, backend) as h:
        ctx = ToolContext.for_host(h)
        args = StartDownloadArgs(repo_id=DRAFTER, target_dir="models/drafter", include=["*.json", "*00002*"])
        handle = start_download(ctx, args)
        deadline = time.monotonic() + 20
        status = download_status(ctx, DownloadStatusArgs(download=handle.id))
        while status.files_complete == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
            status = download_status(ctx, DownloadStatusArgs(download=handle.id))
        assert status.state is DownloadState.RUNNING, status
        assert 0 < status.files_complete < status.files_total
        assert 0 < status.done_bytes < status.expected_bytes and 0 < status.fraction < 1
        assert any(p.endswith(".safetensors") for p in status.missing_files)
        looked = wait_download(ctx, WaitDownloadArgs(download=handle.id, timeout_s=0))  # the model's look
        assert looked.timed_out and looked.status.state is DownloadState.RUNNING and looked.waited_s < 10

        h.stop(handle.process)
        stopped = download_status(ctx, DownloadStatusArgs(download=handle.id))
        assert stopped.state is DownloadState.FAILED and stopped.failure.cause is DownloadCause.KILLED
        kept = stopped.files_complete
        assert kept >= 1

        resumed = start_download(ctx, args)
        assert resumed.already_present_files == kept > 0
        assert 0 < resumed.already_present_bytes < resumed.expected_bytes
        done = wait(ctx, resumed)
        assert done.state is DownloadState.FINISHED, done
        wanted = {
            p: n
            for p, n in stored_sizes(DRAFTER, slow_world.state.byte_scale).items()
            if p.endswith(".json") or "00002" in p
        }
        assert on_disk(slow_world.layout.host_path(resumed.target_dir)) == wanted


@pytest.mark.parametrize(
    "bad",
    [
        {"repo_id": "SubSir/x;rm -rf /"},
        {"repo_id": "$(reboot)/x"},
        {"target_dir": "models/`id`"},
        {"target_dir": "models/../../etc"},
        {"include": ["*.json; ls"]},
        {"exclude": ["$HOME"]},
        {"revision": "main && id"},
        {"max_attempts": 0},
    ],
)
def test_bad_input_is_refused_by_the_arguments(bad):
    with pytest.raises(ValidationError):
        StartDownloadArgs.model_validate({"repo_id": DRAFTER, "target_dir": "models/d", **bad})


def test_target_outside_allowed_roots_is_refused_before_anything_runs(sim_ctx, world):
    ctx = sim_ctx
    asked = len(world.hub.emulator.requests)
    with pytest.raises(PathOutsideAllowedRoots):
        start_download(ctx, StartDownloadArgs(repo_id=DRAFTER, target_dir="/etc/models"))
    assert len(world.hub.emulator.requests) == asked
    assert not Path(ctx.resolve("/etc/models")).exists()
