"""The ports the router binds: the ones asked for on a real host; free loopback ports on a simulated one.

A simulated host's ports are virtual (sim/world/ports.py): its servers claim a
host port in the world's registry and serve it from a free real port, and
`Host.forward`/`port_on_host` look the port up there. The router is a real
program that knows nothing of that, so on a simulated host it binds two free
real ports, and the gateway claims the virtual ports for it in the registry
under its pid (an entry whose process is gone holds nothing). Simulated worlds
always live on this machine, so the registry is read and written here, with the
simulator's own functions, as LocalHost does (tools/hosts/local.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..hosts import Host, PortNotListening
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
    sim_root: str = ""  # the simulated world whose registry maps port -> bound_port; "" on a real host


def choose_ports(host: Host, *, python: str, port: int, metrics_port: int) -> RouterPorts:
    """The ports to bind for `port` and `metrics_port`; on a simulated host, refused when either is claimed."""
    root = host.sim_root()
    if not root:
        for wanted in (port, metrics_port):
            if _answers(host, wanted):
                raise GatewayFailed(
                    f"port {wanted} on {host.spec} is taken: something already accepts connections there",
                    remedy="choose other ports for the gateway (port, metrics_port), or stop what holds it",
                    details={"cause": "port_in_use", "port": wanted, "stopped": False},
                )
        return RouterPorts(port, metrics_port, port, metrics_port)
    from specops.sim.world.layout import WorldLayout
    from specops.sim.world.ports import read_entry

    layout = WorldLayout(Path(root))
    for wanted in (port, metrics_port):
        if (entry := read_entry(layout, wanted)) is not None:
            raise GatewayFailed(
                f"port {wanted} on {host.spec} is taken (pid {entry.pid}: {entry.command or entry.owner})",
                remedy="choose other ports for the gateway (port, metrics_port), or stop what holds it",
                details={"cause": "port_in_use", "port": wanted, "pid": entry.pid, "stopped": False},
            )
    done = host.run([python, "-c", _FREE_PORTS], timeout=30, idempotent=True).check()
    bound, bound_metrics = (int(p) for p in done.stdout.split())
    return RouterPorts(port, metrics_port, bound, bound_metrics, sim_root=root)


def _answers(host: Host, port: int) -> bool:
    try:
        with host.forward(port):
            return True
    except PortNotListening:
        return False


def claim(ports: RouterPorts, *, pid: int, argv: list[str]) -> None:
    """On a simulated host, map the virtual ports to the router's real ones, held by its pid."""
    if not ports.sim_root:
        return
    from specops.sim.world.layout import WorldLayout
    from specops.sim.world.ports import PortEntry, write_entry

    layout = WorldLayout(Path(ports.sim_root))
    command = " ".join(argv)
    for virtual, real in ((ports.port, ports.bound_port), (ports.metrics_port, ports.bound_metrics_port)):
        write_entry(layout, virtual, PortEntry(pid=pid, real_port=real, owner=OWNER, command=command))


def release(ports: RouterPorts, *, pid: int) -> None:
    """Drop the router's claims (only entries its pid still holds)."""
    if not ports.sim_root:
        return
    from specops.sim.world.layout import WorldLayout
    from specops.sim.world.ports import remove_entry

    layout = WorldLayout(Path(ports.sim_root))
    for virtual in (ports.port, ports.metrics_port):
        remove_entry(layout, virtual, pid)
