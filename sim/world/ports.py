"""The host's port registry: host ports are virtual, so many sim hosts run side by side.

`layout.ports_dir/<port>.json` = {"pid", "real_port", "owner", "command"} says which
real loopback port stands for a host port and who holds it. An entry whose pid is
gone is stale and does not hold the port. This is the port map every Host backend
reads (tools/hosts/port_map.py), named to them by the world's environment
(SPECOPS_PORT_MAP); it is kept here, not imported from there, because the host's
short-lived commands (`ss`, `nvidia-smi`) read it and must start without the tools.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .layout import WorldLayout
from .processes import pid_alive


class PortEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pid: int
    real_port: int | None = None
    owner: str
    command: str = ""


class PortNotListening(LookupError):
    """No live process serves that host port (connection refused on a real host)."""


def entry_path(layout: WorldLayout, port: int) -> Path:
    return layout.ports_dir / f"{port}.json"


def read_entry(layout: WorldLayout, port: int) -> PortEntry | None:
    """The live entry for a host port, or None when free (no entry, or its process is gone)."""
    try:
        entry = PortEntry.model_validate_json(entry_path(layout, port).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return entry if pid_alive(entry.pid) else None


def resolve_port(layout: WorldLayout, port: int) -> int:
    """The real loopback port that serves host port `port`. Raises PortNotListening."""
    entry = read_entry(layout, port)
    if entry is None or entry.real_port is None:
        raise PortNotListening(f"nothing listens on port {port} of the sim host at {layout.root}")
    return entry.real_port


def write_entry(layout: WorldLayout, port: int, entry: PortEntry) -> None:
    path = entry_path(layout, port)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(entry.model_dump_json())
    tmp.replace(path)


def remove_entry(layout: WorldLayout, port: int, pid: int) -> None:
    """Remove the entry only if this process still owns it."""
    path = entry_path(layout, port)
    try:
        if json.loads(path.read_text()).get("pid") == pid:
            path.unlink()
    except (FileNotFoundError, ValueError):
        pass


def bind_loopback() -> socket.socket:
    """A listening socket on a free real loopback port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.setblocking(False)
    return sock
