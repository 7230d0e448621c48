"""list_freeable and free_space: what could be deleted to make room, and deleting only what policy allows.

Candidates are Hugging Face cache revisions (huggingface_hub's scan_cache_dir,
run by the host's python3) and model directories (a config.json beside the
weights) under the run's allowed roots. Each gets a safety class:

- never: a running process uses it (its path, or a path inside it, is in the
  process's argv, working directory or open files; a server naming the repo id
  uses the whole cached repo), or it lies outside the allowed roots;
- safe: a cache revision nothing uses, anything this run created, or specops' own
  earlier download (a directory the host's ledger says a download created:
  download/ledger.py) that nothing uses;
- needs_approval: everything else (someone's model directory).

Sizes are what `df` will see freed: the bytes the host's tools measure (du,
scan_cache_dir's expected freed size, which leaves blobs another revision
shares), times the storage scale of a simulated host (disk.storage_scale).
free_space re-lists before acting, so a server started since the listing is
seen; it dry-runs by default and reports df before and after.
"""

from __future__ import annotations

import json
import posixpath
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .context import ToolContext
from .disk import Mount, StorageScales, human_bytes, list_mounts, load_storage_scales, mount_for
from .download.ledger import LedgerEntry, forget, read_ledger
from .errors import HostCommandFailed, InvalidToolInput, PathOutsideAllowedRoots
from .facts import HostProcess, is_sglang_server, on_this_host, scan_processes
from .inputs import HostPath
from .probing import probe
from .registry import tool

Safety = Literal["safe", "needs_approval", "never"]
DELETE_TIMEOUT_S = 600.0

# Runs on the host with its huggingface_hub: each cached revision and what deleting it alone would free.
_SCAN_CACHE = r"""
import json
try:
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound
except ImportError:
    print(json.dumps({"error": "huggingface_hub is not installed for python3"}))
    raise SystemExit(0)
try:
    info = scan_cache_dir()
except CacheNotFound:
    print(json.dumps({"revisions": []}))
    raise SystemExit(0)
out = []
whole = {}
for repo in info.repos:
    whole[repo.repo_id] = info.delete_revisions(*[r.commit_hash for r in repo.revisions]).expected_freed_size
    for rev in repo.revisions:
        out.append({
            "repo_id": repo.repo_id, "repo_type": repo.repo_type, "revision": rev.commit_hash,
            "refs": sorted(rev.refs), "snapshot_path": str(rev.snapshot_path), "repo_path": str(repo.repo_path),
            "size_on_disk": rev.size_on_disk,
            "freed": info.delete_revisions(rev.commit_hash).expected_freed_size,
        })
print(json.dumps({"revisions": out, "whole_repos": whole}))
"""

# argv: "plan" or "delete", then revision hashes. Revisions of one repo share blobs, so what deleting
# several frees is computed for them together, not summed.
_DELETE_REVISIONS = r"""
import sys
from huggingface_hub import scan_cache_dir
strategy = scan_cache_dir().delete_revisions(*sys.argv[2:])
if sys.argv[1] == "delete":
    strategy.execute()
print(strategy.expected_freed_size)
"""

# Model directories: those holding a config.json, at most this deep under an allowed root.
_MODEL_DIR_DEPTH = 4


class FreeableItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Pass to free_space: cache:REPO@REVISION or dir:PATH")
    kind: Literal["cache_revision", "directory"]
    path: str
    repo_id: str | None = None
    revision: str | None = None
    refs: list[str] = []
    size_bytes: int = Field(description="What df will see freed (see the module doc)")
    size: str
    measured_bytes: int = Field(description="As the host's tools measured it (du / scan_cache_dir)")
    mount_point: str
    safety: Safety
    reason: str
    used_by: list[int] = Field(default_factory=list, description="PIDs of processes using it")
    created_by_run: bool = False


class ListFreeableArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    created_paths: list[HostPath] = Field(default_factory=list, description="Paths this run created: safe to delete")


class FreeableList(BaseModel):
    items: list[FreeableItem]
    safe_bytes: int
    safe: str
    needs_approval_bytes: int
    mounts: list[Mount]
    notes: list[str]
    summary: str


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _users(paths: list[str], processes: list[HostProcess], repo_id: str | None = None) -> list[int]:
    users = []
    for proc in processes:
        named = proc.paths()
        if any(_inside(p, top) for p in named for top in paths):
            users.append(proc.pid)
        elif repo_id and is_sglang_server(proc.argv) and repo_id in proc.argv:
            users.append(proc.pid)  # served straight from the cache by repo id
    return sorted(set(users))


