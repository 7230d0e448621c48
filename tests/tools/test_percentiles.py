"""Percentiles, means and spreads of the benchmark and of the sim's bench_serving, against values worked by hand."""

from __future__ import annotations

import pytest

from specops.sim.host import bench_serving
from specops.tools.benchmark.statistics import percentile, summarize

# Linear interpolation between order statistics: the q-quantile of n values sits at rank q * (n - 1).
# For 15, 20, 35, 40, 50: q = 0.4 -> rank 1.6 -> 20 + 0.6 * 15 = 29; q = 0.9 -> rank 3.6 -> 40 + 0.6 * 10 = 46.
VALUES = [15.0, 20.0, 35.0, 40.0, 50.0]


@pytest.mark.parametrize(("q", "expected"), [(0.0, 15.0), (0.4, 29.0), (0.5, 35.0), (0.9, 46.0), (1.0, 50.0)])
def test_benchmark_percentiles_interpolate_linearly(q, expected):
    assert percentile(VALUES, q) == pytest.approx(expected)


def test_benchmark_percentile_of_nothing_is_refused():
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_a_latency_summary_in_milliseconds():
    summary = summarize([v / 1000 for v in reversed(VALUES)])
    assert summary.samples == 5 and summary.mean_ms == pytest.approx(32.0)
    assert (summary.p50_ms, summary.p90_ms) == (pytest.approx(35.0), pytest.approx(46.0))
    # p99: rank 3.96 -> 40 + 0.96 * 10.
    assert summary.p99_ms == pytest.approx(49.6)


def test_the_sims_bench_serving_figures_are_sglangs():
    shuffled = [40.0, 15.0, 50.0, 20.0, 35.0]
    assert bench_serving.percentile(shuffled, 40) == pytest.approx(29.0)
    assert bench_serving.percentile(shuffled, 90) == pytest.approx(46.0)
    # Population standard deviation: 2, 4, 4, 4, 5, 5, 7, 9 has mean 5 and std 2.
    spread = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]
    assert (bench_serving.mean(spread), bench_serving.std(spread)) == (5.0, 2.0)
    # SGLang passes `values or 0`: no values give 0.
    assert (bench_serving.percentile([], 99), bench_serving.mean([]), bench_serving.std([])) == (0.0, 0.0, 0.0)
