"""Test support: simulated worlds and the hosts that reach them, for tool tests.

`world` is a seed-ct200 world (time scale 50) per test module; `sim_host` reaches it
through the sim backend, `ssh_host` through a real sshd whose sessions land on it,
and `host` is parametrized over both, so one test proves a tool on sim: and ssh://
(both show the host's paths; a LocalHost given a world's environment would not be
that host, only this machine with its PATH). Tests that need faults start their own world with
`start_world(...)`. `open_group(cluster)` opens a simulated cluster's nodes as a run opens a host group.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from specops.sim.world.cluster import SimCluster
from specops.sim.world.world import SimWorld
from specops.tools.cluster.group import parse_host_group
from specops.tools.context import ToolContext
from specops.tools.hosts import DetachedProcess, Host, open_host

from .sshd import require_sshd

FAST = 50.0
BACKENDS = ("sim", "ssh")


@contextmanager
def start_world(profile: str = "seed-ct200", *, faults=(), time_scale: float = FAST, **kwargs) -> Iterator[SimWorld]:
    with SimWorld.start(profile, faults=list(faults), time_scale=time_scale, **kwargs) as world:
        yield world


@contextmanager
def reach(world: SimWorld, backend: str) -> Iterator[Host]:
    """A Host on `world` through the `sim` backend, or over real SSH."""
    if backend == "sim":
        with open_host(world.host_spec) as host:
            yield host
    elif backend == "ssh":
        require_sshd()
        server = world.start_ssh()
        with open_host(server.url, **server.options()) as host:
            yield host
    else:
        raise ValueError(backend)


@pytest.fixture(scope="module")
def world() -> Iterator[SimWorld]:
    with start_world() as w:
        yield w


@pytest.fixture(scope="module")
def sim_host(world) -> Iterator[Host]:
    with reach(world, "sim") as h:
        yield h


@pytest.fixture(scope="module")
def ssh_host(world) -> Iterator[Host]:
    with reach(world, "ssh") as h:
        yield h


@pytest.fixture(scope="module", params=BACKENDS)
def host(request, world) -> Iterator[Host]:
    with reach(world, request.param) as h:
        yield h


@pytest.fixture(scope="module")
def ctx(host) -> ToolContext:
    return ToolContext.for_host(host)


SGLANG_READY = "The server is fired up and ready to roll!"


def wait_until_ready(host: Host, server: DetachedProcess, log: str, timeout_s: float = 30) -> DetachedProcess:
    """`server` once its log says SGLang is ready; fails with the log's tail if it exits or takes too long."""
    deadline = time.monotonic() + timeout_s
    while SGLANG_READY not in host.tail(log, 200):
        assert host.is_running(server) and time.monotonic() < deadline, host.tail(log, 60)
        time.sleep(0.05)
    return server


@contextmanager
def open_group(cluster: SimCluster, *, ssh: bool = False) -> Iterator[ToolContext]:
    """Rank 0's context with the other nodes as its peers: each world through the sim backend, or (`ssh`) each
    node by its name in the cluster's inventory, over its own sshd, as a run opens `group:cluster` (agent/host.py)."""
    if ssh:
        require_sshd()
        group = parse_host_group(cluster.host_group, inventory=cluster.inventory_path)
        specs = [(member, {"inventory": cluster.inventory_path}) for member in group.member_specs]
    else:
        specs = [(world.host_spec, {}) for world in cluster.worlds]
    with ExitStack() as stack:
        contexts = [ToolContext.for_host(stack.enter_context(open_host(spec, **options))) for spec, options in specs]
        head = contexts[0]
        head.peers = tuple(contexts[1:])
        yield head
