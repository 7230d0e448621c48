"""specops' own earlier downloads: recorded on the host when a download creates its directory, safe to free later."""

from __future__ import annotations

import json
import shutil

import pytest

from specops.tools.context import ToolContext
from specops.tools.download import start_download, wait_download
from specops.tools.download.ledger import LEDGER, read_ledger
from specops.tools.download.models import DownloadState, StartDownloadArgs, WaitDownloadArgs
from specops.tools.space import FreeSpaceArgs, ListFreeableArgs, free_space, list_freeable

from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(90), pytest.mark.slow]
SMALL_DRAFTER = "z-lab/Qwen3-8B-DFlash-b16"


def _download(ctx: ToolContext, target: str) -> str:
    handle = start_download(ctx, StartDownloadArgs(repo_id=SMALL_DRAFTER, target_dir=target))
    status = wait_download(ctx, WaitDownloadArgs(download=handle.id, timeout_s=60, poll_s=0.1)).status
    assert status.state is DownloadState.FINISHED, status.log_tail
    return handle.target_dir


def test_a_later_run_may_free_an_earlier_download_but_not_a_directory_it_only_filled():
    with start_world() as world, reach(world, "sim") as host:
        first_run = ToolContext.for_host(host)
        ours = _download(first_run, "models/earlier-drafter")
        (world.layout.home / "models" / "theirs").mkdir()
        (world.layout.home / "models" / "theirs" / "notes.txt").write_text("a person's directory")
        theirs = _download(first_run, "models/theirs")  # existed before: never claimed
        ledger = read_ledger(first_run)
        assert set(ledger) == {ours} and ledger[ours].repo_id == SMALL_DRAFTER and ledger[ours].sha
        assert json.loads(host.read_file(LEDGER).decode().splitlines()[0])["target_dir"] == ours

        later_run = ToolContext.for_host(host)  # a new run: created_paths empty
        items = {i.path: i for i in list_freeable(later_run, ListFreeableArgs()).items if i.kind == "directory"}
        assert items[ours].safety == "safe" and "earlier download" in items[ours].reason
        assert items[theirs].safety == "needs_approval"
        done = free_space(later_run, FreeSpaceArgs(ids=[items[ours].id, items[theirs].id], dry_run=False))
        assert [i.path for i in done.deleted] == [ours] and [r.id for r in done.refused] == [items[theirs].id]
        assert not (world.layout.home / "models" / "earlier-drafter").exists()
        assert (world.layout.home / "models" / "theirs" / "notes.txt").exists()
        assert read_ledger(later_run) == {}


def test_a_ledger_line_that_is_not_json_is_skipped():
    with start_world() as world, reach(world, "sim") as host:
        ctx = ToolContext.for_host(host)
        path = world.layout.home / LEDGER
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"target_dir": ctx.home, "repo_id": "a/b", "sha": None, "started_at": "t"}  # a directory that exists
        path.write_text(f"not json\n{json.dumps(entry)}\n")
        assert list(read_ledger(ctx)) == [ctx.home]


def test_a_vanished_directory_leaves_the_ledger_and_one_made_later_at_its_path_is_not_claimed():
    with start_world() as world, reach(world, "sim") as host:
        ctx = ToolContext.for_host(host)
        ours = _download(ctx, "models/earlier-drafter")
        kept = _download(ctx, "models/kept-drafter")
        shutil.rmtree(world.layout.home / "models" / "earlier-drafter")  # a person removed it
        assert set(read_ledger(ctx)) == {kept}
        assert [json.loads(line)["target_dir"] for line in host.read_file(LEDGER).decode().splitlines()] == [kept]
        (world.layout.home / "models" / "earlier-drafter").mkdir()  # and later made their own there
        (world.layout.home / "models" / "earlier-drafter" / "config.json").write_text("{}")
        items = {i.path: i for i in list_freeable(ctx, ListFreeableArgs()).items if i.kind == "directory"}
        assert items[ours].safety == "needs_approval" and items[kept].safety == "safe"
