"""The throughput/interactivity frontier: per-GPU and per-user tok/s per level, and which points no other beats."""

from __future__ import annotations

import pytest

from specops.agent.report.pareto import frontier, pareto_points
from specops.agent.report.schema import BenchmarkRow, ConfigTried

from ..evals.evidence_builder import bench_row, config_tried


def config(name: str, *, dp: int = 1, dp_attention: bool = False, speculative: bool = False) -> ConfigTried:
    return config_tried(name, speculative=speculative).model_copy(update={"dp": dp, "dp_attention": dp_attention})


def row(name: str, concurrency: int, tok_s: float, *, speculative: bool = False, failed: int = 0) -> BenchmarkRow:
    return bench_row(name, concurrency, tok_s, speculative=speculative).model_copy(update={"requests_failed": failed})


CONFIGS = [
    config("tp8"),
    config("tp8-dp8-dpattn", dp=8, dp_attention=True),
    config_tried("tp4-dp2", tp=4).model_copy(update={"dp": 2}),
    config("tp8+eagle3", speculative=True),
]


def test_per_gpu_and_per_user_figures():
    [point] = pareto_points([row("tp4-dp2", 32, 1600.0)], CONFIGS)
    assert point.gpus == 8 and point.tok_s_per_gpu == pytest.approx(200.0) and point.tok_s_per_user == 50.0
    [dp_attention] = pareto_points([row("tp8-dp8-dpattn", 64, 3200.0)], CONFIGS)
    assert dp_attention.gpus == 8  # DP attention splits the TP ranks: no more GPUs


def test_a_point_beaten_on_both_axes_by_its_own_kind_is_off_the_frontier():
    points = pareto_points(
        [
            row("tp8", 1, 100.0),  # the most interactive
            row("tp8", 64, 2000.0),  # per user 31.3, per GPU 250
            row("tp8-dp8-dpattn", 64, 1800.0),  # beaten by tp8 at C=64 on both axes
            row("tp8-dp8-dpattn", 256, 6000.0),  # the most economical
            row("tp8+eagle3", 1, 150.0, speculative=True),  # speculative: judged against its own kind only
            row("tp8+eagle3", 64, 1500.0, speculative=True, failed=2),  # a failed level is no point at all
        ],
        CONFIGS,
    )
    on = {(p.config, p.concurrency) for p in points if p.on_frontier}
    assert on == {("tp8", 1), ("tp8", 64), ("tp8-dp8-dpattn", 256), ("tp8+eagle3", 1)}
    assert ("tp8+eagle3", 64) not in {(p.config, p.concurrency) for p in points}
    edge = frontier(points, speculative=False)
    assert [(p.config, p.concurrency) for p in edge] == [("tp8", 1), ("tp8", 64), ("tp8-dp8-dpattn", 256)]
