"""A simulated host's process table: its own processes, not every process of the machine that runs it.

Simulated hosts share this machine's /proc with one another (and with this machine's own work): a program on one
that lists /proc (a process scan, `ps`) would see every world's servers. A program the host's python runs lists
only the host's: those whose environment carries the world's root (every command on the host runs with it: its
state's env) and those the world counts as holding its GPUs (a foreign process a fault placed there). Reading one
process's files by pid (/proc/PID/cmdline) still works for any pid, as on a real host.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..world.layout import ROOT_VARIABLE


def world_pids(root: str) -> set[str]:
    """The pids (as /proc names them) of the world whose root is `root`."""
    return world_processes(root) | _gpu_holders(root)


def world_processes(root: str) -> set[str]:
    """The pids of the processes that run on the world's host: those whose environment carries its root (every
    command of the host's). A foreign GPU holder a fault registered is not one (it is the world's own process)."""
    marker = f"{ROOT_VARIABLE}={root}".encode() + b"\0"
    pids = set()
    for name in _listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if marker in f.read() + b"\0":
                    pids.add(name)
        except OSError:
            continue
    return pids


def _gpu_holders(root: str) -> set[str]:
    """Pids the world's GPU registry names (sim/world/gpu_registry.py: one JSON file per holding process)."""
    holders = set()
    for entry in Path(root, ".sim", "gpu").glob("*.json"):
        try:
            holders.add(str(int(json.loads(entry.read_text())["pid"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return holders


_listdir = os.listdir


def install() -> None:
    """Make os.listdir('/proc') in this process list the host's processes only (a no-op off a simulated host)."""
    root = os.environ.get(ROOT_VARIABLE)
    if not root:
        return

    def listdir(path: str | bytes | os.PathLike[str] | os.PathLike[bytes] | None = ".") -> list[Any]:
        names = _listdir(path)
        if path not in ("/proc", b"/proc", "/proc/", b"/proc/"):
            return names
        mine = world_pids(root)
        own = [n for n in names if not (n.isdigit() if isinstance(n, str) else n.isdigit()) or _text(n) in mine]
        return own

    os.listdir = listdir  # type: ignore[assignment]


def _text(name: str | bytes) -> str:
    return name.decode() if isinstance(name, bytes) else name
