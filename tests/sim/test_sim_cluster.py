"""The simulated cluster (sim/world/cluster.py): one sim host per node of a cluster profile, node faults, and
the inventory group `--host` takes to reach every node over SSH."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from specops.sim.faults import FullDisk, OldSglang
from specops.sim.profiles.cluster import builtin_clusters, load_cluster_profile
from specops.sim.world.clock import WorldClock
from specops.sim.world.cluster import SimCluster, parse_node_fault
from specops.tools.cluster.facts import cluster_facts
from specops.tools.cluster.group import parse_host_group
from specops.tools.context import ToolContext
from specops.tools.hosts import open_host


def test_the_two_node_profile_is_two_h100_nodes_in_rank_order():
    assert "h100x16-2node" in builtin_clusters()
    cluster = load_cluster_profile("h100x16-2node")
    assert [n.hostname for n in cluster.nodes] == ["h100-a", "h100-b"]
    node = cluster.node(1)
    assert node.hostname == "h100-b" and node.gpus.count == 8 and node.gpus.model == "NVIDIA H100 80GB HBM3"
    assert node.internode is not None and node.internode.gb_s_per_gpu == 50.0
    # Kimi-K2.6 is served over both nodes: every layout of it but the one-node TP8 spans two.
    assert {c.name: c.nnodes for c in node.serving.configs}["tp16_2node"] == 2


def test_a_node_fault_names_its_node_or_applies_to_every_node():
    assert parse_node_fault("full_disk:node=1,free_gib=2", 2) == ([1], FullDisk(free_gib=2))
    assert parse_node_fault("old_sglang:version=0.5.11", 2) == ([0, 1], OldSglang(version="0.5.11"))
    with pytest.raises(ValueError, match="node 2 is not in the cluster"):
        parse_node_fault("full_disk:node=2", 2)
    with pytest.raises(ValueError, match="node must be a node's index"):
        parse_node_fault("full_disk:node=b", 2)


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimCluster]:
    faults = ["old_sglang:node=1,version=0.5.11", "full_disk:node=1,mount_point=/data,free_gib=2"]
    with SimCluster.start("h100x16-2node", faults=faults, time_scale=2.0, load_time_scale=400.0, ssh=True) as c:
        yield c


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_every_node_is_reached_over_ssh_through_the_inventory_group_and_the_faulty_node_is_found(cluster):
    group = parse_host_group(cluster.host_group, inventory=cluster.inventory_path)
    assert [m.kind for m in group.members] == ["ssh", "ssh"] and group.group == "cluster"
    hosts = [open_host(spec, inventory=cluster.inventory_path) for spec in group.member_specs]
    try:
        contexts = [ToolContext.for_host(h) for h in hosts]
        found = cluster_facts(contexts, models=["/data/models/Kimi-K2.6"], check_shared=False)
    finally:
        for h in hosts:
            h.close()
    checks = {(c.name, c.subject): c for c in found.checks}
    version = checks[("sglang_version", None)]
    assert not version.ok and list(version.values.values()) == ["0.5.23", "0.5.11"], version.summary
    assert checks[("gpu_model", None)].ok and checks[("model_present", "/data/models/Kimi-K2.6")].ok
    assert [n.facts.hostname for n in found.nodes] == ["h100-a", "h100-b"]
    # (a sim node's mount points are this machine's paths under its root)
    free = [next(m.free_bytes for m in n.facts.mounts if m.mount_point.endswith("/data")) / 2**30 for n in found.nodes]
    assert free[1] == pytest.approx(2, abs=0.1) and free[0] > 5000  # the full disk is node 1's alone


def test_the_nodes_keep_one_clock_and_a_node_holding_it_holds_it_for_all(cluster):
    """A real cluster's clocks agree (NTP); a rank starting up on one node is no time on any node."""
    first, second = (WorldClock(w.layout.sim_dir) for w in cluster.worlds)
    second.hold()
    try:
        held_at = first.now()
        time.sleep(0.2)  # 0.4 modelled seconds at this cluster's scale (2), had the first node's clock run on
        assert first.now() - held_at < 0.01
        assert abs(second.now() - first.now()) < 0.01
    finally:
        second.release()
    time.sleep(0.2)
    assert first.now() - held_at > 0.3
