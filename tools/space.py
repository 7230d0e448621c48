"""list_freeable and free_space: what could be deleted to make room, and deleting only what the rule allows.

The rule: without the user's approval specops deletes only what specops
created (this run, or an earlier run by the host's ledger, download/ledger.py)
and nothing a running process uses. Anything else, another model's Hugging Face
cache above all (someone's hours of download, used or not), goes only on the
user's approval: `--allow-delete` on the command line, or a yes in the one round
of questions (`--ask-once`). The harness hands the user's approvals to these
tools (`user_approvals`, filled from the user's word, never from the caller);
the tools class every candidate and delete nothing else:

- never: a running process uses it (its path, or a path inside it, is in the
  process's argv, working directory or open files; a server naming the repo id
  uses the whole cached repo), or it lies outside the allowed roots;
- safe: created by specops, this run or an earlier one (its ledger), and unused;
- needs_approval: everything else; `approved_by` names the user's approval
  that covers it, if any, and `approve_with` the --allow-delete value that would.

Sizes are what `df` will see freed: the blocks the files take on the disk (du,
and st_blocks of the files in huggingface_hub's own deletion plan for cache
revisions), not their sizes. Revisions of one cached repo
share blobs: a revision alone frees only what no other revision references (its
`size_bytes`, often just its links), so what a SET of candidates frees is
computed for the set together (`sets`: per repo all its unused revisions, per
mount what specops created, what may go now, and everything). free_space
re-lists before acting, so a server started since the listing is seen; it
dry-runs by default and reports df before and after.
"""

from __future__ import annotations

import json
import posixpath
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from .context import ToolContext
from .disk import Mount, human_bytes, list_mounts, mount_for
from .download.ledger import LedgerEntry, forget, read_ledger
from .errors import HostCommandFailed, InvalidToolInput, PathOutsideAllowedRoots
from .facts import HostProcess, is_sglang_server, scan_processes
from .inputs import HostPath
from .probing import probe
from .registry import tool

Safety = Literal["safe", "needs_approval", "never"]
CreatedBy = Literal["this_run", "specops", "other"]
DELETE_TIMEOUT_S = 600.0

# Python run on the host: what a huggingface_hub deletion plan frees on the disk. hf's own expected_freed_size
# sums file sizes; the disk frees the blocks the files take (df's unit), which a sparse file or a compressing
# filesystem makes differ.
_FREED_ON_DISK = r"""
import os, stat
def _taken(path):
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    return st.st_blocks * 512 if stat.S_ISREG(st.st_mode) else 0
def freed(strategy):
    files = {str(b) for b in strategy.blobs}
    for repo in strategy.repos:
        for top, _, names in os.walk(repo):
            files.update(os.path.join(top, n) for n in names)
    return sum(_taken(f) for f in files)
"""

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
for repo in info.repos:
    for rev in repo.revisions:
        out.append({
            "repo_id": repo.repo_id, "repo_type": repo.repo_type, "revision": rev.commit_hash,
            "refs": sorted(rev.refs), "snapshot_path": str(rev.snapshot_path), "repo_path": str(repo.repo_path),
            "freed": freed(info.delete_revisions(rev.commit_hash)),
        })
print(json.dumps({"revisions": out}))
"""

# argv: a JSON list of sets of revision hashes; prints what deleting each set frees, the set as a whole (revisions
# of one repo share blobs: a set frees the blobs no remaining revision references, not the sum of its members).
_PLAN_SETS = r"""
import json, sys
from huggingface_hub import scan_cache_dir
info = scan_cache_dir()
print(json.dumps([freed(info.delete_revisions(*revisions)) if revisions else 0
                  for revisions in json.loads(sys.argv[1])]))
