"""One SGLang server over the two nodes of the simulated cluster h100x16-2node, each node reached over real SSH
(its own sshd, the cluster's inventory group), through tools/sglang/multinode.py and the launch_server tool.

Kimi-K2.6 (553.8 GiB) needs 16 H100s: tp16 spans both nodes (--nnodes 2). What is asserted is what the code
computes: the ranks' placement and flags, the error that names the node at fault, and that nothing is left running
on either node (each world's own registries, evals/host_state.py).

The worlds load at scale 100: Kimi's 330 s load takes 3.3 s, and torch's default 600 s rendezvous timeout (the
simulator scales it as it scales loading) 6 s, ample for rank 1 to start after rank 0 over SSH on a busy machine.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from specops.evals.host_state import live_servers
from specops.sim.serving.multinode import ALL_JOINED_LINE, JOINED_LINE
from specops.sim.world.cluster import SimCluster
from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput
from specops.tools.sglang import (
    LaunchArgs,
    LaunchFailed,
    ServerConfig,
    StatusArgs,
    StopArgs,
    launch_server,
    server_status,
    stop_server,
)
from specops.tools.sglang.handle import RECORDS_DIR, record_path, server_view
from specops.tools.sglang.multinode import (
    RANK_NOT_JOINED,
    MultiNodeLaunch,
    dist_init_address,
    node_flags,
    nodes_needed,
    start_across_nodes,
    stop_ranks,
)
from specops.tools.sglang.server_http import health_status

from .sshd import require_sshd
from .worlds import open_group

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # generous: other simulations share this machine

CLUSTER = "h100x16-2node"
TIME_SCALE = 2.0  # the serving scale these tests run the cluster at
LOAD_SCALE = 100.0
MODEL = "/data/models/Kimi-K2.6"  # h100x8-ib's, at the same host path on both nodes
HOSTNAMES = ["h100-a", "h100-b"]
PORT = 30000
LOGS = "~/.specops/logs"
ADDRESS = re.compile(r"127\.0\.0\.1:(\d{1,5})")  # the nodes share this machine's loopback
DIST_TIMEOUT_LINE = (
    "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 8/16 clients joined."
)


@contextmanager
def _cluster(*faults: str) -> Iterator[SimCluster]:
    require_sshd()
    with SimCluster.start(CLUSTER, faults=faults, time_scale=TIME_SCALE, load_time_scale=LOAD_SCALE, ssh=True) as c:
        yield c


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimCluster]:
    with _cluster() as c:
        yield c


@pytest.fixture(scope="module")
def head(cluster) -> Iterator[ToolContext]:
    with open_group(cluster, ssh=True) as ctx:
        yield ctx


def _tp16(**more) -> ServerConfig:
    return ServerConfig(model_path=MODEL, tp=16, trust_remote_code=True, **more)


def _running(cluster: SimCluster) -> dict[str, list]:
    """Per node, the servers and GPU holders alive on it (its port and GPU registries)."""
    return {name: live_servers(w.layout, os.getpid()) for name, w in zip(HOSTNAMES, cluster.worlds, strict=True)}


def _listing(ctx: ToolContext, path: str) -> list[str]:
    done = ctx.host.run(["ls", "-1", ctx.resolve(path)], timeout=30)
    return done.stdout.split() if done.ok else []


def _gpu_pids(ctx: ToolContext) -> list[str]:
    done = ctx.host.run(["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"], timeout=30).check()
    return done.stdout.split()


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


# -- how many nodes, and where the rendezvous is ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sixteen_gpus_need_both_nodes_and_rank0_gives_the_rendezvous_address(head):
    assert [n.host.spec for n in head.nodes] == HOSTNAMES
    assert nodes_needed(head, _tp16()) == 2
    assert nodes_needed(head, ServerConfig(model_path=MODEL, tp=8)) == 1  # rank 0's GPUs hold it
    alone = ToolContext(host=head.host, home=head.home, allowed_roots=head.allowed_roots)
    assert nodes_needed(alone, _tp16()) == 1  # one host: no peers, nothing to span
    with pytest.raises(InvalidToolInput, match=r"needs 12 GPUs \(tp x pp\); the run's 2 nodes have 8 each"):
        nodes_needed(head, ServerConfig(model_path=MODEL, tp=12))
    with pytest.raises(InvalidToolInput, match="needs 32 GPUs") as refused:
        nodes_needed(head, ServerConfig(model_path=MODEL, tp=16, pp=2))
    assert refused.value.details == {"gpus": 32, "gpus_per_node": 8, "nodes": 2}

    address = dist_init_address(head)
    match = ADDRESS.fullmatch(address)
    assert match is not None and 0 < int(match[1]) < 65536, address
    with pytest.raises(ValueError, match="is not HOST:PORT"):
        MultiNodeLaunch(config=_tp16(), dist_init_addr="127.0.0.1", stall_timeout_s=600, log_dir=LOGS)


# -- ready over both nodes, then stopped --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_tp16_over_both_nodes_comes_up_through_launch_server_and_stop_server_ends_both_ranks(cluster, head):
    assert _running(cluster) == {name: [] for name in HOSTNAMES}
    node1 = head.peers[0]
    server = launch_server(head, LaunchArgs(config=_tp16()))
    try:
        # Rank 0 answers: the handle is ready, its /health is 200 and server_status finds it up.
        assert server.host == "h100-a" and server.port == PORT and server.info.tp == 16
        assert health_status(head.host, PORT) == 200
        assert server_status(head, StatusArgs(server=server.id)).up
        assert server_view(server)["nodes"] == 2

        # Every rank, rank 0 first, each on its node with its node rank and one dist-init address.
        assert [(r.node_rank, r.host) for r in server.ranks] == [(0, "h100-a"), (1, "h100-b")]
        address = _flag(server.ranks[0].argv, "--dist-init-addr")
        assert ADDRESS.fullmatch(address), address
        for rank in server.ranks:
            assert rank.argv[-6:] == node_flags(2, rank.node_rank, address)
            assert rank.argv[-6:] == ["--nnodes", "2", "--node-rank", str(rank.node_rank), "--dist-init-addr", address]
            assert _flag(rank.argv, "--tp-size") == "16" and _flag(rank.argv, "--port") == str(PORT)
            assert posixpath.basename(rank.log_path).startswith(f"sglang-{PORT}-rank{rank.node_rank}-")
        head_rank = server.ranks[0]
        assert (server.pid, server.pgid, server.argv, server.log_path) == (
            head_rank.pid,
            head_rank.pgid,
            head_rank.argv,
            head_rank.log_path,
        )
        # Each node runs the model at the same host path.
        assert _flag(server.ranks[1].argv, "--model-path") == MODEL
        assert _flag(server.ranks[0].argv, "--model-path") == MODEL

        # Both processes live, each on its own node; rank 1 serves only SGLang's dummy health check.
        assert all(ctx.host.is_running(r.process) for ctx, r in zip(head.nodes, server.ranks, strict=True))
        assert health_status(node1.host, PORT) == 200
        running = _running(cluster)
        assert [[s.pid for s in running[name]] for name in HOSTNAMES] == [[r.pid] for r in server.ranks]
        assert ALL_JOINED_LINE.format(nnodes=2, address=address, world=16) in head.host.tail(head_rank.log_path, 400)
        joined = JOINED_LINE.format(address=address, node_rank=1, ranks="8-15")
        assert joined in node1.host.tail(server.ranks[1].log_path, 400)
    finally:
        stopped = stop_server(head, StopArgs(server=server.id))
    assert stopped.server == server.id and stopped.was_running and stopped.port_free and stopped.gpu_released
    assert not any(ctx.host.is_running(r.process) for ctx, r in zip(head.nodes, server.ranks, strict=True))
    assert _running(cluster) == {name: [] for name in HOSTNAMES}
    assert _gpu_pids(head) == [] and _gpu_pids(node1) == []
    assert head.handles.running() == []
    # Rank 0's shutdown (SGLang's ShutdownReq broadcast) ended rank 1's eight schedulers cleanly.
    assert node1.host.tail(server.ranks[1].log_path, 400).count("terminated with 0") == 8
    for ctx, rank in zip(head.nodes, server.ranks, strict=True):
        assert not ctx.host.exists(record_path(ctx, rank.pgid))  # every node's launch record is gone


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_start_across_nodes_then_stop_ranks_leaves_no_rank_on_either_node(cluster, head):
    port = PORT + 1
    launch = MultiNodeLaunch(
        config=_tp16(port=port), dist_init_addr=dist_init_address(head), stall_timeout_s=600, log_dir=LOGS
    )
    ranks, wait, outcome = start_across_nodes(head.nodes, launch)
    try:
        assert outcome.ready and not outcome.exited and not outcome.stalled
        # Ready after the model's load on rank 0's own clock (its stamps' time), however fast this machine ran it.
        load_s = cluster.worlds[0].state.profile.serving.target.load_seconds
        assert 0.95 * load_s <= outcome.took_s < 1.5 * load_s
        assert [(r.node_rank, r.host) for r in ranks] == [(0, "h100-a"), (1, "h100-b")]
        for ctx, rank in zip(head.nodes, ranks, strict=True):
            assert rank.argv[-6:] == node_flags(2, rank.node_rank, launch.dist_init_addr)
            assert _flag(rank.argv, "--port") == str(port)
            assert posixpath.dirname(rank.log_path) == ctx.resolve(LOGS)
            assert ctx.host.is_running(rank.process)
            assert ctx.host.exists(record_path(ctx, rank.pgid))  # written as soon as the process existed
        assert health_status(head.host, port) == 200
        assert [len(servers) for servers in _running(cluster).values()] == [1, 1]
    finally:
        stop_ranks(head.nodes, ranks)
    assert not any(ctx.host.is_running(r.process) for ctx, r in zip(head.nodes, ranks, strict=True))
    assert _running(cluster) == {name: [] for name in HOSTNAMES}
    assert health_status(head.host, port) is None


# -- a node that never joins --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hung_cluster() -> Iterator[SimCluster]:
    """Node 1's server hangs 1% into loading, before the rendezvous (alive, its log silent)."""
    with _cluster("load_hang:node=1,at_fraction=0.01") as c:
        yield c


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_node_that_never_joins_fails_the_launch_naming_it_and_no_rank_is_left(hung_cluster):
    with open_group(hung_cluster, ssh=True) as head:
        # At most 3600 modelled seconds (36 s here), no stall cut before it; rank 0 gives up on the rendezvous
        # after 600 (6 s, or the simulator's least wall wait, MIN_WAIT_WALL_S, when longer).
        with pytest.raises(LaunchFailed) as failed:
            launch_server(head, LaunchArgs(config=_tp16(), ready_timeout_s=3600, stall_timeout_s=3600))
        error = failed.value
        message = str(error)
        assert message.startswith("the server over 2 nodes did not come up: rank 1 (h100-b) never joined")
        assert "(rank 0: 8/16 clients joined); every rank was stopped" in message
        details = error.details
        assert details["cause"] == RANK_NOT_JOINED and details["at_fault"] == [1] and details["stopped"] is True
        address = details["dist_init_addr"]
        assert ADDRESS.fullmatch(address) and address in error.remedy
        states = {s["node_rank"]: s for s in details["ranks"]}
        assert [(s["node_rank"], s["host"]) for s in details["ranks"]] == [(0, "h100-a"), (1, "h100-b")]
        # Rank 0 exited with torch's own words; rank 1 was alive, its log stopped before the rendezvous.
        assert states[0]["state"] == "exited" and states[0]["said"] == DIST_TIMEOUT_LINE
        assert DIST_TIMEOUT_LINE in details["log_tail"]
        rank1_log = details["log_paths"]["1"]
        assert states[1]["log_path"] == rank1_log
        rank1_text = head.peers[0].host.tail(rank1_log, 400)
        assert "Joined the torch.distributed rendezvous" not in rank1_text
        assert "Init torch distributed begin." not in rank1_text
        assert details["lines"] == [states[1]["said"]] and details["lines"][0] in message
        assert details["log_path"] == details["log_paths"]["0"] == states[0]["log_path"]

        # Nothing runs on either node and no server was handed out.
        assert _running(hung_cluster) == {name: [] for name in HOSTNAMES}
        assert _gpu_pids(head) == [] and _gpu_pids(head.peers[0]) == []
        assert head.handles.running() == []
        assert health_status(head.host, PORT) is None and health_status(head.peers[0].host, PORT) is None


