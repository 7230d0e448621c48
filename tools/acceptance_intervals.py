"""The two acceptance-length averages and their 95% intervals.

- Request mean: every request counts once (DFlash's server benchmark, `specforge benchmark`).
  Interval: Student's t, mean +- t(0.975, n-1) * s / sqrt(n).
- Token weighted: sum(completion_tokens) / sum(spec_verify_ct) (SpecForge's bench_eagle3).
  A ratio of sums has no simple closed-form interval: a percentile bootstrap over
  requests (resampled with replacement, fixed seed, so the same data gives the same interval).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260206
# t(0.975, df) for df = 1..30; past 30 the Cornish-Fisher expansion below is accurate to 1e-4.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)
_Z975 = 1.959964


def t975(df: int) -> float:
    if df < 1:
        raise ValueError("a t interval needs at least two values")
    if df <= len(_T975):
        return _T975[df - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def request_mean_interval(values: Sequence[float]) -> tuple[float, tuple[float, float] | None]:
    """(mean, 95% t-interval); the interval is None for a single value."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return mean, (mean - half, mean + half)


def token_weighted_interval(
    completion_tokens: Sequence[int], verify_steps: Sequence[int]
) -> tuple[float, tuple[float, float] | None]:
    """(sum c / sum v, 95% percentile-bootstrap interval); None for a single request."""
    n = len(completion_tokens)
    ratio = sum(completion_tokens) / sum(verify_steps)
    if n < 2:
        return ratio, None
    rng = random.Random(BOOTSTRAP_SEED)
    ratios = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        picks = [rng.randrange(n) for _ in range(n)]
        ratios.append(sum(completion_tokens[i] for i in picks) / sum(verify_steps[i] for i in picks))
    ratios.sort()
    return ratio, (ratios[int(0.025 * BOOTSTRAP_RESAMPLES)], ratios[int(0.975 * BOOTSTRAP_RESAMPLES) - 1])
