"""The simulated host's state that graders compare: its files before and after, and what still runs on it.

A snapshot lists every file under the host's tree (real paths; a sim host's paths
are real paths inside its tree) with its size, leaving out the world's own
bookkeeping (`.sim/`: ports and GPU registries, counters). Live servers are the
processes the world's port and GPU registries name that are still alive, except
the world's own squatters (faults register them under the world's process).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from specops.sim.world.gpu_registry import live_holdings
from specops.sim.world.layout import WorldLayout
from specops.sim.world.ports import read_entry
from specops.sim.world.processes import pid_alive


class HostSnapshot(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: dict[str, int]  # real path -> size in bytes

    @classmethod
    def take(cls, layout: WorldLayout) -> HostSnapshot:
        root, skip = Path(layout.root), layout.sim_dir
        files: dict[str, int] = {}
        for dirpath, dirnames, filenames in os.walk(root):
            if Path(dirpath) == skip:
                dirnames[:] = []
                continue
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    files[path] = os.lstat(path).st_size
                except OSError:
                    continue
        return cls(files=files)

    @classmethod
    def take_all(cls, layouts: Sequence[WorldLayout]) -> HostSnapshot:
        """Every node of a simulated cluster at once: their trees lie apart, so their real paths never clash."""
        files: dict[str, int] = {}
        for layout in layouts:
            files.update(cls.take(layout).files)
        return cls(files=files)


class LiveServer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pid: int
    port: int | None
    command: str = ""


def live_servers(layout: WorldLayout, world_pid: int) -> list[LiveServer]:
    """Servers (and GPU holders) still alive on the host, not counting the world's own planted processes."""
    found: dict[int, LiveServer] = {}
    if layout.ports_dir.is_dir():
        for entry_file in sorted(layout.ports_dir.glob("*.json")):
            if not entry_file.stem.isdigit():
                continue
            entry = read_entry(layout, int(entry_file.stem))
            if entry is not None and entry.pid != world_pid and pid_alive(entry.pid):
                found[entry.pid] = LiveServer(pid=entry.pid, port=int(entry_file.stem), command=entry.command[:300])
    for holding in live_holdings(layout, exclude_pid=world_pid):
        found.setdefault(holding.pid, LiveServer(pid=holding.pid, port=None, command=holding.process_name))
    return sorted(found.values(), key=lambda s: s.pid)
