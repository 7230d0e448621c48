"""How full each mount of a sim host is.

A virtual mount is a plain directory standing for a big disk: its size is the
profile's, and what is stored under it counts `byte_scale` times (an 8 MiB
stand-in for an 8 GiB shard counts 8 GiB). A real mount is a real filesystem
(a small tmpfs) whose own figures are reported, so running out of it is a real
ENOSPC.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: these run in every sim command, which must start fast
    from ...world.state import MountState, WorldState
    from ...world.state_view import WorldStateView


@dataclass(frozen=True)
class MountUsage:
    mount: MountState
    size_bytes: int
    used_bytes: int
    avail_bytes: int
    inodes_total: int
    inodes_used: int

    @property
    def inodes_free(self) -> int:
        return max(0, self.inodes_total - self.inodes_used)


def apparent_bytes(top: Path, excluded: set[Path]) -> tuple[int, int]:
    """(apparent bytes, entries) of regular files under `top`, each inode once, never following links.

    `excluded` directories (the simulator's own `.sim`, nested mounts) are skipped.
    """
    total = 0
    entries = 0
    seen: set[tuple[int, int]] = set()
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            scan = os.scandir(directory)
        except OSError:
            continue
        with scan:
            for entry in scan:
                entries += 1
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if Path(entry.path) not in excluded:
                            stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        if (st.st_dev, st.st_ino) not in seen:
                            seen.add((st.st_dev, st.st_ino))
                            total += st.st_size
                except OSError:
                    continue  # vanished while we looked (a download renaming its temp file)
    return total, entries


def excluded_dirs(world: WorldState | WorldStateView, mount: MountState) -> set[Path]:
    """What a mount's accounting skips: the simulator's bookkeeping and the mounts nested in it."""
    own = Path(mount.path)
    nested = {Path(m.path) for m in world.mounts if m is not mount and Path(m.path).is_relative_to(own)}
    return nested | {world.layout.sim_dir}


def stored_bytes(world: WorldState | WorldStateView, mount: MountState) -> int:
    return apparent_bytes(Path(mount.path), excluded_dirs(world, mount))[0]


# Inode figures for virtual mounts: mkfs's default of one inode per 16 KiB, and a base
# population of system files proportional to what the disk holds (about one per 256 KiB).
_BYTES_PER_INODE = 16384
_BYTES_PER_FILE = 262144


def mount_usage(world: WorldState | WorldStateView, mount: MountState) -> MountUsage:
    if mount.kind == "real":
        st = os.statvfs(mount.path)
        return MountUsage(
            mount=mount,
            size_bytes=st.f_blocks * st.f_frsize,
            used_bytes=(st.f_blocks - st.f_bfree) * st.f_frsize,
            avail_bytes=st.f_bavail * st.f_frsize,
            inodes_total=st.f_files,
            inodes_used=st.f_files - st.f_ffree,
        )
    stored, entries = apparent_bytes(Path(mount.path), excluded_dirs(world, mount))
    grown = (stored - mount.stored_bytes_at_start) * world.byte_scale
    used = min(mount.size_bytes, max(0, mount.used_bytes_at_start + grown))
    inodes_total = mount.size_bytes // _BYTES_PER_INODE
    return MountUsage(
        mount=mount,
        size_bytes=mount.size_bytes,
        used_bytes=used,
        avail_bytes=mount.size_bytes - used,
        inodes_total=inodes_total,
        inodes_used=min(inodes_total, mount.used_bytes_at_start // _BYTES_PER_FILE + entries),
    )


def mount_of(world: WorldState | WorldStateView, path: str) -> MountState:
    """The mount a path lies on: the deepest mount whose directory holds realpath(path).

    A path outside the root is on `/`: the host has nothing else.
    """
    real = Path(os.path.realpath(path))
    best: MountState | None = None
    best_depth = -1
    for mount in world.mounts:
        top = Path(os.path.realpath(mount.path))
        if real == top or real.is_relative_to(top):
            depth = len(top.parts)
            if depth > best_depth:
                best, best_depth = mount, depth
    if best is None:
        best = next(m for m in world.mounts if m.mount_point == "/")
    return best
