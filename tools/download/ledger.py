"""The host's record of what specops downloaded, so a later run may free its own earlier downloads.

A download that starts into a directory that did not exist adds a line to
`~/.cache/specops/downloads.jsonl` on the host (target, repo, commit, when).
list_freeable classes such a directory as safe to free when no running process
uses it: it is specops' own and can be downloaded again. A directory that held
anything before the download never enters the ledger, so nothing a person put
there is ever claimed. free_space removes the lines of what it deleted.
"""

from __future__ import annotations

import json
import posixpath
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from ..context import ToolContext
from ..hosts import RemoteFileNotFound

LEDGER = ".cache/specops/downloads.jsonl"


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    target_dir: str
    repo_id: str
    sha: str | None
    started_at: str


def _path(ctx: ToolContext) -> str:
    return posixpath.join(ctx.home, LEDGER)


def read_ledger(ctx: ToolContext) -> dict[str, LedgerEntry]:
    """Directory -> its entry; unreadable lines are skipped (the ledger is advice, never a reason to fail)."""
    try:
        text = ctx.host.read_file(_path(ctx)).decode("utf-8", errors="replace")
    except RemoteFileNotFound:
        return {}
    entries = {}
    for line in text.splitlines():
        try:
            entry = LedgerEntry.model_validate(json.loads(line))
        except (ValueError, ValidationError):
            continue
        entries[entry.target_dir] = entry
    return entries


def _write(ctx: ToolContext, entries: list[LedgerEntry]) -> None:
    text = "".join(entry.model_dump_json() + "\n" for entry in entries)
    ctx.host.write_file(_path(ctx), text.encode("utf-8"), mode=0o600)


def record_download(ctx: ToolContext, target_dir: str, repo_id: str, sha: str | None) -> None:
    entries = read_ledger(ctx)
    entries[target_dir] = LedgerEntry(target_dir=target_dir, repo_id=repo_id, sha=sha,
                                      started_at=datetime.now(UTC).isoformat(timespec="seconds"))  # fmt: skip
    _write(ctx, list(entries.values()))


def forget(ctx: ToolContext, target_dirs: list[str]) -> None:
    entries = read_ledger(ctx)
    if any(d in entries for d in target_dirs):
        _write(ctx, [e for d, e in entries.items() if d not in target_dirs])
