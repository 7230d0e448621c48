"""Replicas behind SGLang's Model Gateway: `launch_server` with `ServerConfig(replicas=N)` over the nodes of the
simulated cluster h100x16-2node (two nodes of eight H100s), then `stop_server` (tools/sglang/replicas.py).

Each replica is a whole Qwen3-32B server on one node's GPUs, placed in turn over the nodes (rank 0 first) and side
by side on a node (`--base-gpu-id`), on ports `port + 2 + i`; the real `sglang-router` (the `test` extra) runs on
rank 0 at `port` in front of them. What is asserted is what the code computes: the placement (a pure function, then
the replicas' hosts, ports, model paths and argv), the gateway listing every replica healthy, requests through its
port, the error that names the replica and node that failed, and that nothing is left running on either node (each
world's own port and GPU registries, evals/host_state.py).

The nodes load at scale 100 (Qwen3-32B's modelled 80-150 s start takes about a second and a half, and a start-up
log may stay silent 6 s of real time before it counts as stalled: ample on a busy machine).
"""

from __future__ import annotations

import importlib.util
import os
import posixpath
from collections.abc import Iterator

import pytest

from specops.evals.host_state import live_servers
from specops.sim.world.cluster import SimCluster
from specops.sim.world.gpu_registry import live_holdings
from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.context import ToolContext
from specops.tools.errors import ErrorKind, InvalidToolInput
from specops.tools.gateway import GatewayFailed, GatewayWorker, gateway_handles
from specops.tools.gateway.workers import read_workers
from specops.tools.sglang import (
    LaunchArgs,
    LaunchFailed,
    ServerConfig,
    StopArgs,
    launch_server,
    stop_server,
)
from specops.tools.sglang.handle import RECORDS_DIR, record_path, server_view
from specops.tools.sglang.replicas import Placement, place_replicas
from specops.tools.sglang.server_http import get_text, health_status, parse_metrics

from ..needs import missing_package
from .sshd import require_sshd
from .worlds import open_group

if importlib.util.find_spec("sglang_router") is None:
    missing_package("sglang-router (the `test` extra installs it) is not installed")
pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]  # generous: other simulations share this machine

CLUSTER = "h100x16-2node"
TIME_SCALE = 2.0  # the serving scale these tests run the cluster at
LOAD_SCALE = 100.0
MODEL = "/data/models/Qwen3-32B"  # h100x8-ib's (tp1/tp2/tp4/tp8), at the same host path on both nodes
HOSTNAMES = ["h100-a", "h100-b"]
PORT = 30000
LOGS = "~/.specops/logs"


# -- where the replicas go: a pure function ---------------------------------------------------------------


def _config(tp: int, replicas: int, **more) -> ServerConfig:
    return ServerConfig(model_path=MODEL, tp=tp, replicas=replicas, **more)


def _where(places: list[Placement]) -> list[tuple[int, int, int, int]]:
    return [(p.replica, p.node, p.base_gpu_id, p.port) for p in places]


def test_four_tp4_replicas_alternate_over_two_nodes_and_share_each_node_by_base_gpu_id():
    places = place_replicas(_config(4, 4), gpus_per_node=8, nodes=2)
    assert [p.node for p in places] == [0, 1, 0, 1]
    assert [p.base_gpu_id for p in places] == [0, 0, 4, 4]
    assert [p.port for p in places] == [30002, 30003, 30004, 30005]
    assert [p.replica for p in places] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("config", "gpus_per_node", "nodes", "expected"),
    [
        # one tp8 replica per node, rank 0 first
        (_config(8, 2), 8, 2, [(0, 0, 0, 30002), (1, 1, 0, 30003)]),
        # fewer replicas than room: the first nodes, each from GPU 0
        (_config(2, 2), 8, 2, [(0, 0, 0, 30002), (1, 1, 0, 30003)]),
        # the ports follow the gateway's (port, port + 1), whatever port is asked for
        (_config(4, 3, port=40000), 8, 2, [(0, 0, 0, 40002), (1, 1, 0, 40003), (2, 0, 4, 40004)]),
        # one host: every replica on its GPUs, side by side
        (_config(2, 4), 8, 1, [(0, 0, 0, 30002), (1, 0, 2, 30003), (2, 0, 4, 30004), (3, 0, 6, 30005)]),
        # a layout that does not divide a node: whole replicas only (GPUs 6 and 7 stay free)
        (
            _config(3, 5),
            8,
            3,
            [(0, 0, 0, 30002), (1, 1, 0, 30003), (2, 2, 0, 30004), (3, 0, 3, 30005), (4, 1, 3, 30006)],
        ),
        # tp x pp x dp is what a replica holds
        (_config(2, 2, pp=2, dp=2), 8, 2, [(0, 0, 0, 30002), (1, 1, 0, 30003)]),
        # no GPU count known (nvidia-smi absent): one replica per node
        (_config(1, 3), 0, 3, [(0, 0, 0, 30002), (1, 1, 0, 30003), (2, 2, 0, 30004)]),
    ],
)
def test_placement_over_the_nodes(config, gpus_per_node, nodes, expected):
    assert _where(place_replicas(config, gpus_per_node, nodes)) == expected


