"""The download tools against a faulty world: each failure classified from what real huggingface_hub printed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from specops.sim.faults import BrokenCli, DownloadCut, GatedRepo, HubThrottle, MissingRepo
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import MountSpec
from specops.tools.context import ToolContext
from specops.tools.download import start_download, wait_download
from specops.tools.download.models import (
    DownloadCause,
    DownloadMethod,
    DownloadState,
    StartDownloadArgs,
    WaitDownloadArgs,
)
from specops.tools.hub import RepoNotFound

from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
SMALL_DRAFTER = "z-lab/Qwen3-8B-DFlash-b16"
FAST = 400.0


def wait(ctx, handle, timeout_s: float = 40):
    return wait_download(ctx, WaitDownloadArgs(download=handle.id, timeout_s=timeout_s, poll_s=0.1)).status


def args(**kw) -> StartDownloadArgs:
    return StartDownloadArgs(**{"repo_id": SMALL_DRAFTER, "target_dir": "models/drafter", **kw})


@pytest.mark.parametrize("backend", ["sim", "ssh"])
def test_cli_printing_help_is_cli_unusable_and_the_library_method_works(backend):
    with start_world(faults=[BrokenCli()], time_scale=FAST) as world, reach(world, backend) as h:
        ctx = ToolContext.for_host(h)
        status = wait(ctx, start_download(ctx, args()))
        assert status.state is DownloadState.FAILED and status.failure.cause is DownloadCause.CLI_UNUSABLE
        assert "exited 0 without downloading" in status.failure.what and "method='library'" in status.failure.remedy
        assert "Main commands:" in status.log_tail and status.files_complete == 0

        fallback = start_download(ctx, args(method=DownloadMethod.LIBRARY))
        assert fallback.command[:2] == ["python3", "-c"]
        done = wait(ctx, fallback)
        assert done.state is DownloadState.FINISHED, done
        assert done.config_json_ok is True and done.files_complete == done.files_total


def test_old_cli_on_hub_1x_and_missing_cli_on_2x_are_cli_unusable():
    with start_world(time_scale=FAST) as world, reach(world, "sim") as h:  # seed-ct200: huggingface_hub 1.3.4
        ctx = ToolContext.for_host(h)
        status = wait(ctx, start_download(ctx, args(method=DownloadMethod.HUGGINGFACE_CLI)))
        assert status.failure.cause is DownloadCause.CLI_UNUSABLE and "no longer works" in status.failure.what
    profile = load_profile("seed-ct200")
    profile = profile.model_copy(update={"software": profile.software.model_copy(update={"huggingface_hub": "2.4.0"})})
    with start_world(profile, time_scale=FAST) as world, reach(world, "sim") as h:
        ctx = ToolContext.for_host(h)
        status = wait(ctx, start_download(ctx, args(method=DownloadMethod.HUGGINGFACE_CLI)))
        assert status.failure.cause is DownloadCause.CLI_UNUSABLE and "not found" in status.failure.what


def test_gated_repo_needs_a_granted_token_which_never_shows():
    backend = "sim"
    granted = "hf_granted_specops_test_secret"
    with start_world(faults=[GatedRepo(repo_id=SMALL_DRAFTER)], time_scale=FAST) as world, reach(world, backend) as h:
        anonymous = ToolContext.for_host(h)
        handle = start_download(anonymous, args())
        assert handle.sizes_source == "listing"  # HEAD refused: the host might still have its own login
        status = wait(anonymous, handle)
        assert status.failure.cause is DownloadCause.GATED and "token" in status.failure.remedy

        not_granted = ToolContext.for_host(h, hub_token=SecretStr("hf_user_without_access"))
        status = wait(not_granted, start_download(not_granted, args()))
        assert status.failure.cause is DownloadCause.GATED

        ctx = ToolContext.for_host(h, hub_token=SecretStr(granted))
        handle = start_download(ctx, args())
        status = wait(ctx, handle)
        assert status.state is DownloadState.FINISHED, status
        assert granted not in handle.model_dump_json() + status.model_dump_json()
        assert granted not in h.read_file(handle.log_path).decode()


def test_missing_repo_is_refused_before_anything_runs():
    with start_world(faults=[MissingRepo(repo_id=SMALL_DRAFTER)], time_scale=FAST) as world, reach(world, "sim") as h:
        ctx = ToolContext.for_host(h)
        with pytest.raises(RepoNotFound, match=SMALL_DRAFTER):
            start_download(ctx, args())
        assert not Path(ctx.resolve("~/.specops/downloads")).exists()
        assert not Path(ctx.resolve("models/drafter")).exists()


def throttle_after_preflight(world, handle_files: int, requests: int) -> threading.Thread:
    """Throttle the Hub once the tool's own listing and HEADs are answered: the download's requests get the 429s."""
    seen = len(world.hub.emulator.requests)

    def inject() -> None:
        deadline = time.monotonic() + 20
        while len(world.hub.emulator.requests) < seen + 1 + handle_files and time.monotonic() < deadline:
            time.sleep(0.002)
        world.hub.emulator.faults.append(HubThrottle(requests=requests, retry_after_s=0))

    thread = threading.Thread(target=inject, daemon=True)
    thread.start()
    return thread


# hf itself retries a 429 five times, a second apart, on the tree listing (its first request that matters, after
# one optional lookup): 7 throttled requests fail the first attempt and leave the second one clean.
@pytest.mark.parametrize(
    ("throttled", "attempts", "state"), [(7, 2, DownloadState.FINISHED), (10_000, 1, DownloadState.FAILED)]
)
def test_429_is_retried_by_a_new_attempt_then_reported(throttled, attempts, state):
    with start_world(time_scale=FAST) as world, reach(world, "sim") as h:
        ctx = ToolContext.for_host(h)
        files = len(world.hub.emulator.fixtures[SMALL_DRAFTER].revision().files)
        injector = throttle_after_preflight(world, files, throttled)
        handle = start_download(ctx, args(max_attempts=attempts, retry_backoff_s=0.1))
        injector.join()
        status = wait(ctx, handle)
        assert status.state is state, status
        assert status.attempts_started == attempts and world.hub.emulator.throttled >= 6
        if state is DownloadState.FAILED:
            assert status.failure.cause is DownloadCause.THROTTLED and "429" in status.failure.what
        else:
            assert "transient failure: next attempt" in status.log_tail


def test_cut_download_is_resumed_and_a_hopeless_one_is_partial():
    # hf resumes a cut transfer itself (a few times, a second apart); past that the attempt fails and the next one
    # fetches what is still missing.
    with start_world(faults=[DownloadCut(times=1)], time_scale=FAST) as world, reach(world, "sim") as h:
        ctx = ToolContext.for_host(h)
        status = wait(ctx, start_download(ctx, args()))
        assert status.state is DownloadState.FINISHED and world.hub.emulator.cuts == 1
        assert "Trying to resume download" in status.log_tail
    with start_world(faults=[DownloadCut(times=10_000)], time_scale=FAST) as world, reach(world, "sim") as h:
        ctx = ToolContext.for_host(h)
        status = wait(ctx, start_download(ctx, args(max_attempts=1)))
        assert status.state is DownloadState.FAILED and status.failure.cause is DownloadCause.PARTIAL, status
        assert status.missing_files == ["model.safetensors"] and status.failure.details["files_missing"] == 1


@pytest.mark.slow
@pytest.mark.serial  # the small tmpfs is one for the whole run: no other test may fill it meanwhile
def test_full_real_filesystem_is_no_space_with_df_figures(small_fs):
    profile = load_profile("seed-ct200")
    data = MountSpec(mount_point="/data", device="/dev/sdb1", fstype="tmpfs", size_gib=1, used_gib=0)
    profile = profile.model_copy(update={"mounts": [*profile.mounts, data]})
    with start_world(profile, time_scale=FAST, mount_backing={"/data": small_fs}) as world, reach(world, "sim") as h:
        ctx = ToolContext.for_host(h)
        target = "/data/drafter"  # the host's path
        status = wait(ctx, start_download(ctx, StartDownloadArgs(repo_id=DRAFTER, target_dir=target)))
        assert status.state is DownloadState.FAILED and status.failure.cause is DownloadCause.NO_SPACE, status
        details = status.failure.details
        assert details["mount_point"] == "/data"
        assert details["avail_bytes"] < 4 * 1024 * 1024 and details["size_bytes"] <= 4 * 1024 * 1024
        assert "No space left on device" in status.failure.what or "Errno 28" in status.failure.what