def _classify(ctx: ToolContext, path: str, users: list[int], created: bool, *, cache: bool,
              earlier: LedgerEntry | None = None) -> tuple[Safety, str]:  # fmt: skip
    if users:
        return "never", f"in use by running process(es) {users}"
    try:
        ctx.writable(path)
    except PathOutsideAllowedRoots:
        return "never", "outside the roots this run may delete in"
    if created:
        return "safe", "created by this run"
    if earlier is not None:
        return "safe", (f"specops' own earlier download of {earlier.repo_id}@{(earlier.sha or '?')[:12]} "
                        f"(started {earlier.started_at}); no running process uses it: can be downloaded again")
    if cache:
        return "safe", "a Hugging Face cache revision no running process uses: can be downloaded again"
    return "needs_approval", "a model directory this run did not create: someone may want it"


def _mount_point(path: str, mounts: list[Mount]) -> str:
    mount = mount_for(path, mounts)
    return mount.mount_point if mount else "/"


def _cache_items(ctx: ToolContext, processes: list[HostProcess], created: set[str], scales: StorageScales,
                 mounts: list[Mount], notes: list[str]) -> list[FreeableItem]:
    done = probe(ctx.host, ["python3", "-c", _SCAN_CACHE], timeout=300)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        notes.append(f"could not scan the Hugging Face cache (python3 exited {done.exit_code}): {done.stderr.strip()[-200:]}")
        return []
    if "error" in data:
        notes.append(f"Hugging Face cache not scanned: {data['error']}")
        return []
    per_repo: dict[str, list[str]] = {}
    for rev in data["revisions"]:
        per_repo.setdefault(rev["repo_id"], []).append(rev["snapshot_path"])
    for repo_id, snapshots in per_repo.items():
        count = len(snapshots)
        if count > 1:
            whole = data.get("whole_repos", {}).get(repo_id, 0) * scales.for_path(snapshots[0]).factor
            notes.append(f"the {count} cached revisions of {repo_id} share files: each alone frees only what it "
                         f"does not share; all {count} together free {human_bytes(whole)}")
    items = []
    for rev in data["revisions"]:
        snapshot = rev["snapshot_path"]
        # A process holding one of the repo's blobs may be on any revision of it: all count as used.
        users = _users([snapshot, posixpath.join(rev["repo_path"], "blobs")], processes, rev["repo_id"])
        is_created = any(_inside(snapshot, c) or _inside(c, snapshot) for c in created)
        safety, reason = _classify(ctx, snapshot, users, is_created, cache=True)
        scale = scales.for_path(snapshot)
        items.append(FreeableItem(
            id=f"cache:{rev['repo_id']}@{rev['revision']}", kind="cache_revision", path=snapshot,
            repo_id=rev["repo_id"], revision=rev["revision"], refs=rev["refs"],
            size_bytes=rev["freed"] * scale.factor, size=human_bytes(rev["freed"] * scale.factor),
            measured_bytes=rev["freed"], mount_point=_mount_point(snapshot, mounts), safety=safety, reason=reason,
            used_by=users, created_by_run=is_created,
        ))
    return items


def _directory_items(ctx: ToolContext, processes: list[HostProcess], created: set[str], scales: StorageScales,
                     mounts: list[Mount], cache_dirs: list[str]) -> list[FreeableItem]:
    roots = [r for r in ctx.allowed_roots if ctx.host.exists(r)]
    if not roots:
        return []
    found = probe(ctx.host, ["find", *roots, "-maxdepth", str(_MODEL_DIR_DEPTH), "-name", "config.json",
                             "-not", "-path", "*/.cache/*", "-printf", "%h\\n"], timeout=120)
    directories = sorted({d for d in found.stdout.splitlines() if d and d not in roots})
    # A directory inside another model directory belongs to it.
    directories = [d for d in directories if not any(o != d and _inside(d, o) for o in directories)]
    directories = [d for d in directories if not any(_inside(d, c) for c in cache_dirs)]
    if not directories:
        return []
    sizes = {}
    du = probe(ctx.host, ["du", "-sb", "--", *directories], timeout=300)
    for line in du.stdout.splitlines():
        size, _, path = line.partition("\t")
        if size.isdigit():
            sizes[path] = int(size)
    items = []
    ledger = read_ledger(ctx)
    for directory in directories:
        if directory not in sizes:
            continue
        users = _users([directory], processes)
        is_created = any(_inside(directory, c) for c in created)
        safety, reason = _classify(ctx, directory, users, is_created, cache=False, earlier=ledger.get(directory))
        size = sizes[directory] * scales.for_path(directory).factor
        items.append(FreeableItem(
            id=f"dir:{directory}", kind="directory", path=directory, size_bytes=size, size=human_bytes(size),
            measured_bytes=sizes[directory], mount_point=_mount_point(directory, mounts), safety=safety, reason=reason,
            used_by=users, created_by_run=is_created,
        ))
    return items


