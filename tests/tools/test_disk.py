"""check_disk on sim: and ssh:// (seed-ct200: / at 98%), with a full disk, a partial download, and bad input; when it
does not fit, every other mount is an alternative with its terms (a tmpfs named RAM-backed and volatile, one outside
the allowed roots with the flag that allows it) or set aside with the reason (too small, a system filesystem)."""

import pytest
from pydantic import ValidationError

from specops.sim.faults import FullDisk
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import MountSpec
from specops.tools.context import ToolContext
from specops.tools.disk import CheckDiskArgs, check_disk, disk_view
from specops.tools.errors import PathOutsideAllowedRoots

from .worlds import ctx, host, reach, start_world, world  # noqa: F401

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
GIB = 1024**3


@pytest.mark.timeout(60)
def test_drafter_fits_on_the_seed_host(ctx, world):  # noqa: F811
    result = check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="models/Kimi-K2.6-DFlash"))
    assert result.verdict == "fits" and result.present_bytes == 0
    assert result.download_bytes > 8_000_000_000  # the two shards the Hub declares, 4.97 GB + 3.24 GB
    assert result.margin_bytes == 2 * GIB  # 5% of 8 GB is less than the 2 GiB floor
    assert result.needed_bytes == result.download_bytes + result.margin_bytes
    assert result.mount.mount_point == "/" and result.free_bytes == result.mount.free_bytes
    assert result.measured_path == "/root/models"


def test_the_target_already_on_disk_needs_nothing(ctx):  # noqa: F811
    result = check_disk(ctx, CheckDiskArgs(repo_id="moonshotai/Kimi-K2.6", target="models/Kimi-K2.6"))
    assert result.verdict == "fits" and result.remaining_bytes == 0 and result.present_files == result.files
    # What is there counts as the disk counts it, and nothing says the host is simulated.
    assert result.present_bytes == result.download_bytes and not any("simulated" in n for n in result.notes)


def test_include_selects_files(ctx):  # noqa: F811
    result = check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="models/d2", include=["*.json"]))
    assert 0 < result.download_bytes < 1_000_000


@pytest.mark.timeout(60)
def test_full_disk_does_not_fit_and_names_the_other_mount():
    with start_world("h200x8-nvlink", faults=[FullDisk(mount_point="/", free_gib=3)]) as w, reach(w, "sim") as h:
        c = ToolContext.for_host(h)
        result = check_disk(c, CheckDiskArgs(repo_id=DRAFTER, target="models/Kimi-K2.6-DFlash"))
        assert result.verdict == "does_not_fit" and result.shortfall_bytes == result.needed_bytes - result.free_bytes
        assert result.free_bytes <= 3 * GIB
        [alternative] = [a for a in result.alternatives if a.allowed]
        assert alternative.mount.mount_point == "/data" and not alternative.ram_backed
        assert alternative.target == "/data/models/Kimi-K2.6-DFlash"
        # /dev/shm has room too, but it is RAM and outside the roots: offered with both said, never as allowed.
        [shm] = [a for a in result.alternatives if not a.allowed]
        assert shm.mount.mount_point == "/dev/shm" and shm.ram_backed
        assert "RAM-backed and volatile" in shm.why and "--allow-root /dev/shm" in shm.why
        assert "room on" in result.summary and "tmpfs: RAM-backed, volatile" in result.summary
        # A partial download in the target counts as present.
        target = w.layout.home / "models" / "partial"
        (target / ".cache/huggingface/download").mkdir(parents=True)
        (target / ".cache/huggingface/download/abc.etag.incomplete").write_bytes(b"x" * 1_000_000)
        (target / "config.json").write_bytes(b"{}")
        partial = check_disk(c, CheckDiskArgs(repo_id=DRAFTER, target="models/partial"))
        assert partial.partial_bytes == 1_000_000 * 1024 and partial.present_files == 1
        assert partial.remaining_bytes < result.remaining_bytes - 1_000_000_000


