"""host_facts over a host group (the two simulated nodes of h100x16-2node): rank 0's facts with the group's
checks: every node's GPUs together, the nodes agreeing, and every node's TCP connection to rank 0's dist-init
address checked from that node; a node with another SGLang release is a problem naming both."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from specops.sim.world.cluster import SimCluster
from specops.tools.context import ToolContext
from specops.tools.facts import HostFactsArgs, host_facts, host_facts_view
from specops.tools.hosts import open_host

FAST = 400.0


@contextmanager
def group(cluster: SimCluster) -> Iterator[ToolContext]:
    with ExitStack() as stack:
        contexts = [ToolContext.for_host(stack.enter_context(open_host(w.host_spec))) for w in cluster.worlds]
        head = contexts[0]
        head.peers = tuple(contexts[1:])
        yield head


@pytest.mark.timeout(180)
def test_the_groups_checks_pass_and_every_node_reached_rank_0():
    with SimCluster.start("h100x16-2node", time_scale=FAST, load_time_scale=FAST) as cluster, group(cluster) as ctx:
        facts = host_facts(ctx, HostFactsArgs())
    assert facts.gpu_count == 8 and facts.group is not None
    assert facts.group.ok and facts.group.problems == [] and facts.group.gpu_count == 16
    assert facts.group.nodes == [w.host_spec for w in cluster.worlds]
    assert facts.group.dist_init_reach.startswith("every node (2) reached rank 0's dist-init address 127.0.0.1:")
    assert host_facts_view(facts)["group"] == {"nodes": 2, "gpus": 16, "shared_root": None}


@pytest.mark.timeout(180)
def test_a_node_with_another_sglang_release_is_a_problem_naming_both():
    faults = ["old_sglang:node=1,version=0.5.11"]
    with (
        SimCluster.start("h100x16-2node", faults=faults, time_scale=FAST, load_time_scale=FAST) as cluster,
        group(cluster) as ctx,
    ):
        facts = host_facts(ctx, HostFactsArgs())
    assert facts.group is not None and not facts.group.ok
    [problem] = facts.group.problems
    assert "0.5.23" in problem and "0.5.11" in problem and "h100-b" in problem
    assert host_facts_view(facts)["group"]["problems"] == [problem]