def gather_freeable(ctx: ToolContext, created_paths: list[str]) -> FreeableList:
    created = {ctx.resolve(p) for p in created_paths}
    notes: list[str] = []
    # Independent looks at the host, side by side.
    with ThreadPoolExecutor(max_workers=3) as pool:
        scales_run = pool.submit(load_storage_scales, ctx.host)
        mounts_run = pool.submit(list_mounts, ctx.host)
        processes_run = pool.submit(scan_processes, ctx.host, open_files=True)
    scales, all_mounts = scales_run.result(), mounts_run.result()
    processes = on_this_host(processes_run.result(), scales.sim_root)
    cache = _cache_items(ctx, processes, created, scales, all_mounts, notes)
    cache_dirs = sorted({posixpath.dirname(posixpath.dirname(i.path)) for i in cache})
    items = cache + _directory_items(ctx, processes, created, scales, all_mounts, cache_dirs)
    scale_note = next((n for i in items for n in [scales.for_path(i.path).note] if n), None)
    if scale_note:
        notes.append(scale_note)
    touched = {i.mount_point for i in items}
    mounts = {m.mount_point: m for m in all_mounts if m.mount_point in touched}
    safe = sum(i.size_bytes for i in items if i.safety == "safe")
    approval = sum(i.size_bytes for i in items if i.safety == "needs_approval")
    summary = (
        f"{len(items)} candidates: {human_bytes(safe)} safe to free, {human_bytes(approval)} needs approval, "
        f"{sum(1 for i in items if i.safety == 'never')} never (in use or outside the allowed roots)"
    )
    return FreeableList(items=items, safe_bytes=safe, safe=human_bytes(safe), needs_approval_bytes=approval,
                        mounts=list(mounts.values()), notes=notes, summary=summary)


@tool("list_freeable", mutates=False)
def list_freeable(ctx: ToolContext, args: ListFreeableArgs) -> FreeableList:
    """What could be deleted to free disk: Hugging Face cache revisions and model directories under the allowed
    roots, each with the size df would see freed, the processes using it, and a safety class
    (safe / needs_approval / never). Deletes nothing."""
    return gather_freeable(ctx, list(args.created_paths))


class FreeSpaceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(min_length=1, description="Candidate ids from list_freeable")
    dry_run: bool = Field(default=True, description="Only report what would be freed")
    approved_paths: list[HostPath] = Field(default_factory=list, description="needs_approval items the user approved")
    created_paths: list[HostPath] = Field(default_factory=list, description="Paths this run created: safe to delete")


class MountChange(BaseModel):
    mount_point: str
    free_before_bytes: int
    free_after_bytes: int = Field(description="Measured after deleting; on a dry run, the expected figure")
    freed_bytes: int
    free_before: str
    free_after: str
    measured: bool = Field(description="False on a dry run: free_after is expected, not measured")


class Refusal(BaseModel):
    id: str
    safety: Safety
    reason: str


class FreeSpaceResult(BaseModel):
    dry_run: bool
    deleted: list[FreeableItem] = Field(description="Deleted, or on a dry run: would be deleted")
    refused: list[Refusal]
    expected_freed_bytes: int
    expected_freed: str
    mounts: list[MountChange]
    notes: list[str]
    summary: str


def _cache_expected(ctx: ToolContext, items: list[FreeableItem]) -> int:
    """What deleting these cache revisions together frees, as df will count it."""
    revisions = [i for i in items if i.kind == "cache_revision"]
    if not revisions:
        return 0
    done = probe(ctx.host, ["python3", "-c", _DELETE_REVISIONS, "plan", *[str(i.revision) for i in revisions]])
    if not done.ok or not done.stdout.strip().isdigit():
        return sum(i.size_bytes for i in revisions)  # the per-revision figures: a lower bound
    return int(done.stdout.strip()) * load_storage_scales(ctx.host).for_path(revisions[0].path).factor


