"""list_freeable and free_space: the deletion rule's classes, the user's approvals, what sets free together (revisions
sharing blobs), a process using a directory, dry runs, real deletion, df deltas."""

import pytest
from pydantic import ValidationError

from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput
from specops.tools.space import (
    FreeSpaceArgs,
    ListFreeableArgs,
    UserApproval,
    approval_covers,
    free_space,
    freeable_view,
    list_freeable,
)

from .worlds import ctx, host, reach, start_world, world  # noqa: F401

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

QWEN = "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"


ALLOW_QWEN = UserApproval(spec=f"cache:{QWEN}", by="--allow-delete")


def test_seed_host_candidates(ctx, world):  # noqa: F811
    listing = list_freeable(ctx, ListFreeableArgs())
    cache = [i for i in listing.items if i.kind == "cache_revision"]
    assert {i.repo_id for i in cache} == {QWEN} and len(cache) == 2
    # Another model's cache, used or not, is someone's download: it needs the user's approval.
    assert all(i.safety == "needs_approval" and i.created_by == "other" and i.approved_by is None for i in cache)
    assert all(i.approve_with == f"cache:{QWEN}" and f"--allow-delete cache:{QWEN}" in i.reason for i in cache)
    [kimi] = [i for i in listing.items if i.kind == "directory"]
    assert kimi.path == "/root/models/Kimi-K2.6" and kimi.safety == "needs_approval"
    # Sizes are what df counts: on a sim host's virtual disk, 1024x what each file stores (du on the host says so).
    stored = sum(f.stat().st_size for f in world.state.layout.host_path(kimi.path).rglob("*") if f.is_file())
    assert stored * 1024 <= kimi.size_bytes <= stored * 1024 + 64 * 4096 and kimi.size_bytes > 500 * 1024**3
    # The two revisions share their blobs: each alone frees only its links; the repo set frees the lot, and the
    # totals are figured for the set too (the "1.5M per revision, 3.0M safe" while deleting both freed 221G).
    [repo] = [s for s in listing.sets if s.id == f"repo:{QWEN}"]
    assert sorted(repo.ids) == sorted(i.id for i in cache) and repo.frees_bytes > 200 * 1024**3
    assert all(i.size_bytes < repo.frees_bytes / 1000 for i in cache)
    assert repo.safety == "needs_approval" and not repo.approved and repo.approve_with == [f"cache:{QWEN}"]
    assert listing.safe_bytes == 0 and listing.needs_approval_bytes >= repo.frees_bytes + kimi.size_bytes
    assert repo.frees in listing.summary and any("together free" in n for n in listing.notes)
    # The model's view keeps what it decides on, sets included, under the cap.
    view = freeable_view(listing)
    assert view["sets"][0]["frees_together"] == repo.frees and view["items"][0]["approve_with"] == f"cache:{QWEN}"


def test_what_the_goal_needs_is_never_a_candidate(ctx):  # noqa: F811
    # The goal's target model (given by its path, as read_drafter_config and launch_server name it) and the
    # drafter's repo are never offered, even with the user's approval covering them: the goal needs them.
    needs = ["~/models/Kimi-K2.6", QWEN]
    listing = list_freeable(ctx, ListFreeableArgs(goal_needs=needs, user_approvals=[ALLOW_QWEN]))
    assert listing.items and all(i.safety == "never" and "the goal needs it" in i.reason for i in listing.items)
    assert listing.needs_approval_bytes == 0 and not listing.sets
    done = free_space(ctx, FreeSpaceArgs(ids=[i.id for i in listing.items], dry_run=False, goal_needs=needs))
    assert not done.deleted and {r.safety for r in done.refused} == {"never"}
    # A path beside the need is not covered by it.
    other = list_freeable(ctx, ListFreeableArgs(goal_needs=["/root/models/Kimi-K2"]))
    assert [i.path for i in other.items if i.kind == "directory" and i.safety == "needs_approval"] == [
        "/root/models/Kimi-K2.6"
    ]


def test_the_users_approval_covers_what_it_names_and_nothing_else(ctx):  # noqa: F811
    listing = list_freeable(ctx, ListFreeableArgs(user_approvals=[ALLOW_QWEN]))
    cache = [i for i in listing.items if i.kind == "cache_revision"]
    assert all(i.approved_by == f"--allow-delete cache:{QWEN}" and i.safety == "needs_approval" for i in cache)
    [repo] = [s for s in listing.sets if s.id.startswith("repo:")]
    assert repo.approved and repo.approve_with == []
    [kimi] = [i for i in listing.items if i.kind == "directory"]
    assert kimi.approved_by is None
    assert "may go now" in listing.summary
    # The forms of a spec: a repo, one revision (hash prefix or ref), a path above the cache; not another repo.
    one = cache[0]
    covers = {"path": one.path, "repo_id": one.repo_id, "revision": one.revision, "refs": one.refs}
    assert approval_covers(f"cache:{QWEN}@{one.revision[:8]}", ctx, **covers)
    assert not approval_covers(f"cache:{QWEN}@{one.revision[:4]}", ctx, **covers)  # too short to name a commit
    assert approval_covers("~/.cache/huggingface", ctx, **covers)
    assert approval_covers(f"cache:{QWEN}", ctx, path=one.path)  # the repo read from the cache folder's name
    assert not approval_covers("cache:Qwen/Qwen3-8B", ctx, **covers)
    assert not approval_covers("dir:~/models", ctx, **covers)


