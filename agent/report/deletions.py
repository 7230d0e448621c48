"""What the run deleted on the host: each free_space that deleted, its items, on whose approval, what it freed.

Read from free_space's own results (dry runs left out): every deleted item
with who created it (this run, an earlier specops run by its ledger, or
someone else) and, for what specops did not create, the user's approval that
allowed it (--allow-delete, or a yes in the --ask-once round); and what df
measured freed on each mount.
"""

from __future__ import annotations

from pydantic import ValidationError

from specops.tools.disk import human_bytes
from specops.tools.space import FreeSpaceResult

from .evidence import Evidence
from .schema import DeletedItem, Deletion

_OWNERS = {
    "this_run": "created by this run",
    "specops": "specops' own earlier download",
    "other": "someone else's, not specops'",
}


def list_deletions(evidence: Evidence) -> list[Deletion]:
    out = []
    for x in evidence.exchanges:
        if x.tool != "free_space" or not x.ok or x.args.get("dry_run", True) is not False:
            continue
        try:
            result = FreeSpaceResult.model_validate(x.result)
        except ValidationError:
            continue
        if result.dry_run or not result.deleted:
            continue
        freed = sum(m.freed_bytes for m in result.mounts)
        out.append(
            Deletion(
                items=[
                    DeletedItem(
                        id=i.id,
                        path=i.path,
                        size_alone_bytes=i.size_bytes,
                        created_by=_OWNERS[i.created_by],
                        approved_by=i.approved_by,
                    )
                    for i in result.deleted
                ],
                freed_bytes=freed,
                freed=human_bytes(freed),
                mounts=[f"{m.mount_point}: {m.free_before} -> {m.free_after} free" for m in result.mounts],
                approved_by=sorted({i.approved_by for i in result.deleted if i.approved_by}),
            )
        )
    return out


def describe(deletion: Deletion) -> str:
    """One line: what went, on whose approval, what it freed."""
    repos = {i.id.removeprefix("cache:").partition("@")[0] for i in deletion.items if i.id.startswith("cache:")}
    if len(repos) == 1 and all(i.id.startswith("cache:") for i in deletion.items):
        what = f"{len(deletion.items)} revision(s) of the Hugging Face cache of {repos.pop()}"
    else:
        what = deletion.items[0].path + (f" and {len(deletion.items) - 1} more" if len(deletion.items) > 1 else "")
    owners = ", ".join(sorted({i.created_by for i in deletion.items}))
    why = f"on {'; '.join(deletion.approved_by)}" if deletion.approved_by else "specops' own, no approval needed"
    return f"{what} ({owners}; {why}): freed {deletion.freed} ({'; '.join(deletion.mounts)})"
