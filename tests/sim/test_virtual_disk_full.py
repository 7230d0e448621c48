"""A virtual mount fills up for real: a download past its modelled free space fails with ENOSPC.

The seed host's `/` with the full_disk fault has 3 GB free; the drafter is 7.6 GB.
`df` already said so; the write guard makes the download itself fail as it would
on the real host (hf and the library alike), while one that fits goes through.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from specops.sim.faults import FullDisk
from specops.sim.host.build import build_host
from specops.sim.profiles import load_profile

from .test_host_hub import DRAFTER, files_under, fixtures, hub, sh  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]


@pytest.fixture
def full_world(tmp_path, fixtures, hub):  # noqa: F811
    return build_host(
        tmp_path / "host",
        load_profile("seed-ct200"),
        faults=[FullDisk(free_gib=3.0)],
        hub_url=hub.url,
        fixtures=fixtures,
    )


def _avail(world, path: Path) -> int:
    return int(sh(world, "df", "-B1", "--output=avail", str(path)).stdout.splitlines()[1])


def test_hf_download_into_a_full_virtual_mount_fails_with_enospc(full_world):
    target = Path(full_world.root) / "root" / "models" / "dflash"
    before = _avail(full_world, target.parent)
    assert before < 3.5e9
    result = sh(full_world, "hf", "download", DRAFTER, "--local-dir", str(target))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "No space left on device" in output, output[-2000:]
    # The refused download left no more than was free: what it wrote counts (df's figure stops at 0, so the
    # files themselves are summed), and the space did not grow back past what it was.
    left = sum(p.stat().st_size for p in files_under(target)) * full_world.byte_scale
    assert left <= before, f"{left} bytes written into {before} free"
    assert _avail(full_world, target.parent) <= before


def test_the_library_on_the_host_fails_the_same_way(full_world):
    target = Path(full_world.root) / "root" / "models" / "dflash"
    script = textwrap.dedent(f"""
        from huggingface_hub import snapshot_download
        snapshot_download({DRAFTER!r}, local_dir={str(target)!r})
    """)
    result = sh(full_world, "python3", "-c", script)
    assert result.returncode != 0 and "No space left on device" in result.stderr, result.stderr[-2000:]


def test_what_fits_is_written_and_counted(full_world):
    small = Path(full_world.root) / "root" / "notes.txt"
    before = _avail(full_world, small.parent)
    script = f"open({str(small)!r}, 'w').write('x' * 100_000)"
    assert sh(full_world, "python3", "-c", script).returncode == 0
    assert small.stat().st_size == 100_000
    assert before - _avail(full_world, small.parent) == pytest.approx(100_000 * 1024, rel=0.01)


def test_a_write_outside_the_host_tree_is_not_guarded(full_world, tmp_path):
    outside = tmp_path / "outside.bin"
    script = f"open({str(outside)!r}, 'wb').write(b'x' * 8_000_000)"
    result = sh(full_world, "python3", "-c", script)
    assert result.returncode == 0, result.stderr
    assert outside.stat().st_size == 8_000_000


def test_the_simulators_own_files_are_never_refused(full_world):
    state = Path(full_world.root) / ".sim" / "scratch.bin"
    result = sh(full_world, "python3", "-c", f"open({str(state)!r}, 'wb').write(b'x' * 8_000_000)")
    assert result.returncode == 0, result.stderr