def test_dry_run_refuses_what_needs_approval_and_changes_nothing(ctx):  # noqa: F811
    ids = [i.id for i in list_freeable(ctx, ListFreeableArgs()).items]
    unapproved = free_space(ctx, FreeSpaceArgs(ids=ids))
    assert unapproved.deleted == [] and [r.safety for r in unapproved.refused] == ["needs_approval"] * 3
    assert all("--allow-delete" in r.reason for r in unapproved.refused)
    result = free_space(ctx, FreeSpaceArgs(ids=ids, user_approvals=[ALLOW_QWEN]))
    # On failure, say which processes the listing took for users of what: every world shares this machine's process
    # table, and a sim host counts as its own those that name paths in its root.
    users = {i.id: i.used_by for i in list_freeable(ctx, ListFreeableArgs()).items if i.used_by}
    pids = ",".join(str(pid) for used in users.values() for pid in used) or "1"
    assert result.dry_run and len(result.deleted) == 2 and [r.safety for r in result.refused] == ["needs_approval"], (
        result.refused,
        users,
        ctx.host.run(["ps", "-o", "pid,args", "-p", pids], timeout=10).stdout,
    )
    assert all(i.approved_by == f"--allow-delete cache:{QWEN}" for i in result.deleted)
    # Both revisions together free the shared blobs too: far more than each alone.
    assert result.expected_freed_bytes > 200 * 1024**3
    [mount] = result.mounts
    assert not mount.measured and mount.free_after_bytes == mount.free_before_bytes + result.expected_freed_bytes
    assert all(ctx.host.exists(i.path) for i in result.deleted)  # a dry run deletes nothing
    assert f"on the user's approval: --allow-delete cache:{QWEN}" in result.summary
    # A set's id stands for its items: the same two revisions, the same figure.
    by_set = free_space(ctx, FreeSpaceArgs(ids=[f"repo:{QWEN}"], user_approvals=[ALLOW_QWEN]))
    assert sorted(i.id for i in by_set.deleted) == sorted(i.id for i in result.deleted)
    assert by_set.expected_freed_bytes == result.expected_freed_bytes


@pytest.mark.timeout(60)
def test_in_use_is_never_freed_and_deletion_is_measured():
    with start_world() as w, reach(w, "sim") as h:
        c = ToolContext.for_host(h)
        # Any process working inside the directory uses it. It sleeps on the host's clock, which runs 50x this
        # machine's: a finite sleep could end between the listing and the deletion on a busy machine (and then the
        # directory is rightly no longer in use), so it sleeps until stopped.
        holder = h.start_detached(["sleep", "infinity"], log_path="logs/holder.log", cwd="models/Kimi-K2.6")
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
        # Without the user's approval another model's cache stays, whatever a caller asks.
        refused = free_space(c, FreeSpaceArgs(ids=cache_ids, dry_run=False))
        assert refused.deleted == [] and len(refused.refused) == 2
        [repo] = [s for s in listing.sets if s.id.startswith("repo:")]
        done = free_space(c, FreeSpaceArgs(ids=repo.ids, dry_run=False, user_approvals=[ALLOW_QWEN]))
        [mount] = done.mounts
        assert all(i.approved_by for i in done.deleted) and len(done.deleted) == 2
        # df's delta also counts the repo's refs and folders, which the expected figure leaves out; the listing's
        # figure for the set is what deleting it freed.
        assert mount.measured and 0 <= mount.freed_bytes - done.expected_freed_bytes < 1024**2
        assert 0 <= mount.freed_bytes - repo.frees_bytes < 1024**2
        assert not any(i.kind == "cache_revision" for i in list_freeable(c, ListFreeableArgs()).items)

        # A directory this run created is safe; one approved by the user may go too.
        (w.layout.home / "models" / "scratch").mkdir()
        (w.layout.home / "models" / "scratch" / "config.json").write_text("{}")
        made = next(
            i
            for i in list_freeable(c, ListFreeableArgs(created_paths=["models/scratch"])).items
            if i.path.endswith("scratch")
        )
        assert made.safety == "safe" and made.created_by_run and made.created_by == "this_run"
        gone = free_space(c, FreeSpaceArgs(ids=[made.id], created_paths=["models/scratch"], dry_run=False))
        assert gone.deleted and not (w.layout.home / "models" / "scratch").exists()
        assert gone.deleted[0].approved_by is None  # specops' own: no approval needed


def test_bad_input_is_refused(ctx):  # noqa: F811
    with pytest.raises(ValidationError):
        FreeSpaceArgs(ids=[])
    with pytest.raises(ValidationError):
        FreeSpaceArgs(ids=["dir:/x"], approved_paths=["/data/$(rm -rf ~)"])
    with pytest.raises(InvalidToolInput):
        free_space(ctx, FreeSpaceArgs(ids=["dir:/etc"]))