def test_bad_input_is_refused_before_anything_runs(ctx):  # noqa: F811
    for bad in (
        {"repo_id": "a/b;rm -rf /", "target": "models/x"},
        {"repo_id": DRAFTER, "target": "models/$(id)"},
        {"repo_id": DRAFTER, "target": "models/x", "include": ["*.json; ls"]},
        {"repo_id": DRAFTER, "target": "models/x", "margin_fraction": -1},
    ):
        with pytest.raises(ValidationError):
            CheckDiskArgs(**bad)
    with pytest.raises(PathOutsideAllowedRoots):
        check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="/etc/models"))


@pytest.mark.timeout(60)
def test_no_alternative_says_why_for_each_mount():
    """The issue's case: `alternatives: []` with no reason. Both data mounts too full: each is set aside as too
    small; /dev/shm, with room, is offered only as what it is (RAM, outside the roots, how to allow it)."""
    faults = [FullDisk(mount_point="/", free_gib=1), FullDisk(mount_point="/data", free_gib=1)]
    profile = load_profile("h200x8-nvlink")
    boot = MountSpec(mount_point="/boot", device="/dev/nvme0n1p1", fstype="ext4", size_gib=100, used_gib=1)
    profile = profile.model_copy(update={"mounts": [*profile.mounts, boot]})
    with start_world(profile, faults=faults) as w, reach(w, "sim") as h:
        c = ToolContext.for_host(h)
        result = check_disk(c, CheckDiskArgs(repo_id=DRAFTER, target="models/Kimi-K2.6-DFlash"))
        assert result.verdict == "does_not_fit" and not [a for a in result.alternatives if a.allowed]
        [data] = [m for m in result.set_aside if m.mount_point == "/data"]
        assert data.reason == "too_small" and "needs" in data.why
        # /boot has room, but it is the system's: set aside as such, whatever its free space.
        [system] = [m for m in result.set_aside if m.mount_point == "/boot"]
        assert system.reason == "system" and "not a place for models" in system.why
        assert f"set aside: {data.mount_point}: {data.why}" in result.summary and "/boot" not in result.summary
        assert disk_view(result)["system_mounts_set_aside"] == [system.mount_point]
        [shm] = result.alternatives
        assert shm.ram_backed and not shm.allowed and shm.target is None
        # With /dev/shm among the allowed roots it is a place to write, still named RAM-backed.
        shm_root = "/dev/shm"
        wider = ToolContext(host=h, home=c.home, allowed_roots=(*c.allowed_roots, shm_root))
        again = check_disk(wider, CheckDiskArgs(repo_id=DRAFTER, target="models/Kimi-K2.6-DFlash"))
        [shm] = again.alternatives
        assert shm.allowed and shm.ram_backed and shm.target == f"{shm_root}/models/Kimi-K2.6-DFlash"
        assert "--allow-root" not in shm.why and "RAM-backed" in shm.why


@pytest.mark.serial  # the small tmpfs is one for the whole run
@pytest.mark.timeout(60)
def test_a_real_small_tmpfs_is_set_aside_as_too_small_and_named_ram(small_fs):
    """A mount backed by a real 4 MiB tmpfs: df's own figures say it is too small, and that it is RAM."""
    profile = load_profile("seed-ct200")
    data = MountSpec(mount_point="/scratch", device="tmpfs", fstype="tmpfs", size_gib=1, used_gib=0)
    profile = profile.model_copy(update={"mounts": [*profile.mounts, data]})
    with (
        start_world(profile, faults=[FullDisk(mount_point="/", free_gib=1)], mount_backing={"/scratch": small_fs}) as w,
        reach(w, "sim") as h,
    ):
        c = ToolContext.for_host(h)
        result = check_disk(c, CheckDiskArgs(repo_id=DRAFTER, target="models/Kimi-K2.6-DFlash"))
        [scratch] = [m for m in result.set_aside if m.mount_point == "/scratch"]
        assert scratch.reason == "too_small" and scratch.free.endswith(("K", "M"))
        assert "RAM-backed and volatile" in scratch.why
        assert "no other mount has room" not in result.summary  # /dev/shm has room: it is offered, as RAM
        assert "set aside: " in result.summary and "too small" in result.summary