@pytest.mark.parametrize(
    ("config", "gpus"),
    [(_config(8, 2, pp=2), 16), (_config(8, 2, dp=2), 16), (ServerConfig(model_path=MODEL, tp=16, replicas=2), 16)],
)
def test_a_replica_wider_than_a_node_is_refused_it_never_spans_nodes(config, gpus):
    with pytest.raises(InvalidToolInput) as refused:
        place_replicas(config, gpus_per_node=8, nodes=2)
    error = refused.value
    assert error.kind == ErrorKind.INVALID_INPUT
    assert str(error.what) == f"a replica needs {gpus} GPUs and a node has 8: a replica never spans nodes"
    assert "replicas 1" in error.remedy
    assert error.details == {"gpus": gpus, "gpus_per_node": 8}


@pytest.mark.parametrize(
    ("config", "gpus_per_node", "nodes", "room"),
    [
        (_config(8, 3), 8, 2, 2),
        (_config(4, 5), 8, 2, 4),
        (_config(8, 2), 8, 1, 1),  # one host of 8 GPUs holds one tp8 replica
        (_config(1, 4), 0, 3, 3),  # no GPU count known: one per node
    ],
)
def test_too_many_replicas_for_the_nodes_are_refused_saying_how_many_fit(config, gpus_per_node, nodes, room):
    with pytest.raises(InvalidToolInput) as refused:
        place_replicas(config, gpus_per_node, nodes)
    error = refused.value
    assert error.what == (
        f"{config.replicas} replicas of {config.gpus} GPUs do not fit {nodes} node(s) of {gpus_per_node} GPUs "
        f"(room for {room})"
    )
    assert f"at most {room} replicas" in error.remedy
    assert error.details == {
        "replicas": config.replicas,
        "gpus": config.gpus,
        "gpus_per_node": gpus_per_node,
        "nodes": nodes,
    }


@pytest.mark.parametrize("port", [65534, 65535])
def test_replica_ports_past_65535_are_refused(port):
    with pytest.raises(InvalidToolInput, match="no port is above 65535"):
        place_replicas(_config(8, 2, port=port), gpus_per_node=8, nodes=2)
    assert place_replicas(_config(8, 2, port=65532), gpus_per_node=8, nodes=2)[-1].port == 65535


# -- the simulated cluster ---------------------------------------------------------------------------------


def _start(*faults: str, ssh: bool = False) -> SimCluster:
    return SimCluster.start(CLUSTER, faults=faults, time_scale=TIME_SCALE, load_time_scale=LOAD_SCALE, ssh=ssh)


def _running(cluster: SimCluster) -> dict[str, list[int]]:
    """Per node, the pids of the servers and GPU holders alive on it (its port and GPU registries)."""
    return {
        name: [s.pid for s in live_servers(w.layout, os.getpid())]
        for name, w in zip(HOSTNAMES, cluster.worlds, strict=True)
    }


NOTHING_RUNNING = {name: [] for name in HOSTNAMES}


def _gpus_held(cluster: SimCluster, node: int, pid: int) -> list[int]:
    """The GPU indexes the simulated nvidia-smi of `node` lists `pid` on."""
    held = [h for h in live_holdings(cluster.worlds[node].layout) if h.pid == pid]
    return sorted(int(gpu) for h in held for gpu, mib in h.gpu_mib.items() if mib > 0)


def _listing(ctx: ToolContext, path: str) -> list[str]:
    done = ctx.host.run(["ls", "-1", ctx.resolve(path)], timeout=30)
    return done.stdout.split() if done.ok else []


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _requests_served(ctx: ToolContext, port: int) -> float:
    """sglang:num_requests_total of the replica on `port` of ctx's node: the requests it finished."""
    return sum(parse_metrics(get_text(ctx.host, port, "/metrics")).get("sglang:num_requests_total", []))


def _worker_urls(head: ToolContext, server) -> list[str]:
    """Each replica's URL as the gateway on rank 0 reaches it: 127.0.0.1 and the node's own real port for it (the
    simulated nodes share this machine's loopback)."""
    by_host = {node.host.spec: node for node in head.nodes}
    return [f"http://127.0.0.1:{by_host[r.host].host.port_on_host(r.port)}" for r in server.replicas]


