"""check_disk: will a Hub download fit where it is meant to go? Plus the mount facts other tools share.

The verdict compares what the download still needs (the Hub's declared sizes
of the files selected, less what an earlier, maybe partial, download already
put in the target directory), plus a headroom margin, with the free bytes of
the mount the target lies on (df on its nearest existing parent). When it does
not fit, every other mount is considered and either listed as an alternative
(it has room: whether this run may write there, and a tmpfs named as what it is,
RAM-backed and volatile) or set aside with the reason (too small, outside the
allowed roots and how to allow it, a system or pseudo filesystem), so "no
alternative" always comes with why.

What a directory already holds is measured as the disk counts it (`du`'s
allocated bytes, the unit df counts in), not by file sizes: a sparse or
compressed file takes other than its size, and only what it takes is freed or
still needed.
"""

from __future__ import annotations

import posixpath
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from .cluster.names import node_names
from .context import ToolContext
from .errors import HostCommandFailed, InvalidToolInput
from .hosts import Host
from .hub import RepoListing, host_hub_endpoint, list_repo
from .inputs import HostPath, RepoId, Revision
from .parsers.df import DF_ARGS, PSEUDO_FSTYPES, DfRow, parse_df
from .probing import probe
from .registry import tool

GIB = 1024**3
# Where `hf download --local-dir` keeps what it has not finished: resumed on the next run, so it counts as there.
PARTIAL_DIR = ".cache/huggingface/download"
_GLOB = re.compile(r"[A-Za-z0-9._/*?\[\]{},-]+")


def check_glob(value: str) -> str:
    if not _GLOB.fullmatch(value) or ".." in value.split("/"):
        raise ValueError(f"{value!r} is not a file pattern: use letters, digits, . _ - / and the wildcards * ? [ ]")
    return value


GlobPattern = Annotated[
    str, AfterValidator(check_glob), Field(description="A glob over repo file paths, as hf --include takes")
]


def human_bytes(n: int | float) -> str:
    """Binary units the way `df -h` prints them (1.5T, 970G, 3.2M)."""
    value = float(n)
    for unit in ("B", "K", "M", "G", "T", "P"):
        if abs(value) < 1024 or unit == "P":
            if unit == "B":
                return f"{int(value)}B"
            return f"{value:.1f}{unit}" if abs(value) < 10 else f"{value:.0f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


class Mount(BaseModel):
    """One mounted filesystem as df sees it."""

    model_config = ConfigDict(frozen=True)

    mount_point: str
    source: str
    fstype: str
    size_bytes: int
    used_bytes: int
    free_bytes: int = Field(description="df's Avail: what can still be written")
    use_percent: int | None
    size: str
    free: str


def _mount(row: DfRow) -> Mount:
    return Mount(
        mount_point=row.mount_point,
        source=row.source,
        fstype=row.fstype,
        size_bytes=row.size_bytes,
        used_bytes=row.used_bytes,
        free_bytes=row.avail_bytes,
        use_percent=row.use_percent,
        size=human_bytes(row.size_bytes),
        free=human_bytes(row.avail_bytes),
    )


def list_mounts(host: Host) -> list[Mount]:
    done = probe(host, list(DF_ARGS))
    # df exits 1 when one mount cannot be read but still lists the others.
    return [_mount(row) for row in parse_df(done.stdout)] if done.stdout.strip() else []


def _ancestors(path: str) -> list[str]:
    chain = [path]
    while path not in ("/", ""):
        path = posixpath.dirname(path)
        chain.append(path or "/")
    return chain


# The path words arrive as "$@": nothing is interpolated into the script.
_DF_NEAREST = 'for p do if [ -e "$p" ]; then printf "%s\\n" "$p"; exec "$0" -B1 --output=source,fstype,size,used,avail,pcent,target -- "$p"; fi; done; exit 3'


def mount_of(host: Host, path: str) -> tuple[Mount, str]:
    """The mount `path` is (or would be) on, and the existing path df was asked about (its nearest parent)."""
    done = probe(host, ["sh", "-c", _DF_NEAREST, "df", *_ancestors(path)])
    measured, _, table = done.stdout.partition("\n")
    rows = parse_df(table) if done.ok else []
    if not rows:
        raise HostCommandFailed(
            f"df could not measure {path} on {host.spec} (exit {done.exit_code}): {(done.stderr or done.stdout).strip()[-300:]}",
            remedy="check the path and that df works on the host",
            details={"path": path},
        )
    return _mount(rows[0]), measured.strip()


