"""host_facts over a host group (the two simulated nodes of h100x16-2node): rank 0's facts with the group's
checks: every node's GPUs together, the nodes agreeing, and every node's TCP connection to rank 0's dist-init
address checked from that node; a node with another SGLang release is a problem naming both; find_models names
the nodes without a model at the same path."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specops.sim.world.cluster import SimCluster
from specops.tools.facts import HostFactsArgs, host_facts, host_facts_view
from specops.tools.models_on_host import FindModelsArgs, find_models, models_view

from .worlds import open_group

FAST = 400.0  # loading
# The host's clock: the dist-init listener waits its window (15 s) in the host's seconds, which must outlast this
# machine's SSH round trips to the nodes that connect to it (at 400x it would close after 37 ms of this machine's).
HOST_RATE = 8.0


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimCluster]:
    with SimCluster.start("h100x16-2node", time_scale=HOST_RATE, load_time_scale=FAST) as started:
        yield started


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_groups_checks_pass_and_every_node_reached_rank_0(cluster):
    with open_group(cluster) as ctx:
        facts = host_facts(ctx, HostFactsArgs())
    assert facts.gpu_count == 8 and facts.group is not None
    assert facts.group.ok and facts.group.problems == [] and facts.group.gpu_count == 16
    assert facts.group.nodes == [w.host_spec for w in cluster.worlds]
    assert facts.group.dist_init_reach.startswith("every node (2) reached rank 0's dist-init address 127.0.0.1:")
    assert host_facts_view(facts)["group"] == {"nodes": 2, "gpus": 16, "shared_root": None}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_node_with_another_sglang_release_is_a_problem_naming_both():
    faults = ["old_sglang:node=1,version=0.5.11"]
    with (
        SimCluster.start("h100x16-2node", faults=faults, time_scale=HOST_RATE, load_time_scale=FAST) as cluster,
        open_group(cluster) as ctx,
    ):
        facts = host_facts(ctx, HostFactsArgs())
    assert facts.group is not None and not facts.group.ok
    [problem] = facts.group.problems
    assert "0.5.23" in problem and "0.5.11" in problem and "h100-b" in problem
    assert host_facts_view(facts)["group"]["problems"] == [problem]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_find_models_names_the_nodes_without_a_model_at_the_same_path(cluster):
    config = cluster.worlds[1].root / "data/models/Qwen3-32B/config.json"
    kept = config.with_name("config.json.kept")
    config.rename(kept)  # node 1 lost it
    try:
        with open_group(cluster) as ctx:
            result = find_models(ctx, FindModelsArgs())
            b = ctx.peers[0].host.spec
    finally:
        kept.rename(config)
    found = {m.name: m for m in result.models}
    assert found["Qwen3-32B"].missing_on == [b]
    assert found["Kimi-K2.6"].missing_on == []
    shown = {m["name"]: m for m in models_view(result)["models"]}
    assert shown["Qwen3-32B"]["missing_on"] == [b]
