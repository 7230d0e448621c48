"""The ports the router binds: the ones asked for, or free loopback ports on a host with a port map.

A host that shares one machine's loopback with others (a simulated one) maps
its ports (tools/hosts/port_map.py): its servers claim a host port in the map
and serve it from a free real port, and `Host.forward`/`port_on_host` look the
port up there. The router is a real program that knows nothing of that, so on
such a host it binds two free real ports, and the gateway claims the host's
ports for it in the map under its pid (an entry whose process is gone holds
nothing). The map is the host's files: read and written through the Host, over
SSH as on `sim:`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hosts import Host, PortNotListening, RemoteFileNotFound
from ..hosts.port_map import PortEntry, entry_path
from .errors import GatewayFailed

_FREE_PORTS = (
    "import socket\n"
    "socks = [socket.socket() for _ in range(2)]\n"
    "for s in socks: s.bind(('127.0.0.1', 0))\n"
    "print(' '.join(str(s.getsockname()[1]) for s in socks))\n"
)
OWNER = "sglang-router"


@dataclass(frozen=True)
class RouterPorts:
    port: int  # what clients use on the host
    metrics_port: int
    bound_port: int  # what the router binds
    bound_metrics_port: int
    port_map: str = ""  # the host's port map (port -> bound_port); "" where a port is itself


def choose_ports(host: Host, *, python: str, port: int, metrics_port: int) -> RouterPorts:
    """The ports to bind for `port` and `metrics_port`; on a host with a port map, refused when either is claimed."""
    map_dir = host.port_map_dir()
    if not map_dir:
        for wanted in (port, metrics_port):
            if _answers(host, wanted):
                raise GatewayFailed(
                    f"port {wanted} on {host.spec} is taken: something already accepts connections there",
                    remedy="choose other ports for the gateway (port, metrics_port), or stop what holds it",
                    details={"cause": "port_in_use", "port": wanted, "stopped": False},
                )
        return RouterPorts(port, metrics_port, port, metrics_port)
    for wanted in (port, metrics_port):
        if (entry := _read_entry(host, map_dir, wanted)) is not None:
            raise GatewayFailed(
                f"port {wanted} on {host.spec} is taken (pid {entry.pid}: {entry.command or entry.owner})",
                remedy="choose other ports for the gateway (port, metrics_port), or stop what holds it",
                details={"cause": "port_in_use", "port": wanted, "pid": entry.pid, "stopped": False},
            )
    done = host.run([python, "-c", _FREE_PORTS], timeout=30, idempotent=True).check()
    bound, bound_metrics = (int(p) for p in done.stdout.split())
    return RouterPorts(port, metrics_port, bound, bound_metrics, port_map=map_dir)


def _answers(host: Host, port: int) -> bool:
    try:
        with host.forward(port):
            return True
    except PortNotListening:
        return False


def _read_entry(host: Host, map_dir: str, port: int) -> PortEntry | None:
    """The live entry for a host port, or None when it is free (no entry, or its process is gone)."""
    try:
        entry = PortEntry.model_validate_json(host.read_file(str(entry_path(map_dir, port))))
    except (RemoteFileNotFound, ValueError):
        return None
    alive = host.run(["kill", "-0", str(entry.pid)], timeout=30, idempotent=True).ok
    return entry if alive else None


def claim(host: Host, ports: RouterPorts, *, pid: int, argv: list[str]) -> None:
    """On a host with a port map, map its ports to the router's real ones, held by its pid."""
    if not ports.port_map:
        return
    command = " ".join(argv)
    for virtual, real in ((ports.port, ports.bound_port), (ports.metrics_port, ports.bound_metrics_port)):
        entry = PortEntry(pid=pid, real_port=real, owner=OWNER, command=command)
        host.write_file(str(entry_path(ports.port_map, virtual)), entry.model_dump_json().encode())


def release(host: Host, ports: RouterPorts, *, pid: int) -> None:
    """Drop the router's claims (only entries its pid still holds)."""
    if not ports.port_map:
        return
    for virtual in (ports.port, ports.metrics_port):
        path = str(entry_path(ports.port_map, virtual))
        try:
            held = PortEntry.model_validate_json(host.read_file(path)).pid == pid
        except (RemoteFileNotFound, ValueError):
            continue
        if held:
            host.run(["rm", "-f", "--", path], timeout=30, idempotent=True)
