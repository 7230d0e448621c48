"""The host's record of what specops downloaded, so a later run may free its own earlier downloads.

A download that starts into a directory that did not exist adds a line to
`~/.cache/specops/downloads.jsonl` on the host (target, repo, commit, when).
list_freeable classes such a directory as safe to free when no running process
uses it: it is specops' own and can be downloaded again. A directory that held
anything before the download never enters the ledger, so nothing a person put
there is ever claimed. free_space removes the lines of what it deleted, and
reading the ledger drops (for good) the lines whose directory has vanished:
the lines name a path, and a directory made at that path later is not
specops' own.
"""

from __future__ import annotations

import json
import posixpath
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from ..context import ToolContext
from ..hosts import HostError, RemoteFileNotFound
from ..hosts.base import HELPER_TIMEOUT_S

LEDGER = ".cache/specops/downloads.jsonl"


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    target_dir: str
    repo_id: str
    sha: str | None
    started_at: str


def _path(ctx: ToolContext) -> str:
    return posixpath.join(ctx.home, LEDGER)


# Prints, NUL-terminated, those of its arguments that are directories.
_DIRECTORIES = 'for d; do [ -d "$d" ] && printf "%s\\0" "$d"; done; exit 0'


def read_ledger(ctx: ToolContext) -> dict[str, LedgerEntry]:
    """Directory -> its entry, for the directories that still exist; unreadable lines are skipped (the ledger
    is advice, never a reason to fail). The lines of vanished directories are removed from the host's ledger."""
    entries = _read(ctx)
    present = _directories(ctx, list(entries)) if entries else None
    if present is None:  # nothing recorded, or the host could not say: keep every line
        return entries
    live = {d: e for d, e in entries.items() if d in present}
    if len(live) < len(entries):
        try:
            _write(ctx, list(live.values()))
        except (OSError, HostError):  # they are left out of the answer all the same
            pass
    return live


def _directories(ctx: ToolContext, paths: list[str]) -> set[str] | None:
    """Those of `paths` that are directories on the host (one round trip); None when the host could not say."""
    try:
        done = ctx.host.run(["sh", "-c", _DIRECTORIES, "sh", *paths], timeout=HELPER_TIMEOUT_S, idempotent=True)
    except HostError:
        return None
    if not done.ok:
        return None
    return {p for p in done.stdout.split("\0") if p}


def _read(ctx: ToolContext) -> dict[str, LedgerEntry]:
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
    entries = _read(ctx)
    entries[target_dir] = LedgerEntry(
        target_dir=target_dir, repo_id=repo_id, sha=sha, started_at=datetime.now(UTC).isoformat(timespec="seconds")
    )
    _write(ctx, list(entries.values()))


def forget(ctx: ToolContext, target_dirs: list[str]) -> None:
    entries = _read(ctx)
    if any(d in entries for d in target_dirs):
        _write(ctx, [e for d, e in entries.items() if d not in target_dirs])