def _assert_stopped_cleanly(cluster: SimCluster, head: ToolContext, server, stopped) -> None:
    assert stopped.server == server.id and stopped.pid == server.gateway.pid and stopped.port == PORT
    assert stopped.was_running and stopped.port_free and stopped.gpu_released and stopped.gpu_mib_released > 0
    assert _running(cluster) == NOTHING_RUNNING
    assert head.handles.running() == [] and gateway_handles(head).running() == []
    assert not head.host.is_running(server.gateway.process)
    assert health_status(head.host, PORT) is None
    by_host = {node.host.spec: node for node in head.nodes}
    for replica in server.replicas:
        node = by_host[replica.host]
        assert not node.host.is_running(replica.process)
        assert health_status(node.host, replica.port) is None
        assert not node.host.exists(record_path(node, replica.pgid))  # its launch record went with it


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimCluster]:
    with _start() as c:
        yield c


@pytest.fixture(scope="module")
def head(cluster) -> Iterator[ToolContext]:
    with open_group(cluster) as ctx:
        yield ctx


# -- two tp8 replicas, one per node -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.serial  # a benchmark at C=32 through the gateway, four server processes on two nodes
def test_two_tp8_replicas_one_per_node_behind_the_gateway_serve_a_benchmark_and_stop_cleanly(cluster, head):
    assert [node.host.spec for node in head.nodes] == [w.host_spec for w in cluster.worlds]
    assert _running(cluster) == NOTHING_RUNNING
    node_b = cluster.worlds[1].host_spec
    config = ServerConfig(model_path=MODEL, tp=8, replicas=2, enable_metrics=True)
    server = launch_server(head, LaunchArgs(config=config))
    try:
        # The handle is the gateway's: its process and port, every replica behind it.
        gateway = server.gateway
        assert gateway is not None and gateway.id == "g1" and gateway.version == "0.3.2"
        assert server.id == "s1" and server.host == head.host.spec
        assert (server.pid, server.pgid, server.port, server.argv) == (gateway.pid, gateway.pgid, PORT, gateway.argv)
        assert (gateway.port, gateway.metrics_port) == (PORT, PORT + 1)
        assert server.config == config and server.info.tp == 8
        assert server_view(server)["via"] == "gateway"
        assert server_view(server)["replicas"] == [f"{cluster.worlds[0].host_spec}:30002", f"{node_b}:30003"]

        # One replica on each node, each a whole tp8 server on its node's GPUs from 0, on ports 30002 and 30003.
        replicas = server.replicas
        assert [(r.host, r.port) for r in replicas] == [(head.host.spec, 30002), (head.peers[0].host.spec, 30003)]
        for node, replica, world in zip(head.nodes, replicas, cluster.worlds, strict=True):
            assert replica.config.replicas == 1 and replica.config.port == replica.port
            assert replica.config.model_path == MODEL  # the same host path on every node
            assert _flag(replica.argv, "--model-path") == MODEL
            assert _flag(replica.argv, "--tp-size") == "8" and _flag(replica.argv, "--port") == str(replica.port)
            assert "--base-gpu-id" not in replica.argv
            assert posixpath.dirname(replica.log_path) == node.resolve(LOGS)
            assert node.host.is_running(replica.process) and health_status(node.host, replica.port) == 200
            assert node.host.exists(record_path(node, replica.pgid))
            assert replica.info.model_path == MODEL
            assert _gpus_held(cluster, cluster.worlds.index(world), replica.pid) == list(range(8))

        # The gateway on rank 0 lists both replicas healthy, each at the URL rank 0 reaches it by.
        urls = _worker_urls(head, server)
        assert [(w.url, w.healthy, w.gpus) for w in gateway.workers] == [(u, True, 8) for u in urls]
        assert [w.model for w in gateway.workers] == [r.config.model_path for r in replicas]
        assert gateway.argv[-3:] == ["--worker-urls", *urls]
        wanted = [GatewayWorker(url=u, gpus=8) for u in urls]
        listed = read_workers(head.host, server.port, wanted)
        assert listed is not None and sorted((w.url, w.healthy) for w in listed) == sorted((u, True) for u in urls)
        assert health_status(head.host, PORT) == 200
        # Both nodes run their replica; rank 0 the gateway too.
        running = _running(cluster)
        assert running == {"h100-a": sorted([replicas[0].pid, gateway.pid]), "h100-b": [replicas[1].pid]}

        # A benchmark through the gateway's port reaches both replicas and loses no request.
        before = [_requests_served(node, r.port) for node, r in zip(head.nodes, replicas, strict=True)]
        result = run_benchmark(
            head,
            BenchmarkArgs(port=server.port, levels=[32], input_len=128, output_len=32, requests_per_level=64),
        )
        after = [_requests_served(node, r.port) for node, r in zip(head.nodes, replicas, strict=True)]
    finally:
        stopped = stop_server(head, StopArgs(server=server.id))
    (level,) = result.levels
    assert result.api == "sglang"  # the gateway takes /generate with token ids, not /v1/completions
    assert level.requests_completed == 64 and level.requests_failed == 0
    assert level.total_output_tokens == 64 * 32
    served = [a - b for a, b in zip(after, before, strict=True)]
    assert all(n > 0 for n in served) and sum(served) >= 64, served

    _assert_stopped_cleanly(cluster, head, server, stopped)
    assert head.handles.server(server.id).id == server.id  # still known, as stopped
    assert gateway_handles(head).stopped == {"g1"}


