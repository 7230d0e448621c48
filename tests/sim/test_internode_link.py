"""The link between nodes in the performance model: what a layout over several nodes pays per step."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import InternodeLink, ParallelConfig
from specops.sim.serving.internode import LinkCost, link_cost
from specops.sim.serving.performance import Launch, build_performance_model
from specops.sim.serving.truth import modelled_tok_s

LINK = InternodeLink(fabric="test", gb_s_per_gpu=50.0, latency_us=8.0)


def test_tensor_parallel_over_two_nodes_pays_two_collectives_a_layer_of_latency_and_its_share_of_bytes():
    cost = LinkCost(LINK, hidden_size=7168, num_layers=61, nnodes=2, gpus_per_node=8, pipeline_across_nodes=False)
    # One token: 122 collectives of 8 us and 2 x 1/2 x 14,336 bytes / 8 GPUs over 50 GB/s each.
    per_collective = 8e-6 + (2 * 0.5 * 7168 * 2 / 8) / 50e9
    assert cost.seconds(1) == pytest.approx(122 * per_collective)
    # 256 tokens: the bytes grow with the tokens, the latency does not.
    assert cost.seconds(256) == pytest.approx(122 * (8e-6 + 256 * 7168 * 2 / 8 / 50e9))


def test_a_pipeline_over_two_nodes_hands_one_activation_over_per_step():
    cost = LinkCost(LINK, hidden_size=7168, num_layers=61, nnodes=2, gpus_per_node=8, pipeline_across_nodes=True)
    assert cost.seconds(100) == pytest.approx(8e-6 + 100 * 7168 * 2 / 50e9)


def test_one_node_or_an_unstated_target_pays_nothing():
    target = load_profile("h100x8-ib").serving.target
    assert link_cost(LINK, target, nnodes=1, tp=8, pp=1) is None
    assert link_cost(None, target, nnodes=2, tp=16, pp=1) is None
    assert link_cost(LINK, target.model_copy(update={"hidden_size": None}), nnodes=2, tp=16, pp=1) is None
    cost = link_cost(LINK, target, nnodes=2, tp=8, pp=2)
    assert cost is not None and cost.pipeline_across_nodes and cost.gpus_per_node == 8


def test_a_two_node_launch_serves_its_stated_curve_less_the_link():
    profile = load_profile("h100x8-ib")
    launch = Launch(tp=16, nnodes=2)
    stated = profile.serving.config("tp16_2node").throughput
    linked = build_performance_model(profile.serving, launch, 1, link=profile.internode)
    unlinked = build_performance_model(profile.serving, launch, 1)
    cost = link_cost(profile.internode, profile.serving.target, nnodes=2, tp=16, pp=1)
    assert cost is not None
    for c, tok_s in stated.known_points():
        assert unlinked.step_time.throughput(c) == pytest.approx(tok_s)
        assert linked.step_time.throughput(c) == pytest.approx(c / (c / tok_s + cost.seconds(c)))
    # The truth the graders use pays it too.
    assert modelled_tok_s(profile.serving, launch, 32, link=profile.internode) == pytest.approx(
        linked.step_time.throughput(32)
    )


def test_a_speculative_verify_pass_carries_its_draft_tokens_over_the_link():
    profile = load_profile("h100x8-ib")
    launch = Launch(tp=16, nnodes=2, speculative_algorithm="DFLASH")
    linked = build_performance_model(profile.serving, launch, 8, link=profile.internode)
    unlinked = build_performance_model(profile.serving, launch, 8)
    cost = link_cost(profile.internode, profile.serving.target, nnodes=2, tp=16, pp=1)
    assert cost is not None
    assert linked.step_time(64) == pytest.approx(unlinked.step_time(64) + cost.seconds(64 * 8))


def test_a_layout_whose_gpus_do_not_split_over_its_nodes_is_refused():
    curve = {"concurrency": [1], "tok_s": [1.0]}
    with pytest.raises(ValidationError, match="do not split evenly over 3 nodes"):
        ParallelConfig(name="bad", tp=8, nnodes=3, throughput=curve, provenance="modelled")
