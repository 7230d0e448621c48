"""The acceptance section warns when the drafter loses to the baseline even at the lowest concurrency."""

from __future__ import annotations

import pytest

from specops.agent.report import build_report
from specops.agent.report.payoff import payoff_warning
from specops.agent.report.schema import LevelComparison

from .test_report_scenario import HONEST_ANSWER, seed_run


def level(concurrency: int, ar: float, spec: float) -> LevelComparison:
    speedup = spec / ar
    return LevelComparison(
        concurrency=concurrency,
        best_autoregressive="tp8-ep4",
        autoregressive_tok_s=ar,
        best_speculative="tp8-ep4+dflash",
        speculative_tok_s=spec,
        speedup=speedup,
        speedup_ci95=None,
        tpot_speedup=None,
        winner="speculative" if speedup > 1 else "autoregressive",
        notes=[],
    )


@pytest.fixture(scope="module")
def section():
    return build_report(seed_run().events, HONEST_ANSWER, status="completed").acceptance


def test_a_drafter_that_wins_at_low_load_gets_no_warning(section):
    assert payoff_warning(section, [level(1, 65.0, 86.0), level(256, 1530.0, 1290.0)]) is None


def test_a_drafter_slower_even_at_the_lowest_level_is_warned_with_the_break_even(section):
    warning = payoff_warning(section, [level(64, 970.0, 700.0), level(1, 69.0, 50.0)])
    tau = section.overall.request_mean
    assert warning is not None and "even at C=1" in warning and "0.72x" in warning
    assert f"{tau / (50.0 / 69.0):.1f}" in warning  # tau / speedup: the break-even estimate


def test_without_a_comparison_nothing_is_said(section):
    assert payoff_warning(section, []) is None
