"""The sim host's `hf` against the real Hub emulator: downloads, a real ENOSPC, and broken CLIs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.sim.faults import BrokenCli
from specops.sim.host.build import build_host
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.hub.runner import HubEmulatorThread
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import MountSpec

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


@pytest.fixture(scope="module")
def hub(fixtures) -> Iterator[HubEmulatorThread]:
    with HubEmulatorThread(fixtures, byte_scale=1024, time_scale=10_000) as running:
        yield running


def sh(world, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), env=world.env, cwd=world.env["HOME"], capture_output=True, text=True, timeout=timeout
    )


def files_under(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()] if path.exists() else []


@pytest.mark.slow
@pytest.mark.serial  # the small tmpfs is one for the whole run: no other test may fill it meanwhile
def test_download_into_a_full_real_filesystem_fails_with_enospc(tmp_path, fixtures, hub, small_fs):
    profile = load_profile("seed-ct200")
    data = MountSpec(mount_point="/data", device="/dev/sdb1", fstype="tmpfs", size_gib=1, used_gib=0)
    profile = profile.model_copy(update={"mounts": [*profile.mounts, data]})
    world = build_host(
        tmp_path / "host", profile, faults=[], hub_url=hub.url, fixtures=fixtures, mount_backing={"/data": small_fs}
    )
    assert [m.kind for m in world.mounts if m.mount_point == "/data"] == ["real"]
    target = Path(world.root) / "data" / "drafter"
    result = sh(world, "hf", "download", DRAFTER, "--local-dir", str(target))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "No space left on device" in output and ("Errno 28" in output or "ENOSPC" in output), output[-2000:]
    df = sh(world, "df", "-B1", "--output=avail,pcent,target", str(Path(world.root) / "data")).stdout.splitlines()
    avail, pcent, mounted_on = df[1].split()
    assert mounted_on == str(Path(world.root) / "data")
    # df reports the real filesystem's own figures: whatever the failed download left behind
    # (huggingface_hub deletes a file that failed part-way, so how much stays depends on which
    # of the parallel transfers finished first).
    st = os.statvfs(small_fs)
    assert int(avail) == st.f_bavail * st.f_frsize
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    assert int(pcent.rstrip("%")) == -(-100 * used // (used + st.f_bavail * st.f_frsize))  # GNU df rounds up


def test_download_into_a_virtual_mount_grows_df_by_the_modelled_size(tmp_path, fixtures, hub):
    world = build_host(tmp_path / "host", load_profile("h200x8-nvlink"), faults=[], hub_url=hub.url, fixtures=fixtures)
    data = Path(world.root) / "data"

    def used() -> int:
        return int(sh(world, "df", "-B1", "--output=used", str(data)).stdout.splitlines()[1])

    before = used()
    result = sh(world, "hf", "download", DRAFTER, "--local-dir", str(data / "drafter"))
    assert result.returncode == 0, result.stderr[-2000:]
    main = fixtures[DRAFTER].revision()
    for f in main.files:
        assert (data / "drafter" / f.path).stat().st_size == f.stored_size(world.byte_scale)
    grown = used() - before
    modelled = sum(f.stored_size(world.byte_scale) for f in main.files) * world.byte_scale
    # hf also leaves small metadata files under .cache/ in the local dir; they count too.
    assert modelled <= grown < modelled + 1024 * 1024 * world.byte_scale
    assert main.total_size() * 0.999 < grown


def test_broken_cli_prints_help_and_downloads_nothing(tmp_path, fixtures, hub):
    world = build_host(
        tmp_path / "host", load_profile("seed-ct200"), faults=[BrokenCli()], hub_url=hub.url, fixtures=fixtures
    )
    target = Path(world.root) / "root" / "drafter"
    result = sh(world, "hf", "download", DRAFTER, "--local-dir", str(target))
    assert result.returncode == 0
    real_help = subprocess.run(
        [world.real_hf, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HF_HUB_DISABLE_UPDATE_CHECK": "1"},
    )
    assert result.stdout == real_help.stdout and "Usage: hf" in result.stdout
    assert files_under(target) == []


def test_huggingface_cli_on_hub_1x_downloads_nothing(tmp_path, fixtures, hub):
    world = build_host(tmp_path / "host", load_profile("seed-ct200"), faults=[], hub_url=hub.url, fixtures=fixtures)
    target = Path(world.root) / "root" / "drafter"
    result = sh(world, "huggingface-cli", "download", DRAFTER, "--local-dir", str(target))
    assert result.returncode == 1
    assert "no longer works. Use `hf` instead." in result.stderr
    assert files_under(target) == []


def test_huggingface_cli_on_hub_0x_warns_and_still_downloads(tmp_path, fixtures, hub):
    profile = load_profile("seed-ct200")
    profile = profile.model_copy(update={"software": profile.software.model_copy(update={"huggingface_hub": "0.35.3"})})
    world = build_host(tmp_path / "host", profile, faults=[], hub_url=hub.url, fixtures=fixtures)
    target = Path(world.root) / "root" / "drafter"
    result = sh(world, "huggingface-cli", "download", DRAFTER, "config.json", "--local-dir", str(target))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Warning: 'huggingface-cli download' is deprecated. Use 'hf download' instead." in result.stderr
    assert (target / "config.json").read_bytes() == fixtures[DRAFTER].revision().file("config.json").content
