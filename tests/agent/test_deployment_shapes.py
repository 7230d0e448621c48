"""One server across a host group's nodes, or replicas behind SGLang's gateway: the playbook's layouts for each,
the report's per-level comparison of the two shapes (in total and per GPU), the playbook's words for it, and a
speculation that pays only under load, said and checked as such."""

from __future__ import annotations

import pytest

from specops.agent.policies.playbook_configs import group_candidates
from specops.agent.policies.playbook_summary import compare, recommend, shape_line
from specops.agent.report.claims import _crossover_flags
from specops.agent.report.comparison import compare_levels, find_crossover
from specops.agent.report.naming import base_name
from specops.agent.report.shapes import compare_shapes
from specops.tools.sglang.config import ServerConfig

from ..evals.evidence_builder import bench_row, config_tried

MODEL = "/data/models/Qwen3-32B"


def test_a_model_that_fits_one_node_is_laid_out_both_ways_and_one_that_does_not_only_across():
    both = group_candidates(MODEL, 8, 2, moe=False, interconnect="nvlink", fits_one_node=True)
    assert [c.name for c in both] == ["tp16", "tp8-r2"]
    assert both[1].config["replicas"] == 2 and both[1].config["tp"] == 8
    moe = group_candidates(MODEL, 8, 2, moe=True, interconnect="nvlink", fits_one_node=True)
    # The shapes alternate, so a cap on layouts still measures both.
    assert [c.name for c in moe][:4] == ["tp16", "tp8-r2", "tp16-ep16", "tp8-ep8-r2"]
    across = group_candidates(MODEL, 8, 2, moe=True, interconnect="nvlink", fits_one_node=False)
    assert all(c.config.get("replicas", 1) == 1 for c in across) and across[0].name == "tp16"


def test_a_replicated_configuration_is_named_and_counts_every_replicas_gpus():
    config = ServerConfig(model_path=MODEL, tp=4, replicas=3)
    assert base_name(config) == "tp4-r3" and config.gpus == 4 and config.total_gpus == 12
    assert base_name(config.model_copy(update={"replicas": 1})) == "tp4"


def _configs():
    return [
        config_tried("tp16", tp=16),
        config_tried("tp8-r2").model_copy(update={"replicas": 2}),
        config_tried("tp4-r2", tp=4).model_copy(update={"replicas": 2}),
    ]


def test_the_report_sets_the_fastest_of_each_shape_side_by_side_in_total_and_per_gpu():
    rows = [
        bench_row("tp16", 1, 185.0),
        bench_row("tp8-r2", 1, 150.0),
        bench_row("tp4-r2", 1, 115.0),
        bench_row("tp16", 256, 7300.0),
        bench_row("tp8-r2", 256, 10600.0),
        bench_row("tp4-r2", 256, 8000.0),  # on 8 GPUs: slower in total, faster per GPU than tp16
        bench_row("tp8-r2", 64, 4000.0),  # one shape only at C=64: no comparison there
    ]
    one, peak = compare_shapes(rows, _configs())
    assert (one.concurrency, one.one_server.config, one.replicas.config, one.faster) == (
        1,
        "tp16",
        "tp8-r2",
        "one_server",
    )
    assert one.one_server.gpus == 16 and one.one_server.tok_s_per_gpu == pytest.approx(185.0 / 16)
    assert (peak.concurrency, peak.replicas.config, peak.faster, peak.faster_per_gpu) == (
        256,
        "tp8-r2",
        "replicas",
        "replicas",
    )
    assert peak.replicas.gpus == 16 and peak.replicas.tok_s_per_gpu == pytest.approx(10600.0 / 16)
    assert compare_shapes([bench_row("tp16", 1, 185.0)], _configs()) == []


def test_the_playbook_names_the_faster_shape_by_load_in_words_only():
    results = {"tp16": {1: 185.0, 32: 2600.0, 256: 7300.0}, "tp8-r2": {1: 150.0, 32: 3100.0, 256: 10600.0}}
    line = shape_line(results, {"tp8-r2"})
    assert line is not None
    assert "one server at C=1; replicas at C=32, C=256" in line
    assert "tok/s" not in line  # the figures are the report's, never restated
    assert shape_line({"tp16": {1: 185.0}}, set()) is None


def test_speculation_that_pays_only_under_load_is_recommended_so_and_its_crossover_passes_the_check():
    ar = {"tp16": {1: 153.0, 32: 2373.0}}
    spec = {"tp8-r2+ngram": {1: 148.0, 32: 3177.0}}
    text = recommend(compare(ar, spec), "n-gram").text
    assert text.startswith("n-gram loses at low load and wins under load: serve tp16 up to C=1")
    assert "serve tp8-r2+ngram (n-gram) from C=32 on" in text and text.endswith("between C=1 and C=32")
    rows = [
        bench_row("tp16", 1, 153.0),
        bench_row("tp16", 32, 2373.0),
        bench_row("tp8-r2+ngram", 1, 148.0, speculative=True),
        bench_row("tp8-r2+ngram", 32, 3177.0, speculative=True),
    ]
    crossover = find_crossover(compare_levels(rows))
    assert crossover.kind == "starts_paying_only"
    assert _crossover_flags("recommendation", "the crossover lies between C=1 and C=32", crossover) == []
    [flag] = _crossover_flags("recommendation", "the crossover lies at C=64", crossover)
    assert flag.kind == "contradicted"
