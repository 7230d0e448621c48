"""The run's gateways by short id (g1, g2, ...), beside the servers and downloads of tools/handles.py.

RunHandles holds servers and downloads only; until it holds gateways too (and
rebuilds them on resume), each run's gateways are kept here, one registry per
RunHandles object, dropped with it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from ..context import ToolContext
from ..handles import RunHandles, UnknownHandle
from .models import RunningGateway

GATEWAY_PREFIX = "g"


@dataclass
class GatewayHandles:
    gateways: dict[str, RunningGateway] = field(default_factory=dict)
    stopped: set[str] = field(default_factory=set)

    def add(self, gateway: RunningGateway) -> RunningGateway:
        named = gateway.model_copy(update={"id": f"{GATEWAY_PREFIX}{len(self.gateways) + 1}"})
        self.gateways[named.id] = named
        return named

    def get(self, gateway_id: str) -> RunningGateway:
        if gateway_id not in self.gateways:
            known = f"its gateways: {', '.join(sorted(self.gateways))}" if self.gateways else "it has no gateways"
            raise UnknownHandle(
                f"no gateway {gateway_id!r} in this run ({known})",
                remedy="pass the id start_gateway returned (e.g. 'g1')",
                details={"id": gateway_id, "known": sorted(self.gateways)},
            )
        return self.gateways[gateway_id]

    def mark_stopped(self, gateway_id: str) -> None:
        self.stopped.add(gateway_id)

    def running(self) -> list[RunningGateway]:
        return [g for i, g in self.gateways.items() if i not in self.stopped]


_BY_RUN: dict[int, GatewayHandles] = {}


def gateway_handles(ctx: ToolContext) -> GatewayHandles:
    """The gateways of the run `ctx` belongs to (its RunHandles)."""
    run: RunHandles = ctx.handles
    key = id(run)
    found = _BY_RUN.get(key)
    if found is None:
        found = _BY_RUN[key] = GatewayHandles()
        weakref.finalize(run, _BY_RUN.pop, key, None)
    return found