"""

# argv: "plan" or "delete", then revision hashes. Revisions of one repo share blobs, so what deleting
# several frees is computed for them together, not summed.
_DELETE_REVISIONS = r"""
import sys
from huggingface_hub import scan_cache_dir
strategy = scan_cache_dir().delete_revisions(*sys.argv[2:])
if sys.argv[1] == "delete":
    strategy.execute()
print(freed(strategy))
"""

# Model directories: those holding a config.json, at most this deep under an allowed root.
_MODEL_DIR_DEPTH = 4


class UserApproval(BaseModel):
    """One thing the user allowed deleting: filled in by the harness from the user's word, never by the caller."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = Field(
        description="cache:ORG/NAME (every revision of that cached repo), cache:ORG/NAME@REV, "
        "dir:PATH or PATH (everything under it)"
    )
    by: str = Field(description="Who approved: '--allow-delete', or the --ask-once round's 'terminal' / 'answers file'")

    @property
    def label(self) -> str:
        if self.by == "--allow-delete":
            return f"--allow-delete {self.spec}"
        return f"the user ({self.by}, in the --ask-once round): {self.spec}"


# The harness's field: not in the schema a model sees; whatever a caller puts there is replaced.
UserApprovals = SkipJsonSchema[list[UserApproval]]
# What this run created: the harness fills it from what it saw the run create (a caller's list is not believed),
# so the model is not shown it.
HarnessPaths = SkipJsonSchema[list[HostPath]]
# What the goal needs (its target model and drafter, as host paths or repo ids): the harness fills it from the
# run's own calls (what it read, downloaded or served), and the tools never offer it for deletion.
GoalNeeds = SkipJsonSchema[list[str]]


def goal_need_covering(ctx: ToolContext, needs: list[str], path: str, repo_id: str | None = None) -> str | None:
    """The goal's need that `path` (a cached `repo_id`'s revision) holds, if any: the need itself, a directory
    inside it (the target inside a models folder) or the repo."""
    for need in needs:
        if "/" in need and not need.startswith(("/", "~")):  # ORG/NAME: a repo id
            if repo_id is not None and repo_id.lower() == need.lower():
                return need
            continue
        resolved = ctx.resolve(need)
        if _inside(path, resolved) or _inside(resolved, path):
            return need
    return None


def approval_covers(
    spec: str,
    ctx: ToolContext,
    *,
    path: str,
    repo_id: str | None = None,
    revision: str | None = None,
    refs: list[str] | tuple[str, ...] = (),
) -> bool:
    """Whether an --allow-delete value (or an approved --ask-once item) covers this candidate."""
    if spec.startswith("cache:"):
        repo, _, rev = spec.removeprefix("cache:").partition("@")
        repo_id = repo_id or _cache_repo_of(path)
        if repo_id != repo:
            return False
        return not rev or rev == revision or rev in refs or (len(rev) >= 7 and (revision or "").startswith(rev))
    top = ctx.resolve(spec.removeprefix("dir:"))
    return top not in ("/", ctx.home) and _inside(path, top)  # never everything at once


def _cache_repo_of(path: str) -> str | None:
    """ORG/NAME of a path inside a Hugging Face cache folder (.../models--ORG--NAME/...), else None."""
    for part in path.split("/"):
        kind, sep, rest = part.partition("--")
        if sep and kind in ("models", "datasets", "spaces") and rest.count("--") == 1:
            return rest.replace("--", "/")
    return None


class FreeableItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Pass to free_space: cache:REPO@REVISION or dir:PATH")
    kind: Literal["cache_revision", "directory"]
    path: str
    repo_id: str | None = None
    revision: str | None = None
    refs: list[str] = []
    size_bytes: int = Field(
        description="What deleting this item ALONE frees, as df counts it; a cache revision "
        "keeps the blobs another revision shares (see the listing's sets for what several free)"
    )
    size: str
    mount_point: str
    safety: Safety
    reason: str
    used_by: list[int] = Field(default_factory=list, description="PIDs of processes using it")
    created_by_run: bool = False
    created_by: CreatedBy = Field(
        default="other", description="this_run / specops (an earlier run, by its ledger) / other"
    )
    approve_with: str | None = Field(
        default=None, description="needs_approval: the --allow-delete value that approves it"
    )
    approved_by: str | None = Field(default=None, description="needs_approval: the user's approval that covers it")


