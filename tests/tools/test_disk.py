"""check_disk on sim: and ssh:// (seed-ct200: / at 98%), with a full disk, a partial download, and bad input."""

import pytest
from pydantic import ValidationError

from specops.sim.faults import FullDisk
from specops.tools.context import ToolContext
from specops.tools.disk import CheckDiskArgs, check_disk
from specops.tools.errors import PathOutsideAllowedRoots

from .worlds import ctx, host, reach, start_world, world  # noqa: F401

DRAFTER = "SubSir/Kimi-K2.6-DFlash-tmp-long"
GIB = 1024**3


@pytest.mark.timeout(60)
def test_drafter_fits_on_the_seed_host(ctx, world):  # noqa: F811
    result = check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="models/Kimi-K2.6-DFlash"))
    assert result.verdict == "fits" and result.present_bytes == 0
    assert result.download_bytes > 8_000_000_000  # the two shards the Hub declares, 4.97 GB + 3.24 GB
    assert result.margin_bytes == 2 * GIB  # 5% of 8 GB is less than the 2 GiB floor
    assert result.needed_bytes == result.download_bytes + result.margin_bytes
    assert result.mount.mount_point == str(world.layout.root) and result.free_bytes == result.mount.free_bytes
    assert result.measured_path == str(world.layout.home / "models")


def test_the_target_already_on_disk_needs_nothing(ctx):  # noqa: F811
    result = check_disk(ctx, CheckDiskArgs(repo_id="moonshotai/Kimi-K2.6", target="models/Kimi-K2.6"))
    assert result.verdict == "fits" and result.remaining_bytes == 0 and result.present_files == result.files
    assert result.present_bytes == result.download_bytes and any("1/1024" in n for n in result.notes)


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
        [alternative] = result.alternatives
        assert alternative.mount.mount_point == str(w.layout.root / "data") and alternative.allowed
        # A partial download in the target counts as present.
        target = w.layout.home / "models" / "partial"
        (target / ".cache/huggingface/download").mkdir(parents=True)
        (target / ".cache/huggingface/download/abc.etag.incomplete").write_bytes(b"x" * 1_000_000)
        (target / "config.json").write_bytes(b"{}")
        partial = check_disk(c, CheckDiskArgs(repo_id=DRAFTER, target="models/partial"))
        assert partial.partial_bytes == 1_000_000 * 1024 and partial.present_files == 1
        assert partial.remaining_bytes < result.remaining_bytes - 1_000_000_000


def test_bad_input_is_refused_before_anything_runs(ctx):  # noqa: F811
    for bad in ({"repo_id": "a/b;rm -rf /", "target": "models/x"}, {"repo_id": DRAFTER, "target": "models/$(id)"},
                {"repo_id": DRAFTER, "target": "models/x", "include": ["*.json; ls"]},
                {"repo_id": DRAFTER, "target": "models/x", "margin_fraction": -1}):
        with pytest.raises(ValidationError):
            CheckDiskArgs(**bad)
    with pytest.raises(PathOutsideAllowedRoots):
        check_disk(ctx, CheckDiskArgs(repo_id=DRAFTER, target="/etc/models"))
