"""A virtual mount fills up for real: writes past its modelled free space fail with ENOSPC.

A virtual mount is a directory standing for a big disk (usage.py): 8 MiB stored
there count as 8 GiB. Without a guard, a download into a mount that `df` shows
as full would still succeed, and an agent that never checked the disk would go
unpunished. So every Python process a sim host runs (`python`, `hf`: the
commands add guard_site/ to PYTHONPATH, whose sitecustomize calls `install()`)
opens files through a guard: a file opened for writing under a virtual mount
counts what it writes, times byte_scale, against the mount's free space, and a
write that does not fit raises OSError(ENOSPC, "No space left on device") as
the kernel would. Real mounts (a tmpfs) need no guard: the kernel does it.

The mount's usage is re-read from the tree every SCAN_EVERY_BYTES written (and
on the first write), so parallel writers (hf downloads several files at once)
see each other's progress; between scans a file counts its own writes.
Start-up stays cheap: only stdlib is imported until a write lands in the tree.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from typing import Any

# Not from ..commands: importing that package registers a command's clock release at exit, which a program
# (on the host's clock, host_time.py) must never run.
from ...world.layout import ROOT_VARIABLE
from .virtual_mounts import VirtualMounts

SCAN_EVERY_BYTES = 256 * 1024  # real bytes: 256 MiB modelled at byte_scale 1024
_WRITE_MODES = frozenset("wax+")
_original_open = io.open
GUARD_MARKER = "specops_guard"  # set on the open that install() puts in place: it is not installed twice


class DiskFullGuard:
    """The accounting of one virtual mount, for one open file."""

    def __init__(self, world: Any, mount: Any, path: str) -> None:
        self.world, self.mount, self.path = world, mount, path
        self.used_at_scan = 0
        self.written_since_scan = SCAN_EVERY_BYTES  # scan before the first write

    def _scan(self) -> None:
        from .usage import mount_usage

        self.used_at_scan = mount_usage(self.world, self.mount).used_bytes
        self.written_since_scan = 0

    def reserve(self, size: int, flush: Any) -> None:
        if self.written_since_scan >= SCAN_EVERY_BYTES:
            flush()  # our own buffered bytes count in the scan, not twice
            self._scan()
        used = self.used_at_scan + (self.written_since_scan + size) * self.world.byte_scale
        if used > self.mount.size_bytes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.path)
        self.written_since_scan += size


class GuardedFile:
    """A file object whose writes go through a DiskFullGuard; everything else is the file's own."""

    def __init__(self, file: Any, guard: DiskFullGuard) -> None:
        self._file = file
        self._guard = guard

    def write(self, data: Any) -> int:
        size = len(data.encode()) if isinstance(data, str) else memoryview(data).nbytes
        self._guard.reserve(size, self._file.flush)
        written: int = self._file.write(data)
        return written

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __enter__(self) -> GuardedFile:
        self._file.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._file.__exit__(*exc)

    def __iter__(self) -> Any:
        return iter(self._file)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def install() -> None:
    """Guard this process's writes, when it belongs to a sim host."""
    root = os.environ.get(ROOT_VARIABLE)
    if not root or getattr(io.open, GUARD_MARKER, False):
        return
    world = VirtualMounts(root)

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = _original_open(file, mode, *args, **kwargs)
        if not isinstance(file, (str, bytes, os.PathLike)) or not _WRITE_MODES & set(mode):
            return handle
        path = os.fsdecode(file)
        found = world.holding(path)
        if found is None:
            return handle
        return GuardedFile(handle, DiskFullGuard(found[0], found[1], path))

    setattr(guarded_open, GUARD_MARKER, True)
    builtins.open = io.open = guarded_open


GUARD_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard_site")


def first_on_pythonpath(env: dict[str, str], directory: str) -> dict[str, str]:
    """`env` with `directory` first on PYTHONPATH (and nowhere else on it)."""
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != directory]
    return {**env, "PYTHONPATH": os.pathsep.join([directory, *rest])}


def guarded_environment(env: dict[str, str]) -> dict[str, str]:
    """`env` with guard_site first on PYTHONPATH, so the process it starts installs the guard."""
    return first_on_pythonpath(env, GUARD_SITE)
