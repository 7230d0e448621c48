"""The acceptance intervals against references computed apart from them: printed t tables, hand arithmetic, scipy's bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from specops.tools.acceptance_intervals import request_mean_interval, t975, token_weighted_interval


@pytest.mark.parametrize(("df", "printed"), [(1, 12.706), (4, 2.776), (9, 2.262), (30, 2.042), (120, 1.980)])
def test_t_quantiles_match_a_printed_table(df, printed):
    assert t975(df) == pytest.approx(printed, abs=5e-4)


def test_t_quantiles_match_their_closed_forms():
    # df = 1 (Cauchy): tan(pi * (p - 1/2)); df = 2: (2p - 1) / sqrt(2p(1 - p)).
    assert t975(1) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-12)
    assert t975(2) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-12)


def test_t_quantile_tends_to_the_normal_and_needs_a_degree_of_freedom():
    assert t975(100_000) == pytest.approx(1.95996, abs=1e-4)
    with pytest.raises(ValueError):
        t975(0)


def test_request_mean_interval_by_hand():
    # Mean 3, s = sqrt(10 / 4), half width t(0.975, 4) * s / sqrt(5) = 2.7764 * 0.70711 = 1.9632.
    mean, (low, high) = request_mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0
    assert (low, high) == (pytest.approx(3 - 1.9632, abs=1e-4), pytest.approx(3 + 1.9632, abs=1e-4))
    assert request_mean_interval([2.5]) == (2.5, None)


def _requests(n: int) -> tuple[list[int], list[int]]:
    completion = [400 + 37 * i for i in range(n)]
    return completion, [round(c / (3.5 * (0.9 + 0.02 * (i % 12)))) for i, c in enumerate(completion)]


def test_token_weighted_is_a_ratio_of_sums_with_a_repeatable_interval():
    completion, verify = _requests(12)
    ratio, interval = token_weighted_interval(completion, verify)
    assert ratio == sum(completion) / sum(verify)
    assert interval[0] < ratio < interval[1]
    assert token_weighted_interval(completion, verify) == (ratio, interval)  # seeded
    assert token_weighted_interval([400], [100]) == (4.0, None)


def test_requests_that_all_accept_alike_give_an_interval_of_no_width():
    ratio, interval = token_weighted_interval([300, 600, 900], [100, 200, 300])
    assert ratio == 3.0 and interval == (pytest.approx(3.0), pytest.approx(3.0))


def test_token_weighted_interval_agrees_with_scipys_percentile_bootstrap():
    completion, verify = _requests(40)
    _, (low, high) = token_weighted_interval(completion, verify)
    reference = stats.bootstrap(
        (np.array(completion, dtype=float), np.array(verify, dtype=float)),
        lambda c, v, axis: c.sum(axis=axis) / v.sum(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=20_000,
        random_state=np.random.default_rng(1),
    ).confidence_interval
    # Both are Monte Carlo: 2000 resamples against 20,000 put each end within a few thousandths (the width is 0.16).
    assert math.isclose(low, reference.low, abs_tol=0.01) and math.isclose(high, reference.high, abs_tol=0.01)