# -- four tp4 replicas, two per node ----------------------------------------------------------------------


def test_four_tp4_replicas_put_the_second_on_each_node_on_gpus_4_to_7(cluster, head):
    config = ServerConfig(model_path=MODEL, tp=4, replicas=4)
    server = launch_server(head, LaunchArgs(config=config))
    try:
        replicas = server.replicas
        node_a, node_b = head.host.spec, head.peers[0].host.spec
        assert [(r.host, r.port) for r in replicas] == [
            (node_a, 30002),
            (node_b, 30003),
            (node_a, 30004),
            (node_b, 30005),
        ]
        for replica in replicas[:2]:
            assert "--base-gpu-id" not in replica.argv
        for replica in replicas[2:]:
            assert replica.argv[-2:] == ["--base-gpu-id", "4"]
            assert _flag(replica.argv, "--tp-size") == "4"
        # The simulated nvidia-smi of each node: the first replica on GPUs 0-3, the second on 4-7.
        for index, replica in enumerate(replicas):
            node = index % 2
            expected = [0, 1, 2, 3] if index < 2 else [4, 5, 6, 7]
            assert _gpus_held(cluster, node, replica.pid) == expected, (index, replica.argv)
        gateway = server.gateway
        assert gateway is not None and gateway.gpus == 16
        assert [(w.url, w.healthy, w.gpus) for w in gateway.workers] == [
            (u, True, 4) for u in _worker_urls(head, server)
        ]
        assert sorted(_running(cluster)["h100-a"]) == sorted([replicas[0].pid, replicas[2].pid, gateway.pid])
        assert sorted(_running(cluster)["h100-b"]) == sorted([replicas[1].pid, replicas[3].pid])
    finally:
        stopped = stop_server(head, StopArgs(server=server.id))
    _assert_stopped_cleanly(cluster, head, server, stopped)


def test_too_many_replicas_for_the_cluster_are_refused_before_anything_starts(cluster, head):
    logs_before = [_listing(node, LOGS) for node in head.nodes]
    with pytest.raises(InvalidToolInput, match=r"3 replicas of 8 GPUs do not fit 2 node\(s\) of 8 GPUs"):
        launch_server(head, LaunchArgs(config=ServerConfig(model_path=MODEL, tp=8, replicas=3)))
    alone = ToolContext(host=head.host, home=head.home, allowed_roots=head.allowed_roots)  # rank 0 only
    with pytest.raises(InvalidToolInput, match=r"\(room for 1\)"):
        launch_server(alone, LaunchArgs(config=ServerConfig(model_path=MODEL, tp=8, replicas=2)))
    assert [_listing(node, LOGS) for node in head.nodes] == logs_before
    assert _running(cluster) == NOTHING_RUNNING


# -- a replica that fails, a gateway that cannot start ----------------------------------------------------


@pytest.fixture(scope="module")
def faulty_cluster() -> Iterator[SimCluster]:
    """Node 1's server crashes a tenth into loading (once); on node 0 another program holds port 31000."""
    with _start("server_crash_at_start:node=1,after_fraction=0.1", "port_in_use:node=0,port=31000") as c:
        yield c


