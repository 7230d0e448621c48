"""Ports of hosts that share one machine's loopback: the convention every Host backend and the gateway read.

On a real host a server's port is itself. Where several hosts share one machine's loopback (simulated hosts side
by side), each host's environment names a directory, $SPECOPS_PORT_MAP, holding `<port>.json` =
{"pid", "real_port", "owner", "command"}: the loopback port that serves the host's port and the process that holds
it (an entry whose process is gone holds nothing). A program that binds ports of its own choosing on such a host
(the gateway, tools/gateway) claims its ports there the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

PORT_MAP_VARIABLE = "SPECOPS_PORT_MAP"


class PortEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pid: int
    real_port: int | None = None
    owner: str
    command: str = ""


def entry_path(map_dir: str | Path, port: int) -> Path:
    return Path(map_dir) / f"{port}.json"


def pid_alive(pid: int) -> bool:
    """Whether the process exists and has not exited: a zombie still answers kill(0), but holds nothing."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def read_entry(map_dir: str | Path, port: int) -> PortEntry | None:
    """The live entry for a host port, or None when it is free (no entry, or its process is gone)."""
    try:
        entry = PortEntry.model_validate_json(entry_path(map_dir, port).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return entry if pid_alive(entry.pid) else None


def write_entry(map_dir: str | Path, port: int, entry: PortEntry) -> None:
    path = entry_path(map_dir, port)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(entry.model_dump_json())
    tmp.replace(path)


def remove_entry(map_dir: str | Path, port: int, pid: int) -> None:
    """Remove the entry only if process `pid` still holds it."""
    path = entry_path(map_dir, port)
    try:
        if json.loads(path.read_text()).get("pid") == pid:
            path.unlink()
    except (FileNotFoundError, ValueError):
        pass