def _delete(ctx: ToolContext, item: FreeableItem) -> None:
    host = ctx.host
    if item.kind == "cache_revision":
        done = host.run(["python3", "-c", _DELETE_REVISIONS, "delete", str(item.revision)], timeout=DELETE_TIMEOUT_S)
    else:
        path = ctx.writable(item.path)  # checked again right before the only rm this tool runs
        if path in ctx.allowed_roots or path in ("/", ctx.home):
            raise InvalidToolInput(f"refusing to delete {path}: it is a root itself", remedy="delete inside it instead")
        done = host.run(["rm", "-rf", "--one-file-system", "--", path], timeout=DELETE_TIMEOUT_S)
    if not done.ok or host.exists(item.path):
        raise HostCommandFailed(
            f"deleting {item.path} on {host.spec} failed (exit {done.exit_code}): {(done.stderr or done.stdout).strip()[-300:]}",
            remedy="look at the path's permissions and what holds it; nothing else was changed after this item",
            details={"id": item.id, "path": item.path},
        )


@tool("free_space", mutates=True)
def free_space(ctx: ToolContext, args: FreeSpaceArgs) -> FreeSpaceResult:
    """Free disk by deleting list_freeable candidates (by id). Dry run by default: says what would go and the free
    bytes expected after. Deletes `safe` items; `needs_approval` ones only when their path is in approved_paths;
    never `never` ones. Reports df before and after for each mount touched."""
    approved = {ctx.resolve(p) for p in args.approved_paths}
    listing = gather_freeable(ctx, list(args.created_paths))
    by_id = {i.id: i for i in listing.items}
    unknown = [i for i in args.ids if i not in by_id]
    if unknown:
        raise InvalidToolInput(
            f"no such candidates now: {unknown}", remedy="call list_freeable and use the ids it returns",
            details={"unknown": unknown, "known": sorted(by_id)},
        )
    chosen, refused = [], []
    for item in (by_id[i] for i in dict.fromkeys(args.ids)):
        if item.safety == "never":
            refused.append(Refusal(id=item.id, safety=item.safety, reason=item.reason))
        elif item.safety == "needs_approval" and item.path not in approved:
            refused.append(Refusal(id=item.id, safety=item.safety,
                                   reason=f"{item.reason}; add {item.path} to approved_paths once the user agrees"))
        else:
            chosen.append(item)

    current = {m.mount_point: m for m in list_mounts(ctx.host)}
    before = {point: current[point] for point in dict.fromkeys(i.mount_point for i in chosen) if point in current}
    expected = sum(i.size_bytes for i in chosen if i.kind == "directory") + _cache_expected(ctx, chosen)
    if not args.dry_run:
        for item in chosen:
            _delete(ctx, item)
        forget(ctx, [i.path for i in chosen if i.kind == "directory"])
    changes = []
    for point, mount in before.items():
        on_mount = [i for i in chosen if i.mount_point == point]
        planned = sum(i.size_bytes for i in on_mount if i.kind == "directory") + _cache_expected(ctx, on_mount)
        if args.dry_run:
            after_free = mount.free_bytes + planned
        else:
            after_free = next((m.free_bytes for m in list_mounts(ctx.host) if m.mount_point == point), mount.free_bytes)
        changes.append(MountChange(
            mount_point=point, free_before_bytes=mount.free_bytes, free_after_bytes=after_free,
            freed_bytes=after_free - mount.free_bytes, free_before=mount.free, free_after=human_bytes(after_free),
            measured=not args.dry_run,
        ))
    verb = "would free" if args.dry_run else "freed"
    summary = (
        f"{verb} {human_bytes(expected if args.dry_run else sum(c.freed_bytes for c in changes))} "
        f"in {len(chosen)} item(s); refused {len(refused)}"
        + "".join(f"; {c.mount_point}: {c.free_before} -> {c.free_after} free" for c in changes)
    )
    return FreeSpaceResult(
        dry_run=args.dry_run, deleted=chosen, refused=refused, expected_freed_bytes=expected,
        expected_freed=human_bytes(expected), mounts=changes, notes=listing.notes, summary=summary,
    )
