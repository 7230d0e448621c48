"""list_freeable and free_space: safety classes, a process using a directory, dry runs, real deletion, df deltas."""

import pytest
from pydantic import ValidationError

from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput
from specops.tools.space import FreeSpaceArgs, ListFreeableArgs, free_space, list_freeable

from .worlds import ctx, host, reach, start_world, world  # noqa: F401

QWEN = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"


def test_seed_host_candidates(ctx, world):  # noqa: F811
    listing = list_freeable(ctx, ListFreeableArgs())
    cache = [i for i in listing.items if i.kind == "cache_revision"]
    assert {i.repo_id for i in cache} == {QWEN} and len(cache) == 2
    assert all(i.safety == "safe" for i in cache)
    [kimi] = [i for i in listing.items if i.kind == "directory"]
    assert kimi.path == str(world.layout.home / "models" / "Kimi-K2.6") and kimi.safety == "needs_approval"
    # Sizes are what df counts: 1024x what is stored on a sim host.
    assert kimi.size_bytes == kimi.measured_bytes * 1024 and kimi.size_bytes > 500 * 1024**3
    assert any("together free" in n for n in listing.notes)


def test_dry_run_refuses_what_needs_approval_and_changes_nothing(ctx):  # noqa: F811
    ids = [i.id for i in list_freeable(ctx, ListFreeableArgs()).items]
    result = free_space(ctx, FreeSpaceArgs(ids=ids))
    assert result.dry_run and len(result.deleted) == 2 and [r.safety for r in result.refused] == ["needs_approval"]
    # Both revisions together free the shared blobs too: far more than each alone.
    assert result.expected_freed_bytes > 200 * 1024**3
    [mount] = result.mounts
    assert not mount.measured and mount.free_after_bytes == mount.free_before_bytes + result.expected_freed_bytes
    assert all(ctx.host.exists(i.path) for i in result.deleted)  # a dry run deletes nothing


@pytest.mark.timeout(60)
def test_in_use_is_never_freed_and_deletion_is_measured():
    with start_world() as w, reach(w, "sim") as h:
        c = ToolContext.for_host(h)
        # Any process working inside the directory uses it.
        holder = h.start_detached(["sleep", "60"], log_path="logs/holder.log", cwd="models/Kimi-K2.6")
        try:
            listing = list_freeable(c, ListFreeableArgs())
            kimi = next(i for i in listing.items if i.kind == "directory")
            # The holder uses it; on a loaded machine the shell that started it may still be exiting there too.
            assert kimi.safety == "never" and holder.pid in kimi.used_by
            approved = free_space(c, FreeSpaceArgs(ids=[kimi.id], approved_paths=[kimi.path], dry_run=False))
            assert approved.deleted == [] and approved.refused[0].safety == "never"
            assert (w.layout.home / "models" / "Kimi-K2.6" / "config.json").exists()
        finally:
            h.stop(holder)

        cache_ids = [i.id for i in listing.items if i.kind == "cache_revision"]
        done = free_space(c, FreeSpaceArgs(ids=cache_ids, dry_run=False))
        [mount] = done.mounts
        # df's delta also counts the repo's refs and folders, which the expected figure leaves out.
        assert mount.measured and 0 <= mount.freed_bytes - done.expected_freed_bytes < 1024**2
        assert not any(i.kind == "cache_revision" for i in list_freeable(c, ListFreeableArgs()).items)

        # A directory this run created is safe; one approved by the user may go too.
        (w.layout.home / "models" / "scratch").mkdir()
        (w.layout.home / "models" / "scratch" / "config.json").write_text("{}")
        made = next(i for i in list_freeable(c, ListFreeableArgs(created_paths=["models/scratch"])).items
                    if i.path.endswith("scratch"))
        assert made.safety == "safe" and made.created_by_run
        gone = free_space(c, FreeSpaceArgs(ids=[made.id], created_paths=["models/scratch"], dry_run=False))
        assert gone.deleted and not (w.layout.home / "models" / "scratch").exists()


def test_bad_input_is_refused(ctx):  # noqa: F811
    with pytest.raises(ValidationError):
        FreeSpaceArgs(ids=[])
    with pytest.raises(ValidationError):
        FreeSpaceArgs(ids=["dir:/x"], approved_paths=["/data/$(rm -rf ~)"])
    with pytest.raises(InvalidToolInput):
        free_space(ctx, FreeSpaceArgs(ids=["dir:/etc"]))