def mount_for(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount an existing absolute path lies on, from a df listing (the deepest mount point holding it)."""
    holding = [m for m in mounts if path == m.mount_point or path.startswith(m.mount_point.rstrip("/") + "/")]
    return max(holding, key=lambda m: len(m.mount_point), default=None)


# -- what a target directory already holds -----------------------------------------------------------


def space_on_disk(host: Host, directory: str) -> dict[str, int] | None:
    """Relative path -> bytes it takes on the disk (du: every file and subdirectory under `directory`, each
    directory with what it holds); None when `directory` does not exist."""
    done = probe(host, ["du", "-a", "-B1", "--", directory])
    if not done.ok and not done.stdout:
        if not host.exists(directory):
            return None
        raise HostCommandFailed(
            f"could not measure {directory} on {host.spec}: {done.stderr.strip()[-300:]}",
            remedy="check the directory's permissions",
            details={"path": directory},
        )
    prefix = directory.rstrip("/") + "/"
    taken = {}
    for line in done.stdout.splitlines():
        size, _, path = line.partition("\t")
        if size.isdigit() and path.startswith(prefix):
            taken[path[len(prefix) :]] = int(size)
    return taken


# -- the tool -----------------------------------------------------------------------------------------


class CheckDiskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo_id: RepoId
    revision: Revision = "main"
    include: list[GlobPattern] = Field(
        default_factory=list, description="Only files matching one of these (hf --include)"
    )
    exclude: list[GlobPattern] = Field(default_factory=list, description="Skip files matching these (hf --exclude)")
    target: HostPath = Field(description="The directory the download goes to")
    margin_fraction: float = Field(default=0.05, ge=0, le=1, description="Headroom as a share of the download")
    margin_min_bytes: int = Field(default=2 * GIB, ge=0, description="Headroom at least this")


class MountOption(BaseModel):
    model_config = ConfigDict(frozen=True)

    mount: Mount
    allowed: bool = Field(description="Whether this run may write there (under an allowed root)")
    ram_backed: bool = Field(default=False, description="A tmpfs: it takes the host's memory and is lost at reboot")
    target: str | None = Field(default=None, description="A download directory there this run may use, when allowed")
    why: str = Field(default="", description="What to know before using it, and how to allow it when not allowed")


class MountSetAside(BaseModel):
    """A mount check_disk considered and did not offer, with the reason."""

    model_config = ConfigDict(frozen=True)

    mount_point: str
    fstype: str
    free: str
    reason: Literal["too_small", "system"]
    why: str


class DiskCheck(BaseModel):
    repo_id: str
    revision: str
    sha: str
    target: str = Field(description="Absolute target path on the host")
    measured_path: str = Field(description="The existing path df measured: the target or its nearest parent")
    mount: Mount
    files: int
    download_bytes: int = Field(description="All selected files, as the Hub declares them")
    download: str
    present_bytes: int = Field(description="Already in the target: complete files and partial downloads")
    present_files: int
    partial_bytes: int = Field(description="Of present_bytes, unfinished downloads hf will resume")
    remaining_bytes: int
    remaining: str
    margin_bytes: int
    needed_bytes: int = Field(description="remaining_bytes + margin_bytes: what the mount must have free")
    needed: str
    free_bytes: int
    free: str
    verdict: Literal["fits", "does_not_fit"]
    shortfall_bytes: int = Field(description="needed - free when it does not fit, else 0")
    shortfall: str
    alternatives: list[MountOption] = Field(description="Other mounts with room for it, when it does not fit")
    set_aside: list[MountSetAside] = Field(
        default_factory=list,
        description="When it does not fit: the other mounts considered and why each is no alternative",
    )
    notes: list[str]
    summary: str
    nodes: list[str] = Field(
        default_factory=list, description="A host group: each node's own check in a line, rank 0 first"
    )


def _present(listing: RepoListing, taken: dict[str, int] | None) -> tuple[int, int, int]:
    """(bytes the listed files already take in the target, how many are there, bytes of partial downloads)."""
    if not taken:
        return 0, 0, 0
    present = count = 0
    for f in listing.files:
        if f.path in taken:
            # Never count more than the file will be (a disk allocates in blocks).
            present += min(f.size, taken[f.path])
            count += 1
    partial = sum(
        size for rel, size in taken.items() if rel.startswith(PARTIAL_DIR + "/") and rel.endswith(".incomplete")
    )
    total = listing.total_bytes
    partial = min(partial, max(0, total - present))
    return present + partial, count, partial


def disk_view(check: DiskCheck) -> dict[str, Any]:
    """The check as a planner needs it: the verdict, an alternative mount with its terms, what was set aside."""
    # The summary says the sizes and the mount in words; byte counts, the sha and what the caller passed stay in the
    # transcript.
    data = check.model_dump(mode="json", include={"verdict", "needed", "shortfall", "summary"})
    if not check.shortfall_bytes:
        del data["shortfall"]
    data["alternatives"] = [
        {
            "mount_point": a.mount.mount_point,
            "fstype": a.mount.fstype,
            "free": a.mount.free,
            "allowed": a.allowed,
            "ram_backed": a.ram_backed or None,
            "target": a.target,
            "why": a.why or None,
        }
        for a in check.alternatives
    ]
    # System filesystems (a real host lists many) are named, not explained one by one.
    data["set_aside"] = [m.model_dump(mode="json") for m in check.set_aside if m.reason != "system"]
    data["system_mounts_set_aside"] = [m.mount_point for m in check.set_aside if m.reason == "system"]
    data["notes"] = check.notes
    if check.nodes:
        data["nodes"] = check.nodes
    return data


@tool("check_disk", mutates=False, view=disk_view)
def check_disk(ctx: ToolContext, args: CheckDiskArgs) -> DiskCheck:
    """Whether a Hub repo fits in `target`: its size from the Hub, what the target already holds, headroom, the
    mount's free bytes, the verdict, and the other mounts, each with why it can or cannot be used.
    """
    own = _check_one(ctx, args)
    if not ctx.peers or _under(own.target, ctx.group_shared_root):
        return own
    return _check_every_node(ctx, args, own)


def _under(path: str, root: str | None) -> bool:
    return root is not None and (path == root or path.startswith(root.rstrip("/") + "/"))


def _check_every_node(ctx: ToolContext, args: CheckDiskArgs, own: DiskCheck) -> DiskCheck:
    """A host group: start_download fetches on every node, so the repo must fit on each. The verdict is the
    group's; where another node lacks room, the check is that node's, named; an alternative mount of rank 0's is
    offered only where the same directory has room on every other node too."""

    def on(node: ToolContext, target: str) -> DiskCheck:
        return _check_one(node, args.model_copy(update={"target": target}))

    names = node_names(ctx.nodes)
    checks = [own, *(on(node, own.target) for node in ctx.peers)]
    lines = [f"{name}: {check.summary}" for name, check in zip(names, checks, strict=True)]
    if all(check.verdict == "fits" for check in checks):
        return own.model_copy(update={"nodes": lines})
    alternatives = [
        alt
        for alt in own.alternatives
        if alt.target is None or all(on(node, alt.target).verdict == "fits" for node in ctx.peers)
    ]
    # Rank 0's own shortfall first (its alternatives are its mounts); else the first other node without room.
    rank = 0 if own.verdict != "fits" else next(i for i, check in enumerate(checks) if check.verdict != "fits")
    worst = checks[rank]
    summary = f"on {names[rank]}: {worst.summary}"
    if rank:
        summary += f"; the download goes to every node of the group, and {names[rank]} has no room for it"
    return worst.model_copy(
        update={
            "target": own.target,  # the directory as rank 0 names it, as start_download takes it
            "verdict": "does_not_fit",
            "alternatives": alternatives,
            "set_aside": own.set_aside,
            "summary": summary,
            "nodes": lines,
        }
    )


def _check_one(ctx: ToolContext, args: CheckDiskArgs) -> DiskCheck:
    """check_disk on one host."""
    target = ctx.writable(args.target)
    if target in ("/", ctx.home):
        raise InvalidToolInput(
            f"{target} is not a download directory: give one for this repo (e.g. {ctx.home}/models/NAME)",
            remedy="pass a target directory of its own",
            details={"target": target},
        )
    host = ctx.host
    listing = list_repo(args.repo_id, endpoint=host_hub_endpoint(host), revision=args.revision, token=ctx.hub_token)
    listing = listing.selected(args.include, args.exclude)
    mount, measured = mount_of(host, target)
    present, present_files, partial = _present(listing, space_on_disk(host, target) if measured == target else None)

    total = listing.total_bytes
    remaining = max(0, total - present)
    margin = max(int(total * args.margin_fraction), args.margin_min_bytes) if remaining else 0
    needed = remaining + margin
    fits = needed <= mount.free_bytes
    shortfall = 0 if fits else needed - mount.free_bytes

    alternatives: list[MountOption] = []
    set_aside: list[MountSetAside] = []
    if not fits:
        name = posixpath.basename(target.rstrip("/")) or args.repo_id.split("/")[-1]
        alternatives, set_aside = _other_mounts(ctx, mount, total + margin, name)

    notes: list[str] = []
    if not listing.files:
        notes.append(f"no file of {args.repo_id}@{args.revision} matches the include/exclude patterns")
    if listing.gated:
        notes.append(f"{args.repo_id} is gated: the download needs a token with access")
    summary = (
        f"{args.repo_id}@{args.revision}: {human_bytes(total)} in {len(listing.files)} files, "
        f"{human_bytes(present)} already in {target}, needs {human_bytes(needed)} "
        f"(incl. {human_bytes(margin)} headroom); {mount.mount_point} has {mount.free} free: "
        + ("fits" if fits else f"does NOT fit, short by {human_bytes(shortfall)}")
    )
    if alternatives:
        summary += "; room on " + ", ".join(
            f"{a.mount.mount_point} ({a.mount.free} free"
            + (", tmpfs: RAM-backed, volatile" if a.ram_backed else "")
            + ("" if a.allowed else ", outside the allowed roots")
            + ")"
            for a in alternatives
        )
    elif not fits:
        summary += "; no other mount has room"
    shown = [m for m in set_aside if m.reason != "system"]
    if shown:
        summary += "; set aside: " + "; ".join(f"{m.mount_point}: {m.why}" for m in shown)
    return DiskCheck(
        repo_id=args.repo_id,
        revision=args.revision,
        sha=listing.sha,
        target=target,
        measured_path=measured,
        mount=mount,
        files=len(listing.files),
        download_bytes=total,
        download=human_bytes(total),
        present_bytes=present,
        present_files=present_files,
        partial_bytes=partial,
        remaining_bytes=remaining,
        remaining=human_bytes(remaining),
        margin_bytes=margin,
        needed_bytes=needed,
        needed=human_bytes(needed),
        free_bytes=mount.free_bytes,
        free=mount.free,
        verdict="fits" if fits else "does_not_fit",
        shortfall_bytes=shortfall,
        shortfall=human_bytes(shortfall),
        alternatives=alternatives,
        set_aside=set_aside,
        notes=notes,
        summary=summary,
    )


# System mounts: never a place for a download, whatever their free space (tmpfs at /run is RAM too, but the system's).
_SYSTEM_PREFIXES = ("/boot", "/dev", "/proc", "/sys", "/run", "/snap", "/efi", "/var/lib/docker", "/var/lib/containers")
_RAM_FSTYPES = ("tmpfs", "ramfs")


def _is_system(mount: Mount) -> bool:
    if mount.fstype in _RAM_FSTYPES:
        # /dev/shm is the one tmpfs under a system prefix that is meant for data.
        return mount.mount_point != "/dev/shm" and mount.mount_point.startswith(_SYSTEM_PREFIXES)
    return mount.fstype in PSEUDO_FSTYPES or mount.mount_point.startswith(_SYSTEM_PREFIXES)


def _allowed_target(ctx: ToolContext, mount: Mount, mounts: list[Mount], name: str) -> str | None:
    """A download directory on `mount` under an allowed root: the mount itself, or an allowed root on it."""
    try:
        return posixpath.join(ctx.writable(mount.mount_point), "models", name)
    except InvalidToolInput:
        pass
    for root in ctx.allowed_roots:
        holding = mount_for(root, mounts)
        if holding is not None and holding.mount_point == mount.mount_point:
            return posixpath.join(root, "models", name)
    return None


def _other_mounts(
    ctx: ToolContext, mount: Mount, needed: int, name: str
) -> tuple[list[MountOption], list[MountSetAside]]:
    """Every mount but the target's: an alternative (it has room), or set aside with the reason."""
    mounts = list_mounts(ctx.host)
    options, aside = [], []
    roots = ", ".join(ctx.allowed_roots)
    for m in mounts:
        if m.mount_point == mount.mount_point:
            continue
        if _is_system(m):
            aside.append(
                MountSetAside(
                    mount_point=m.mount_point,
                    fstype=m.fstype,
                    free=m.free,
                    reason="system",
                    why=f"a system or pseudo filesystem ({m.fstype}): not a place for models",
                )
            )
            continue
        ram = m.fstype in _RAM_FSTYPES
        ram_note = (
            (
                "a tmpfs: RAM-backed and volatile (what is written there takes the host's memory, which the "
                "server may need, and is lost at reboot)"
            )
            if ram
            else ""
        )
        target = _allowed_target(ctx, m, mounts, name)
        allow = (
            ""
            if target
            else f"outside the roots this run may write in ({roots}): rerun with --allow-root {m.mount_point} to allow it"
        )
        if m.free_bytes < needed:
            why = f"too small: {m.free} free, the download needs {human_bytes(needed)}"
            aside.append(
                MountSetAside(
                    mount_point=m.mount_point,
                    fstype=m.fstype,
                    free=m.free,
                    reason="too_small",
                    why="; ".join(w for w in (why, ram_note) if w),
                )
            )
            continue
        options.append(
            MountOption(
                mount=m,
                allowed=target is not None,
                ram_backed=ram,
                target=target,
                why="; ".join(w for w in (ram_note, allow) if w),
            )
        )
    return options, aside