# -- another SGLang release on one node -------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_cluster() -> Iterator[SimCluster]:
    with _cluster("old_sglang:node=1,version=0.5.11") as c:
        yield c


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("entry", ["launch_server", "start_across_nodes"])
def test_another_sglang_release_on_one_node_is_refused_before_anything_starts(mixed_cluster, entry):
    with open_group(mixed_cluster, ssh=True) as head:
        logs_before = [_listing(ctx, LOGS) for ctx in head.nodes]
        with pytest.raises(InvalidToolInput) as refused:
            if entry == "launch_server":
                launch_server(head, LaunchArgs(config=_tp16()))
            else:
                launch = MultiNodeLaunch(
                    config=_tp16(), dist_init_addr="127.0.0.1:29500", stall_timeout_s=600, log_dir=LOGS
                )
                start_across_nodes(head.nodes, launch)
        error = refused.value
        assert "the nodes run different SGLang releases (rank 0 (h100-a): 0.5.23, rank 1 (h100-b): 0.5.11)" in str(
            error
        )
        assert error.details == {"versions": ["0.5.23", "0.5.11"]}
        assert "pip install sglang==" in error.remedy
        # Nothing was started: no log, no launch record, no process on either node.
        assert [_listing(ctx, LOGS) for ctx in head.nodes] == logs_before
        assert all(_listing(ctx, f"~/{RECORDS_DIR}") == [] for ctx in head.nodes)
        assert _running(mixed_cluster) == {name: [] for name in HOSTNAMES}
        assert head.handles.running() == []
