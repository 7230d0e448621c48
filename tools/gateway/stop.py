"""stop_gateway: end a router this run started and wait until its port no longer answers."""

from __future__ import annotations

import time

from ..context import ToolContext
from ..errors import InvalidToolInput
from ..hosts import Host, PortNotListening
from ..sglang.errors import StopIncomplete
from .handles import gateway_handles
from .host_ports import RouterPorts, release
from .models import GatewayStopResult, RunningGateway, StopGatewayArgs

PORT_RELEASE_S = 15.0
_POLL_S = 0.2


def stop_gateway(ctx: ToolContext, args: StopGatewayArgs) -> GatewayStopResult:
    """Stop a gateway this run started (TERM, then KILL) and wait until its port is free. The workers keep running."""
    handles = gateway_handles(ctx)
    gateway = handles.get(args.gateway)
    if gateway.host != ctx.host.spec:
        raise InvalidToolInput(
            f"the gateway {gateway.id} is on {gateway.host}, not {ctx.host.spec}",
            remedy="stop it through a context for its own host",
            details={"gateway_host": gateway.host},
        )
    start = time.monotonic()
    host = ctx.host
    proc = gateway.process
    was_running = host.is_running(proc)
    try:
        host.stop(proc, grace_s=args.grace_s)
    finally:
        release(host, _ports(host, gateway), pid=gateway.pid)
    handles.mark_stopped(gateway.id)  # its processes are gone, whatever still holds the port
    deadline = time.monotonic() + PORT_RELEASE_S
    while (answers := _answers(host, gateway.port)) and time.monotonic() < deadline:
        time.sleep(_POLL_S)
    if answers:
        raise StopIncomplete(
            f"the gateway's processes are gone but port {gateway.port} still answers after {PORT_RELEASE_S:.0f} s",
            remedy="check what listens on the port before starting a gateway there again",
            details={"pid": gateway.pid, "port": gateway.port, "port_free": False},
        )
    return GatewayStopResult(
        gateway=gateway.id,
        host=host.spec,
        pid=gateway.pid,
        was_running=was_running,
        port_free=True,
        seconds=round(time.monotonic() - start, 2),
    )


def _ports(host: Host, gateway: RunningGateway) -> RouterPorts:
    return RouterPorts(
        gateway.port, gateway.metrics_port, gateway.bound_port, gateway.bound_metrics_port, port_map=host.port_map_dir()
    )


def _answers(host: Host, port: int) -> bool:
    try:
        with host.forward(port):
            return True
    except PortNotListening:
        return False
