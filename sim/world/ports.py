"""The host's port registry: host ports are virtual, so many sim hosts run side by side.

`layout.ports_dir/<port>.json` says which real loopback port stands for a host port and who holds it, in the port
map convention every Host backend reads (tools/hosts/port_map.py): the world's environment names the directory in
SPECOPS_PORT_MAP. An entry whose pid is gone is stale and does not hold the port.
"""

from __future__ import annotations

import socket
from pathlib import Path

from specops.tools.hosts import port_map
from specops.tools.hosts.port_map import PortEntry

from .layout import WorldLayout

__all__ = [
    "PortEntry",
    "PortNotListening",
    "bind_loopback",
    "entry_path",
    "read_entry",
    "remove_entry",
    "resolve_port",
    "write_entry",
]


class PortNotListening(LookupError):
    """No live process serves that host port (connection refused on a real host)."""


def entry_path(layout: WorldLayout, port: int) -> Path:
    return port_map.entry_path(layout.ports_dir, port)


def read_entry(layout: WorldLayout, port: int) -> PortEntry | None:
    """The live entry for a host port, or None when free (no entry, or its process is gone)."""
    return port_map.read_entry(layout.ports_dir, port)


def resolve_port(layout: WorldLayout, port: int) -> int:
    """The real loopback port that serves host port `port`. Raises PortNotListening."""
    entry = read_entry(layout, port)
    if entry is None or entry.real_port is None:
        raise PortNotListening(f"nothing listens on port {port} of the sim host at {layout.root}")
    return entry.real_port


def write_entry(layout: WorldLayout, port: int, entry: PortEntry) -> None:
    port_map.write_entry(layout.ports_dir, port, entry)


def remove_entry(layout: WorldLayout, port: int, pid: int) -> None:
    """Remove the entry only if this process still owns it."""
    port_map.remove_entry(layout.ports_dir, port, pid)


def bind_loopback() -> socket.socket:
    """A listening socket on a free real loopback port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    sock.setblocking(False)
    return sock