class FreeableSet(BaseModel):
    """Candidates deleted together, and what that frees as a whole (shared blobs counted once, when all go)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="repo:ORG/NAME, specops:MOUNT, now:MOUNT or all:MOUNT")
    what: str
    ids: list[str] = Field(description="The items' ids: pass them together to free_space")
    frees_bytes: int = Field(description="What deleting all of them frees, as df counts it")
    frees: str
    mount_point: str
    safety: Literal["safe", "needs_approval"] = Field(description="safe: every item was created by specops")
    approved: bool = Field(description="Every item is safe or approved by the user: free_space may delete the set now")
    approve_with: list[str] = Field(
        default_factory=list, description="--allow-delete values that would approve the rest"
    )


class ListFreeableArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    created_paths: HarnessPaths = Field(default_factory=list)
    user_approvals: UserApprovals = Field(default_factory=list)
    goal_needs: GoalNeeds = Field(default_factory=list)


class FreeableList(BaseModel):
    items: list[FreeableItem]
    sets: list[FreeableSet] = Field(default_factory=list)
    safe_bytes: int = Field(description="What deleting every safe item frees, together")
    safe: str
    needs_approval_bytes: int = Field(description="What deleting the needs_approval items too frees beyond safe_bytes")
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


class _Owner(BaseModel):
    created_by: CreatedBy
    why: str


def _owner(path: str, created: set[str], earlier: LedgerEntry | None, *, cache: bool) -> _Owner:
    if any(_inside(path, c) or (cache and _inside(c, path)) for c in created):
        return _Owner(created_by="this_run", why="created by this run")
    if earlier is not None:
        return _Owner(
            created_by="specops",
            why=f"specops' own earlier download of {earlier.repo_id}@"
            f"{(earlier.sha or '?')[:12]} (started {earlier.started_at}): can be downloaded again",
        )
    return _Owner(created_by="other", why="")


def _classify(
    ctx: ToolContext,
    path: str,
    users: list[int],
    owner: _Owner,
    *,
    approve_with: str,
    what: str,
    approvals: list[UserApproval],
    covers: dict[str, Any],
    needed: str | None = None,
) -> tuple[Safety, str, str | None]:
    """(safety, reason, approved_by) by the rule: specops' own goes freely, the rest on the user's approval;
    what a running process uses or the goal needs (`needed`), never."""
    if users:
        return "never", f"in use by running process(es) {users}", None
    if needed is not None:
        return "never", f"the goal needs it ({needed}): never a deletion candidate while it does", None
    try:
        ctx.writable(path)
    except PathOutsideAllowedRoots:
        return "never", "outside the roots this run may delete in", None
    if owner.created_by != "other":
        return "safe", f"{owner.why}; nothing uses it", None
    approval = next((a for a in approvals if approval_covers(a.spec, ctx, path=path, **covers)), None)
    reason = (
        f"{what}; not created by specops, so deleting it needs the user's approval "
        f"(--allow-delete {approve_with}, or a yes in the --ask-once round)"
    )
    if approval is not None:
        return "needs_approval", f"{reason}; approved by {approval.label}", approval.label
    return "needs_approval", reason, None


def _mount_point(path: str, mounts: list[Mount]) -> str:
    mount = mount_for(path, mounts)
    return mount.mount_point if mount else "/"


def _cache_items(
    ctx: ToolContext,
    processes: list[HostProcess],
    created: set[str],
    mounts: list[Mount],
    notes: list[str],
    approvals: list[UserApproval],
    needs: list[str],
) -> list[FreeableItem]:
    done = probe(ctx.host, ["python3", "-c", _FREED_ON_DISK + _SCAN_CACHE], timeout=300)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        notes.append(
            f"could not scan the Hugging Face cache (python3 exited {done.exit_code}): {done.stderr.strip()[-200:]}"
        )
        return []
    if "error" in data:
        notes.append(f"Hugging Face cache not scanned: {data['error']}")
        return []
    items = []
    for rev in data["revisions"]:
        snapshot, repo_id = rev["snapshot_path"], rev["repo_id"]
        # A process holding one of the repo's blobs may be on any revision of it: all count as used.
        users = _users([snapshot, posixpath.join(rev["repo_path"], "blobs")], processes, repo_id)
        owner = _owner(snapshot, created, None, cache=True)
        safety, reason, approved_by = _classify(
            ctx,
            snapshot,
            users,
            owner,
            approve_with=f"cache:{repo_id}",
            approvals=approvals,
            what=f"another model's Hugging Face cache ({repo_id}), someone's hours of download, used or not",
            covers={"repo_id": repo_id, "revision": rev["revision"], "refs": rev["refs"]},
            needed=goal_need_covering(ctx, needs, snapshot, repo_id),
        )
        items.append(
            FreeableItem(
                id=f"cache:{repo_id}@{rev['revision']}",
                kind="cache_revision",
                path=snapshot,
                repo_id=repo_id,
                revision=rev["revision"],
                refs=rev["refs"],
                size_bytes=rev["freed"],
                size=human_bytes(rev["freed"]),
                mount_point=_mount_point(snapshot, mounts),
                safety=safety,
                reason=reason,
                used_by=users,
                created_by_run=owner.created_by == "this_run",
                created_by=owner.created_by,
                approve_with=f"cache:{repo_id}" if safety == "needs_approval" else None,
                approved_by=approved_by,
            )
        )
    return items


def _directory_items(
    ctx: ToolContext,
    processes: list[HostProcess],
    created: set[str],
    mounts: list[Mount],
    cache_dirs: list[str],
    approvals: list[UserApproval],
    needs: list[str],
) -> list[FreeableItem]:
    roots = [r for r in ctx.allowed_roots if ctx.host.exists(r)]
    if not roots:
        return []
    found = probe(
        ctx.host,
        [
            "find",
            *roots,
            "-maxdepth",
            str(_MODEL_DIR_DEPTH),
            "-name",
            "config.json",
            "-not",
            "-path",
            "*/.cache/*",
            "-printf",
            "%h\\n",
        ],
        timeout=120,
    )
    directories = sorted({d for d in found.stdout.splitlines() if d and d not in roots})
    # A directory inside another model directory belongs to it.
    directories = [d for d in directories if not any(o != d and _inside(d, o) for o in directories)]
    directories = [d for d in directories if not any(_inside(d, c) for c in cache_dirs)]
    if not directories:
        return []
    sizes: dict[str, int] = {}
    du = probe(ctx.host, ["du", "-s", "-B1", "--", *directories], timeout=300)
    for line in du.stdout.splitlines():
        du_size, _, path = line.partition("\t")
        if du_size.isdigit():
            sizes[path] = int(du_size)
    items = []
    ledger = read_ledger(ctx)
    for directory in directories:
        if directory not in sizes:
            continue
        users = _users([directory], processes)
        owner = _owner(directory, created, ledger.get(directory), cache=False)
        safety, reason, approved_by = _classify(
            ctx,
            directory,
            users,
            owner,
            approve_with=directory,
            approvals=approvals,
            covers={},
            what="a model directory someone may want",
            needed=goal_need_covering(ctx, needs, directory),
        )
        size = sizes[directory]
        items.append(
            FreeableItem(
                id=f"dir:{directory}",
                kind="directory",
                path=directory,
                size_bytes=size,
                size=human_bytes(size),
                mount_point=_mount_point(directory, mounts),
                safety=safety,
                reason=reason,
                used_by=users,
                created_by_run=owner.created_by == "this_run",
                created_by=owner.created_by,
                approve_with=directory if safety == "needs_approval" else None,
                approved_by=approved_by,
            )
        )
    return items


def _may_go_now(item: FreeableItem) -> bool:
    return item.safety == "safe" or (item.safety == "needs_approval" and item.approved_by is not None)


class _Planner:
    """What sets of candidates free, each set as a whole: cache revisions planned by huggingface_hub on the host
    (one call for every set), directories summed (they share nothing)."""

    def __init__(self, ctx: ToolContext, notes: list[str]) -> None:
        self.ctx, self.notes = ctx, notes
        self._wanted: list[tuple[str, ...]] = []
        self._planned: dict[tuple[str, ...], int] = {}

    @staticmethod
    def _revisions(items: list[FreeableItem]) -> tuple[str, ...]:
        return tuple(sorted(str(i.revision) for i in items if i.kind == "cache_revision"))

    def want(self, items: list[FreeableItem]) -> None:
        key = self._revisions(items)
        if len(key) > 1 and key not in self._planned and key not in self._wanted:
            self._wanted.append(key)

    def plan(self) -> None:
        if not self._wanted:
            return
        done = probe(
            self.ctx.host, ["python3", "-c", _FREED_ON_DISK + _PLAN_SETS, json.dumps(self._wanted)], timeout=300
        )
        try:
            sizes = json.loads(done.stdout)
        except ValueError:
            sizes = None
        if not (isinstance(sizes, list) and len(sizes) == len(self._wanted)):
            self.notes.append(
                "could not plan the cache deletions together on the host: a set's figure is the sum "
                f"of what its revisions free alone, a lower bound ({done.stderr.strip()[-200:]})"
            )
            sizes = [None] * len(self._wanted)
        for key, size in zip(self._wanted, sizes, strict=True):
            if isinstance(size, int):
                self._planned[key] = size
        self._wanted = []

    def frees(self, items: list[FreeableItem]) -> int:
        revisions = [i for i in items if i.kind == "cache_revision"]
        together = sum(i.size_bytes for i in items if i.kind == "directory")
        key = self._revisions(revisions)
        if len(key) > 1 and key in self._planned:
            return together + self._planned[key]
        return together + sum(i.size_bytes for i in revisions)


def _candidate_sets(items: list[FreeableItem]) -> list[tuple[str, str, str, list[FreeableItem]]]:
    """(id, what, mount, items) for the sets worth a figure of their own, each membership once."""
    out: list[tuple[str, str, str, list[FreeableItem]]] = []
    seen: set[frozenset[str]] = set()

    def add(set_id: str, what: str, mount: str, members: list[FreeableItem], least: int = 2) -> None:
        key = frozenset(i.id for i in members)
        if len(members) >= least and key not in seen:
            seen.add(key)
            out.append((set_id, what, mount, members))

    revisions: dict[str, list[FreeableItem]] = {}
    for item in items:
        if item.kind == "cache_revision" and item.repo_id:
            revisions.setdefault(item.repo_id, []).append(item)
    for repo_id, revs in revisions.items():
        unused = [i for i in revs if i.safety != "never"]
        kept = len(revs) - len(unused)
        what = (
            f"all {len(unused)} revisions of {repo_id} (its whole cache)"
            if not kept
            else f"the {len(unused)} unused revisions of {repo_id} ({kept} in use stay)"
        )
        add(f"repo:{repo_id}", what, unused[0].mount_point if unused else "", unused)
    for mount in dict.fromkeys(i.mount_point for i in items):
        here = [i for i in items if i.mount_point == mount and i.safety != "never"]
        add(
            f"specops:{mount}", f"everything specops created on {mount}", mount, [i for i in here if i.safety == "safe"]
        )
        if any(i.approved_by for i in here):
            add(
                f"now:{mount}",
                f"everything on {mount} that may go now (specops' own and what the user approved)",
                mount,
                [i for i in here if _may_go_now(i)],
                least=1,
            )
        add(f"all:{mount}", f"everything on {mount} no process uses (what needs approval included)", mount, here)
    return out


def gather_freeable(
    ctx: ToolContext,
    created_paths: list[str],
    approvals: list[UserApproval] | None = None,
    goal_needs: list[str] | None = None,
) -> FreeableList:
    created = {ctx.resolve(p) for p in created_paths}
    approvals, needs = list(approvals or []), list(goal_needs or [])
    notes: list[str] = []
    # Independent looks at the host, side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        mounts_run = pool.submit(list_mounts, ctx.host)
        processes_run = pool.submit(scan_processes, ctx.host, open_files=True)
    all_mounts, processes = mounts_run.result(), processes_run.result()
    cache = _cache_items(ctx, processes, created, all_mounts, notes, approvals, needs)
    cache_dirs = sorted({posixpath.dirname(posixpath.dirname(i.path)) for i in cache})
    items = cache + _directory_items(ctx, processes, created, all_mounts, cache_dirs, approvals, needs)

    planner = _Planner(ctx, notes)
    candidates = _candidate_sets(items)
    by_mount = {
        m: [i for i in items if i.mount_point == m and i.safety != "never"] for m in {i.mount_point for i in items}
    }
    for _, _, _, members in candidates:
        planner.want(members)
    for here in by_mount.values():
        planner.want([i for i in here if i.safety == "safe"])
        planner.want([i for i in here if _may_go_now(i)])
        planner.want(here)
    planner.plan()
    sets = []
    for set_id, what, mount, members in candidates:
        pending = [i.approve_with for i in members if i.safety == "needs_approval" and not i.approved_by]
        frees = planner.frees(members)
        sets.append(
            FreeableSet(
                id=set_id,
                what=what,
                ids=[i.id for i in members],
                frees_bytes=frees,
                frees=human_bytes(frees),
                mount_point=mount,
                safety="safe" if all(i.safety == "safe" for i in members) else "needs_approval",
                approved=all(_may_go_now(i) for i in members),
                approve_with=[w for w in dict.fromkeys(pending) if w],
            )
        )
    for repo_set in (s for s in sets if s.id.startswith("repo:")):
        alone = [i for i in items if i.id in repo_set.ids]
        notes.append(
            f"the {len(alone)} cached revisions of {repo_set.id.removeprefix('repo:')} share files: each alone "
            f"frees only what no other revision uses ({', '.join(i.size for i in alone)}); all {len(alone)} "
            f"together free {repo_set.frees} (set {repo_set.id})"
        )

    touched = {i.mount_point for i in items}
    mounts = {m.mount_point: m for m in all_mounts if m.mount_point in touched}
    safe = sum(planner.frees([i for i in here if i.safety == "safe"]) for here in by_mount.values())
    everything = sum(planner.frees(here) for here in by_mount.values())
    now = sum(planner.frees([i for i in here if _may_go_now(i)]) for here in by_mount.values())
    never = sum(1 for i in items if i.safety == "never")
    shown = [s for s in sets if s.id.startswith("repo:")] + [
        i for i in items if i.safety == "needs_approval" and i.kind == "directory"
    ]
    biggest = "; ".join(
        f"{x.what}: {x.frees}" if isinstance(x, FreeableSet) else f"{x.path}: {x.size}" for x in shown[:4]
    )
    summary = (
        f"{len(items)} candidates: {human_bytes(safe)} safe to free (created by specops, unused); "
        f"{human_bytes(max(0, everything - safe))} more with the user's approval"
        + (f" ({biggest})" if biggest else "")
        + (f"; {human_bytes(now)} may go now (specops' own and what the user approved)" if now > safe else "")
        + f"; {never} never (in use, needed by the goal, or outside the allowed roots)"
    )
    return FreeableList(
        items=items,
        sets=sets,
        safe_bytes=safe,
        safe=human_bytes(safe),
        needs_approval_bytes=max(0, everything - safe),
        mounts=list(mounts.values()),
        notes=notes,
        summary=summary,
    )


def freeable_view(listing: FreeableList) -> dict[str, Any]:
    """What a planner needs of a listing: per item its id, what it frees alone, its class and approval; per set
    what it frees together; the reasons only where something can never go."""
    return {
        "summary": listing.summary,
        "items": [
            {
                "id": i.id,
                "frees_alone": i.size,
                "safety": i.safety,
                "created_by": i.created_by,
                "approved_by": i.approved_by,
                "approve_with": None if i.approved_by else i.approve_with,
                "used_by": i.used_by,
                "reason": i.reason if i.safety == "never" else None,
            }
            for i in listing.items
        ],
        # A set's id is enough for free_space; its members are the items above.
        "sets": [
            {
                "id": s.id,
                "what": s.what,
                "frees_together": s.frees,
                "safety": s.safety,
                "approved": s.approved,
                "approve_with": s.approve_with,
            }
            for s in listing.sets
        ],
        "notes": listing.notes,
    }


@tool("list_freeable", mutates=False, view=freeable_view)
def list_freeable(ctx: ToolContext, args: ListFreeableArgs) -> FreeableList:
    """What could be deleted to free disk under the allowed roots: each item with what it frees alone and its class
    (safe: specops' own and unused; needs_approval: anything else, approved_by once the user approved it; never: in
    use or needed by the goal). `sets`: what several free together (one repo's revisions share blobs). Deletes nothing.
    """
    return gather_freeable(ctx, list(args.created_paths), list(args.user_approvals), list(args.goal_needs))


class FreeSpaceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[str] = Field(min_length=1, description="Ids from list_freeable: items, or a set's id for all its items")
    dry_run: bool = Field(default=True, description="Only report what would be freed")
    approved_paths: list[HostPath] = Field(
        default_factory=list, description="Paths the user approved deleting (only the user's approvals count)"
    )
    created_paths: HarnessPaths = Field(default_factory=list)
    user_approvals: UserApprovals = Field(default_factory=list)
    goal_needs: GoalNeeds = Field(default_factory=list)


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
    deleted: list[FreeableItem] = Field(
        description="Deleted, or on a dry run: would be deleted (approved_by: on whose "
        "approval, for what specops did not create)"
    )
    refused: list[Refusal]
    expected_freed_bytes: int = Field(description="What deleting them together frees, as planned before deleting")
    expected_freed: str
    mounts: list[MountChange]
    notes: list[str]
    summary: str


def cache_expected(ctx: ToolContext, items: list[FreeableItem]) -> int:
    """What deleting these cache revisions together frees, as df will count it."""
    revisions = [i for i in items if i.kind == "cache_revision"]
    if not revisions:
        return 0
    done = probe(
        ctx.host, ["python3", "-c", _FREED_ON_DISK + _DELETE_REVISIONS, "plan", *[str(i.revision) for i in revisions]]
    )
    if not done.ok or not done.stdout.strip().isdigit():
        return sum(i.size_bytes for i in revisions)  # the per-revision figures: a lower bound
    return int(done.stdout.strip())


def _delete(ctx: ToolContext, item: FreeableItem) -> None:
    host = ctx.host
    if item.kind == "cache_revision":
        done = host.run(
            ["python3", "-c", _FREED_ON_DISK + _DELETE_REVISIONS, "delete", str(item.revision)],
            timeout=DELETE_TIMEOUT_S,
        )
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


def free_space_view(result: FreeSpaceResult) -> dict[str, Any]:
    """The summary says what was freed, on whose approval, and each mount's free space before and after."""
    return {
        "summary": result.summary,
        "dry_run": result.dry_run,
        "deleted": [i.id for i in result.deleted],
        "refused": [r.model_dump() for r in result.refused],
    }


@tool("free_space", mutates=True, view=free_space_view)
def free_space(ctx: ToolContext, args: FreeSpaceArgs) -> FreeSpaceResult:
    """Delete list_freeable candidates by id (a set's id deletes its items); a dry run by default. `safe` items go;
    `needs_approval` ones only on the user's approval (approved_by); `never` ones never. Reports df before and after.
    """
    approved = {ctx.resolve(p) for p in args.approved_paths}
    listing = gather_freeable(ctx, list(args.created_paths), list(args.user_approvals), list(args.goal_needs))
    by_id = {i.id: i for i in listing.items}
    sets = {s.id: s.ids for s in listing.sets}
    unknown = [i for i in args.ids if i not in by_id and i not in sets]
    if unknown:
        raise InvalidToolInput(
            f"no such candidates now: {unknown}",
            remedy="call list_freeable and use the ids it returns",
            details={"unknown": unknown, "known": sorted(by_id), "sets": sorted(sets)},
        )
    wanted = [member for i in args.ids for member in sets.get(i, [i])]  # a set's id stands for its items
    chosen, refused = [], []
    for item in (by_id[i] for i in dict.fromkeys(wanted)):
        unapproved = item.safety == "needs_approval" and item.approved_by is None and item.path not in approved
        if item.safety == "never" or unapproved:
            refused.append(Refusal(id=item.id, safety=item.safety, reason=item.reason))
        elif item.safety == "needs_approval" and item.approved_by is None:
            chosen.append(item.model_copy(update={"approved_by": "approved_paths (the user's approval of this path)"}))
        else:
            chosen.append(item)

    current = {m.mount_point: m for m in list_mounts(ctx.host)}
    before = {point: current[point] for point in dict.fromkeys(i.mount_point for i in chosen) if point in current}
    expected = sum(i.size_bytes for i in chosen if i.kind == "directory") + cache_expected(ctx, chosen)
    if not args.dry_run:
        for item in chosen:
            _delete(ctx, item)
        forget(ctx, [i.path for i in chosen if i.kind == "directory"])
    changes = []
    for point, mount in before.items():
        on_mount = [i for i in chosen if i.mount_point == point]
        planned = sum(i.size_bytes for i in on_mount if i.kind == "directory") + cache_expected(ctx, on_mount)
        if args.dry_run:
            after_free = mount.free_bytes + planned
        else:
            after_free = next((m.free_bytes for m in list_mounts(ctx.host) if m.mount_point == point), mount.free_bytes)
        changes.append(
            MountChange(
                mount_point=point,
                free_before_bytes=mount.free_bytes,
                free_after_bytes=after_free,
                freed_bytes=after_free - mount.free_bytes,
                free_before=mount.free,
                free_after=human_bytes(after_free),
                measured=not args.dry_run,
            )
        )
    verb = "would free" if args.dry_run else "freed"
    on_approval = sorted({i.approved_by for i in chosen if i.approved_by})
    summary = (
        f"{verb} {human_bytes(expected if args.dry_run else sum(c.freed_bytes for c in changes))} "
        f"in {len(chosen)} item(s)"
        + (
            f" ({sum(1 for i in chosen if i.approved_by)} on the user's approval: {'; '.join(on_approval)})"
            if on_approval
            else ""
        )
        + f"; refused {len(refused)}"
        + "".join(f"; {c.mount_point}: {c.free_before} -> {c.free_after} free" for c in changes)
    )
    return FreeSpaceResult(
        dry_run=args.dry_run,
        deleted=chosen,
        refused=refused,
        expected_freed_bytes=expected,
        expected_freed=human_bytes(expected),
        mounts=changes,
        notes=listing.notes,
        summary=summary,
    )
