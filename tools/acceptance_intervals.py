"""The two acceptance-length averages and their 95% intervals.

- Request mean: every request counts once (DFlash's server benchmark, `specforge benchmark`).
  Interval: Student's t, mean +- t(0.975, n-1) * s / sqrt(n).
- Token weighted: sum(completion_tokens) / sum(spec_verify_ct) (SpecForge's bench_eagle3).
  A ratio of sums has no simple closed-form interval: a percentile bootstrap over
  requests (resampled with replacement, fixed seed, so the same data gives the same interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# numpy and scipy are imported in the functions that use them: this module loads at CLI start-up
# (`specops --help`), where they would add about 0.1 s and 0.6 s.

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260206
# Resamples are drawn in blocks of about this many picks: 2000 resamples of 30,000 requests (three
# categories of up to 10,000 prompts, pooled) drawn at once would take GBs.
_BOOTSTRAP_BLOCK_PICKS = 1 << 20


def t975(df: int) -> float:
    if df < 1:
        raise ValueError("a t interval needs at least two values")
    from scipy.stats import t

    return float(t.ppf(0.975, df))


def request_mean_interval(values: Sequence[float]) -> tuple[float, tuple[float, float] | None]:
    """(mean, 95% t-interval); the interval is None for a single value."""
    import numpy as np

    n = len(values)
    mean = float(np.mean(values))
    if n < 2:
        return mean, None
    half = t975(n - 1) * float(np.std(values, ddof=1)) / math.sqrt(n)
    return mean, (mean - half, mean + half)


def token_weighted_interval(
    completion_tokens: Sequence[int], verify_steps: Sequence[int]
) -> tuple[float, tuple[float, float] | None]:
    """(sum c / sum v, 95% percentile-bootstrap interval); None for a single request."""
    n = len(completion_tokens)
    ratio = sum(completion_tokens) / sum(verify_steps)
    if n < 2:
        return ratio, None
    import numpy as np

    completion, verify = np.asarray(completion_tokens, dtype=float), np.asarray(verify_steps, dtype=float)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    ratios = np.empty(BOOTSTRAP_RESAMPLES)
    block = max(1, _BOOTSTRAP_BLOCK_PICKS // n)
    for first in range(0, BOOTSTRAP_RESAMPLES, block):
        picks = rng.integers(n, size=(min(block, BOOTSTRAP_RESAMPLES - first), n))
        ratios[first : first + len(picks)] = completion[picks].sum(axis=1) / verify[picks].sum(axis=1)
    # 'nearest': each end is one of the resampled ratios, the order statistic round(q * (R - 1)) (the 51st
    # and 1950th of 2000), not an interpolation between two.
    low, high = np.quantile(ratios, (0.025, 0.975), method="nearest")
    return ratio, (float(low), float(high))
