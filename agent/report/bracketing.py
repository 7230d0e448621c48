"""Bracketing the crossover: where the winner changes between two measured levels far apart, the levels between.

A sweep of 1, 32, 64, ... that finds speculation winning at C=1 and losing at
C=32 knows only that the crossover lies somewhere in a 32x range; interpolating
in log2(concurrency) there reads a figure ("about C=29") from nothing measured.
So where the winner changes between two adjacent levels more than BRACKET_FACTOR
apart, the octaves between them are measured too (C=2, 4, 8, 16 between 1 and
32), on the fastest speculative and the fastest autoregressive configuration at
the two ends: then the change lies between two measured levels at most a factor
of 2 apart. The playbook measures them; the report names the levels so added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

BRACKET_FACTOR = 2


def octave_levels(low: int, high: int) -> list[int]:
    """low*2, low*4, ... below `high`: every gap of the result, with `low` and `high`, is at most a factor of 2."""
    levels, level = [], low * BRACKET_FACTOR
    while level < high:
        levels.append(level)
        level *= BRACKET_FACTOR
    return levels


def unbracketed(speedups: Sequence[tuple[int, float]]) -> list[tuple[int, int]]:
    """Adjacent measured levels (ascending speedups per concurrency) where the winner changes (the speedup crosses
    1) and the higher level is more than BRACKET_FACTOR times the lower."""
    ordered = sorted(speedups)
    return [
        (c0, c1)
        for (c0, s0), (c1, s1) in zip(ordered, ordered[1:], strict=False)
        if (s0 > 1) != (s1 > 1) and c1 > BRACKET_FACTOR * c0
    ]


def added_levels(configs_per_level: Mapping[int, int]) -> list[int]:
    """The levels measured only to bracket a change of winner: each on at most two configurations (the fastest of
    each kind) and lying between two levels measured on more."""
    levels = sorted(configs_per_level)
    added = []
    for level in levels:
        below = [configs_per_level[c] for c in levels if c < level and configs_per_level[c] > 2]
        above = [configs_per_level[c] for c in levels if c > level and configs_per_level[c] > 2]
        if configs_per_level[level] <= 2 and below and above:
            added.append(level)
    return added
