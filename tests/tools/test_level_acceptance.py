"""A benchmark level's own acceptance: per-request counts when they are a fair sample, else the counters, else none."""

from __future__ import annotations

import pytest

from specops.tools.benchmark.statistics import level_acceptance


def _done(tokens: int, steps: int) -> dict:
    return {"output_tokens": tokens, "spec_verify_ct": steps}


COUNTERS = {
    "before": {"sglang:generation_tokens_total": 1000, "sglang:spec_verify_calls_total": 400},
    "after": {"sglang:generation_tokens_total": 1700, "sglang:spec_verify_calls_total": 600},
}


def test_finished_requests_give_the_level_when_most_finished():
    figure, source, steps = level_acceptance([_done(64, 16), _done(64, 20)], None, cut=1)
    assert (source, steps) == ("meta_info", 36) and figure == pytest.approx(128 / 36)


def test_a_few_fast_finishers_of_a_cut_level_are_not_the_levels_figure():
    # 1 of 32 finished: the fastest request, the one that accepted most. The counters count every token.
    assert level_acceptance([_done(64, 14)], None, cut=31) is None
    figure, source, steps = level_acceptance([_done(64, 14)], COUNTERS, cut=31)
    assert (source, steps) == ("metrics_counters", 200) and figure == pytest.approx(700 / 200)