def test_a_replica_that_crashes_fails_the_launch_naming_it_and_its_node_and_nothing_is_left(faulty_cluster):
    with open_group(faulty_cluster) as head:
        node_b = head.peers[0].host.spec
        with pytest.raises(LaunchFailed) as failed:
            launch_server(head, LaunchArgs(config=ServerConfig(model_path=MODEL, tp=8, replicas=2)))
        error = failed.value
        assert error.kind == ErrorKind.LAUNCH_FAILED
        assert error.what.startswith(f"replica 1 of 2 on {node_b} (port 30003) did not come up: ")
        assert "h100-b" in error.what
        assert "the SGLang server exited before it was ready (crash)" in error.what
        assert error.what.endswith("; the replicas already up were stopped")
        details = error.details
        assert details["replica"] == 1 and details["node"] == node_b and details["cause"] == "crash"
        assert details["config"]["port"] == 30003 and details["config"]["replicas"] == 1
        assert posixpath.dirname(details["log_path"]) == head.peers[0].resolve(LOGS)
        assert details["lines"] and details["lines"][-1] in head.peers[0].host.tail(details["log_path"], 200)

        # Replica 0 had come up on node 0 (its log), and was stopped; no gateway was started.
        assert any(name.startswith("sglang-30002-") for name in _listing(head, LOGS))
        assert not any(name.startswith("sglang-router-") for name in _listing(head, LOGS))
        assert _running(faulty_cluster) == NOTHING_RUNNING
        assert _listing(head, f"~/{RECORDS_DIR}") == []  # replica 0's launch record went with it
        # The failed replica's own launch keeps its record, as any failed launch_one does (its process is gone).
        assert _listing(head.peers[0], f"~/{RECORDS_DIR}") in ([], [f"{details['pid']}.json"])
        assert health_status(head.host, 30002) is None and health_status(head.host, PORT) is None
        assert head.handles.running() == [] and gateway_handles(head).gateways == {}


def test_a_gateway_port_already_taken_fails_the_launch_and_stops_the_replicas(faulty_cluster):
    with open_group(faulty_cluster) as head:
        alone = ToolContext(host=head.host, home=head.home, allowed_roots=head.allowed_roots)  # rank 0 only
        config = ServerConfig(model_path=MODEL, tp=4, replicas=2, port=31000)
        with pytest.raises(GatewayFailed) as failed:
            launch_server(alone, LaunchArgs(config=config))
        error = failed.value
        assert error.details["cause"] == "port_in_use" and error.details["port"] == 31000
        assert "port 31000" in error.what and "is taken" in error.what
        # Both replicas had come up side by side on rank 0 (their logs), and were stopped.
        logs = _listing(head, LOGS)
        assert any(name.startswith("sglang-31002-") for name in logs)
        assert any(name.startswith("sglang-31003-") for name in logs)
        assert _running(faulty_cluster) == NOTHING_RUNNING
        assert _listing(head, f"~/{RECORDS_DIR}") == []
        assert health_status(head.host, 31002) is None and health_status(head.host, 31003) is None
        assert alone.handles.running() == [] and gateway_handles(alone).gateways == {}


# -- the nodes over real SSH -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ssh_cluster() -> Iterator[SimCluster]:
    require_sshd()
    with _start(ssh=True) as c:
        yield c


def test_two_replicas_over_ssh_nodes_come_up_behind_the_gateway_and_stop_cleanly(ssh_cluster):
    with open_group(ssh_cluster, ssh=True) as head:
        assert [node.host.spec for node in head.nodes] == HOSTNAMES
        server = launch_server(head, LaunchArgs(config=ServerConfig(model_path=MODEL, tp=8, replicas=2)))
        try:
            replicas = server.replicas
            assert server.host == "h100-a" and server.port == PORT
            assert [(r.host, r.port) for r in replicas] == [("h100-a", 30002), ("h100-b", 30003)]
            for node, replica in zip(head.nodes, replicas, strict=True):
                # The same host path on each node.
                assert replica.config.model_path == MODEL
                # Every node is reached at 127.0.0.1 here: the replicas need not listen on every interface.
                assert replica.config.host == "127.0.0.1" and _flag(replica.argv, "--host") == "127.0.0.1"
                assert node.host.is_running(replica.process) and health_status(node.host, replica.port) == 200
            urls = _worker_urls(head, server)
            gateway = server.gateway
            assert gateway is not None
            assert [(w.url, w.healthy, w.gpus) for w in gateway.workers] == [(u, True, 8) for u in urls]
            assert _running(ssh_cluster) == {
                "h100-a": sorted([replicas[0].pid, gateway.pid]),
                "h100-b": [replicas[1].pid],
            }
            result = run_benchmark(
                head, BenchmarkArgs(port=server.port, levels=[4], input_len=64, output_len=16, requests_per_level=8)
            )
            (level,) = result.levels
            assert level.requests_completed == 8 and level.requests_failed == 0
        finally:
            stopped = stop_server(head, StopArgs(server=server.id))
        _assert_stopped_cleanly(ssh_cluster, head, server, stopped)
