"""TCP reachability checked on the node (tools/cluster/reach.py): a port a listener on this machine holds is
reached from a simulated node (over sim and ssh), a closed one is not (with the node's error), bad targets are
refused before anything runs, and dist_init_reachable checks from every node while rank 0 listens."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from specops.tools.cluster.reach import dist_init_reachable, tcp_reachable
from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput

from .sshd import free_port
from .worlds import reach, start_world


@pytest.fixture(scope="module")
def seed():
    # The host's clock at 4x: the dist-init listener's window (timeout + 5 s of the host's) outlasts this machine's
    # SSH round trips to the node that connects.
    with start_world("seed-ct200", time_scale=4.0) as world:
        yield world


@pytest.fixture
def listener() -> Iterator[int]:
    """A plain socket listening on this machine's loopback: its port."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


@pytest.mark.parametrize("backend", ["sim", "ssh"])
@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_listening_port_is_reached_and_a_closed_one_is_not(seed, listener, backend):
    with reach(seed, backend) as host:
        ctx = ToolContext.for_host(host)
        found = tcp_reachable(ctx, "127.0.0.1", listener, timeout_s=5)
        assert found.reached and found.checked and found.error is None and found.node == host.spec
        closed = free_port()
        missed = tcp_reachable(ctx, "127.0.0.1", closed, timeout_s=1)
    assert not missed.reached and missed.checked and missed.port == closed
    assert missed.error is not None and "ConnectionRefusedError" in missed.error


@pytest.mark.parametrize(
    ("address", "port", "timeout_s", "said"),
    [
        ("10.0.0.1;rm", 5000, 5.0, "not a host name or an IP address"),
        ("", 5000, 5.0, "no address"),
        ("10.0.0.1", 0, 5.0, "is not a port"),
        ("10.0.0.1", 70000, 5.0, "is not a port"),
        ("10.0.0.1", 5000, 0.0, "out of range"),
    ],
)
def test_bad_targets_are_refused_before_anything_runs(address, port, timeout_s, said):
    class NoHost:
        spec = "nothing"

        def run(self, *args, **kwargs):
            raise AssertionError("ran a command")

    ctx = ToolContext(host=NoHost(), home="/root", allowed_roots=("/root",))  # type: ignore[arg-type]
    with pytest.raises(InvalidToolInput, match=said):
        tcp_reachable(ctx, address, port, timeout_s)


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_dist_init_is_checked_from_every_node_while_rank0_listens(seed):
    with reach(seed, "sim") as a, reach(seed, "ssh") as b:
        contexts = [ToolContext.for_host(a), ToolContext.for_host(b)]
        port = free_port()
        found = dist_init_reachable(contexts, "127.0.0.1", port, timeout_s=5)
        assert found.listener == "started" and found.all_reached and found.unreached == [], found
        assert [r.node for r in found.nodes] == [a.spec, b.spec] and "every node (2) reached" in found.summary
        # The listener is gone: the port is free for the server that binds it next.
        with socket.create_server(("", port)):
            pass
        # A port already held on rank 0 is said, and the nodes connect to what holds it.
        with socket.create_server(("", port)):
            held = dist_init_reachable(contexts, "127.0.0.1", port, timeout_s=5)
        assert held.listener == "port_in_use" and held.all_reached and "already in use" in held.notes[0]
        # Without a listener, a closed port is unreached from every node, each with its error.
        closed = dist_init_reachable(contexts, "127.0.0.1", free_port(), timeout_s=1, listen=False)
    assert closed.listener == "none" and not closed.all_reached and closed.unreached == [a.spec, b.spec]
    assert all("ConnectionRefusedError" in (r.error or "") for r in closed.nodes)
    assert "2 of 2 node(s) could not reach" in closed.summary
