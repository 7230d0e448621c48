"""A node lost in the middle of a benchmark, on the simulated cluster h100x16-2node reached over real SSH: the
simulator's node faults (sim/serving/node_faults.py) strike when rank 0 runs two requests, and the benchmark tool
names the node and how it was lost (tools/sglang/node_fault.py), never as load.

Each test starts its own cluster (a fault strikes once per world), launches tp16 across both nodes and sweeps C=1
then C=4: C=1 stands, C=4 is where the node goes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from specops.sim.world.cluster import SimCluster
from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.benchmark.models import LevelResult
from specops.tools.context import ToolContext
from specops.tools.hosts import HostError
from specops.tools.sglang import LaunchArgs, LaunchFailed, ServerConfig, StopArgs, launch_server, stop_server
from specops.tools.sglang.node_fault import find_node_fault

from .sshd import require_sshd
from .worlds import open_group

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]  # two nodes, a load and a sweep, beside other simulations

CLUSTER = "h100x16-2node"
MODEL = "/data/models/Kimi-K2.6"
STRIKE = "node=1,at_running=2"


@contextmanager
def _head(fault: str) -> Iterator[tuple[SimCluster, ToolContext]]:
    require_sshd()
    with SimCluster.start(CLUSTER, faults=[fault], time_scale=2.0, load_time_scale=100.0, ssh=True) as cluster:
        with open_group(cluster, ssh=True) as ctx:
            yield cluster, ctx


def _launch_and_sweep(ctx: ToolContext) -> tuple[str, LevelResult]:
    """tp16 over both nodes, swept at C=1 and C=4; (its server id, the C=4 level)."""
    server = launch_server(ctx, LaunchArgs(config=ServerConfig(model_path=MODEL, tp=16, trust_remote_code=True)))
    result = run_benchmark(ctx, BenchmarkArgs(port=server.port, levels=[1, 4], output_len=32, rounds=2))
    first, lost = result.levels
    assert first.valid, first.invalid_reason
    assert not lost.valid and lost.server_failure is not None
    return server.id, lost


def _not_load(level: LevelResult) -> None:
    assert level.remedy is not None and "Not load" in level.remedy and "max_running_requests" not in level.remedy


def test_a_node_that_loses_power_is_named_as_not_answering_and_stop_says_its_rank_was_not_reached():
    with _head(f"node_dies:{STRIKE}") as (_, ctx):
        server, lost = _launch_and_sweep(ctx)
        node = lost.server_failure.node if lost.server_failure else None
        assert node is not None and (node.kind, node.node_rank, node.host) == ("node_down", 1, "h100-b")
        assert "node 1 (h100-b) does not answer" in (lost.invalid_reason or "")
        assert any("Connection closed by remote peer" in line for line in node.evidence)
        _not_load(lost)
        with pytest.raises(HostError):
            ctx.peers[0].host.run(["true"], timeout=20)
        stopped = stop_server(ctx, StopArgs(server=server))
        assert [u.split(" (")[0] for u in stopped.unreached_ranks] == ["rank 1 on h100-b"]


def test_a_partition_is_a_network_fault_both_sides_report():
    with _head(f"network_partition:{STRIKE}") as (_, ctx):
        server, lost = _launch_and_sweep(ctx)
        node = lost.server_failure.node if lost.server_failure else None
        assert node is not None and (node.kind, node.node_rank) == ("network", 1)
        assert "the link between node 0 and node 1 (h100-b) failed" in node.words
        assert all("NET/IB : Got completion from peer" in line for line in node.evidence) and len(node.evidence) == 2
        assert "(node_rank 0, ranks 0-7)" in node.evidence[1]  # node 1's own log names node 0
        _not_load(lost)
        assert ctx.peers[0].host.run(["true"], timeout=20).ok  # both nodes stay up
        assert stop_server(ctx, StopArgs(server=server)).unreached_ranks == []


def test_a_gpu_off_the_bus_is_read_from_the_kernel_log_and_the_next_launch_fails_on_that_node():
    with _head(f"gpu_lost:gpu=3,{STRIKE}") as (_, ctx):
        server, lost = _launch_and_sweep(ctx)
        node = lost.server_failure.node if lost.server_failure else None
        assert node is not None and (node.kind, node.node_rank) == ("gpu_lost", 1)
        assert "fell off the bus (Xid 79)" in node.words
        assert node.evidence[0].startswith("NVRM: Xid (PCI:") and ": 79, pid=" in node.evidence[0]
        assert "CUDA error: unspecified launch failure" in node.evidence[1]
        _not_load(lost)
        stop_server(ctx, StopArgs(server=server))
        smi = ctx.peers[0].host.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], timeout=30)
        assert smi.exit_code == 15 and "Unable to determine the device handle for GPU" in smi.stdout
        assert smi.stdout.split()[-7:] == ["0", "1", "2", "4", "5", "6", "7"]
        with pytest.raises(LaunchFailed, match=r"rank 1 \(h100-b\) exited: .*CUDA error: unspecified launch failure"):
            launch_server(ctx, LaunchArgs(config=ServerConfig(model_path=MODEL, tp=16, trust_remote_code=True)))


def test_a_node_back_from_a_reboot_is_told_by_its_new_boot_id():
    with _head(f"node_reboots:down_s=4,{STRIKE}") as (_, ctx):
        server, lost = _launch_and_sweep(ctx)
        node = lost.server_failure.node if lost.server_failure else None
        assert node is not None and node.kind in ("node_down", "node_rebooted")  # it may be back already
        deadline = time.monotonic() + 60
        while True:  # back after 4 of its seconds (2 of this machine's), however busy this machine is
            try:
                ctx.peers[0].host.run(["true"], timeout=20)
                break
            except HostError:
                assert time.monotonic() < deadline, "the node never came back"
                time.sleep(0.5)
        handle = ctx.handles.server(server)
        rank0_log = ctx.host.tail(handle.log_path, 200)
        found = find_node_fault(ctx, handle.ranks, rank0_log)
        assert found is not None and (found.kind, found.node_rank) == ("node_rebooted", 1)
        assert "boot id changed" in found.words
