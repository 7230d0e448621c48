"""What a file on a virtual mount takes on its disk: byte_scale times the bytes it stores, as df counts them.

A virtual mount stores 1/byte_scale of each file while its df counts the full size (usage.py). A program asking
how much space files take sees the disk df sees: `du` (commands/du.py) and st_blocks from os.stat in the programs
the host's python runs (this hook) count byte_scale times what is stored, as a real disk's allocation is what its
df counts. A file's size (st_size) stays the bytes it holds, so programs that read files or resume them (hf's
.incomplete files) see them as they are. Off a virtual mount nothing changes.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import Any

from ...world.layout import ROOT_VARIABLE
from .virtual_mounts import VirtualMounts

BLOCK_BYTES = 512  # the unit of st_blocks
_HIDDEN_FIELDS = (
    "st_atime",
    "st_mtime",
    "st_ctime",
    "st_atime_ns",
    "st_mtime_ns",
    "st_ctime_ns",
    "st_blksize",
    "st_blocks",
    "st_rdev",
)
_MARKER = "specops_allocation"  # set on the os.stat install() puts in place: it is not installed twice


def allocated_blocks(stored_bytes: int, byte_scale: int) -> int:
    """512-byte blocks a virtual mount counts for a file storing `stored_bytes`."""
    return -(-stored_bytes * byte_scale // BLOCK_BYTES)


def with_blocks(st: os.stat_result, blocks: int) -> os.stat_result:
    hidden = {name: getattr(st, name) for name in _HIDDEN_FIELDS if hasattr(st, name)}
    return os.stat_result(tuple(st), {**hidden, "st_blocks": blocks})


class AllocationView:
    """Stat results as the world's disks count them."""

    def __init__(self, root: str) -> None:
        self.mounts = VirtualMounts(root)

    def byte_scale_at(self, path: str) -> int:
        """Bytes the disk counts per byte stored at `path`: the world's byte_scale on a virtual mount, else 1."""
        found = self.mounts.holding(path)
        return int(found[0].byte_scale) if found else 1

    def present(self, st: os.stat_result, path: str) -> os.stat_result:
        """`st` (of `path`) with the blocks the disk counts: scaled for a regular file on a virtual mount."""
        if not stat.S_ISREG(st.st_mode):
            return st
        scale = self.byte_scale_at(path)
        return st if scale == 1 else with_blocks(st, allocated_blocks(st.st_size, scale))


def install() -> None:
    """Make os.stat and os.lstat in this process count blocks as the world's disks do (a no-op off a sim host)."""
    root = os.environ.get(ROOT_VARIABLE)
    if not root or getattr(os.stat, _MARKER, False):
        return
    view = AllocationView(root)
    real_stat, real_lstat = os.stat, os.lstat
    inside = threading.local()  # finding the mount resolves the path, which stats it: those stats are the kernel's

    def presented(call: Any) -> Any:
        def stat_as_host_counts(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            st: os.stat_result = call(path, *args, **kwargs)
            if args or kwargs.get("dir_fd") is not None or not isinstance(path, (str, bytes, os.PathLike)):
                return st  # a descriptor or a path relative to one: left as the kernel says
            if getattr(inside, "active", False):
                return st
            inside.active = True
            try:
                return view.present(st, os.fsdecode(path))
            finally:
                inside.active = False

        setattr(stat_as_host_counts, _MARKER, True)
        return stat_as_host_counts

    os.stat, os.lstat = presented(real_stat), presented(real_lstat)
