"""Speculative against autoregressive at each concurrency, and where speculation stops paying.

The baseline at a level is the best autoregressive configuration measured AT
THAT LEVEL, not one chosen in advance (the seed compared DFlash on EP4 with
EP4, while TP8 was faster at C=1). Likewise the speculative side is the best
speculative configuration at that level. Speedup is the ratio of aggregate
output throughput; the per-token latency ratio (TPOT) is given beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .bracketing import BRACKET_FACTOR, added_levels, octave_levels
from .schema import BenchmarkRow, Crossing, Crossover, Interval, LevelComparison

CROSSOVER_METHOD = (
    "Per level, speedup = output tok/s of the best speculative configuration / that of the best autoregressive "
    "configuration at the same concurrency. Where the speedup crosses 1 between two measured levels, the crossover "
    "is interpolated linearly in log2(concurrency) (levels are usually spaced geometrically)."
)


def best_row(rows: Sequence[BenchmarkRow]) -> BenchmarkRow | None:
    """The fastest of `rows` by output tok/s."""
    return max(rows, key=lambda r: r.output_tok_s, default=None)


def ratio_interval(spec: Interval | None, base: Interval | None) -> Interval | None:
    """Bounds of spec/base given each one's interval: [spec low / base high, spec high / base low]."""
    if spec is None or base is None or base[0] <= 0 or base[1] <= 0:
        return None
    return (spec[0] / base[1], spec[1] / base[0])


@dataclass(frozen=True)
class RatioVerdict:
    """One row's throughput over another's at a level: the ratio, its interval, and who wins by the tie rule."""

    ratio: float | None
    interval: Interval | None
    tpot_ratio: float | None  # the bottom row's TPOT p50 / the top row's
    winner: Literal["top", "bottom", "tie"] | None
    notes: list[str]


def ratio_verdict(top: BenchmarkRow, bottom: BenchmarkRow, *, ratio: str, bottom_figure: str) -> RatioVerdict:
    """top / bottom by output tok/s; a tie when the ratio's 95% interval includes 1 or cannot be bounded. `ratio`
    and `bottom_figure` name them in the notes ("speedup", "the autoregressive figure")."""
    if bottom.output_tok_s <= 0:
        return RatioVerdict(None, None, None, None, [])
    notes: list[str] = []
    value = top.output_tok_s / bottom.output_tok_s
    interval = ratio_interval(top.output_tok_s_ci95, bottom.output_tok_s_ci95)
    tpot = bottom.tpot_ms_p50 / top.tpot_ms_p50 if bottom.tpot_ms_p50 and top.tpot_ms_p50 else None
    spreads_known = top.output_tok_s_ci95 is not None and bottom.output_tok_s_ci95 is not None
    winner: Literal["top", "bottom", "tie"]
    if interval is not None and interval[0] <= 1 <= interval[1]:
        winner = "tie"
        notes.append(f"the {ratio}'s interval includes 1: within the measurement spread")
    elif interval is None and spreads_known:
        # The bottom figure's interval reaches 0, so the ratio has no upper bound: nothing is decided.
        winner = "tie"
        notes.append(f"{bottom_figure}'s interval reaches 0: the {ratio} is unbounded, within the measurement spread")
    else:
        winner = "top" if value > 1 else "bottom" if value < 1 else "tie"
    if interval is None and not spreads_known:
        notes.append(f"spread unknown (one sweep per configuration): no interval on the {ratio}")
    return RatioVerdict(value, interval, tpot, winner, notes)


def row_notes(*rows: BenchmarkRow | None) -> list[str]:
    """What makes a compared row's figure doubtful: a saturated client, an unstable level, failed requests."""
    notes = []
    for row in rows:
        if row is not None and row.client_limited:
            notes.append(f"{row.config}: the benchmark client was near saturation; the level may measure the client")
        if row is not None and row.unstable:
            notes.append(f"{row.config}: unstable level (throughput interval wider than +-10%)")
        if row is not None and row.requests_failed:
            notes.append(f"{row.config}: {row.requests_failed} requests failed")
    return notes


Verdict = Literal["speculative", "autoregressive", "tie"]
# A speculative row over the best autoregressive one: what its verdict says.
AGAINST_AUTOREGRESSIVE: dict[str | None, Verdict | None] = {
    "top": "speculative",
    "bottom": "autoregressive",
    "tie": "tie",
    None: None,
}


def compare_levels(rows: Sequence[BenchmarkRow]) -> list[LevelComparison]:
    comparisons = []
    for concurrency in sorted({r.concurrency for r in rows}):
        here = [r for r in rows if r.concurrency == concurrency]
        ar = best_row([r for r in here if not r.speculative])
        spec = best_row([r for r in here if r.speculative])
        notes: list[str] = []
        verdict = RatioVerdict(None, None, None, None, [])
        if ar is None or spec is None:
            notes.append(
                f"only {'speculative' if ar is None else 'autoregressive'} configurations measured at this level"
            )
        else:
            verdict = ratio_verdict(spec, ar, ratio="speedup", bottom_figure="the autoregressive figure")
        comparisons.append(
            LevelComparison(
                concurrency=concurrency,
                best_autoregressive=ar.config if ar else None,
                autoregressive_tok_s=ar.output_tok_s if ar else None,
                best_speculative=spec.config if spec else None,
                speculative_tok_s=spec.output_tok_s if spec else None,
                speedup=verdict.ratio,
                speedup_ci95=verdict.interval,
                tpot_speedup=verdict.tpot_ratio,
                winner=AGAINST_AUTOREGRESSIVE[verdict.winner],
                notes=notes + verdict.notes + row_notes(ar, spec),
            )
        )
    return comparisons


def _interpolate(c0: int, s0: float, c1: int, s1: float) -> float:
    x0, x1 = math.log2(c0), math.log2(c1)
    t = (s0 - 1) / (s0 - s1)
    return 2 ** (x0 + t * (x1 - x0))


def bracketing_levels(rows: Sequence[BenchmarkRow]) -> list[int]:
    """The levels of `rows` measured only to bracket a change of winner (bracketing.py)."""
    configs: dict[int, set[str]] = {}
    for row in rows:
        configs.setdefault(row.concurrency, set()).add(row.config)
    return added_levels({level: len(names) for level, names in configs.items()})


def _bracket_words(crossing: Crossing, comparisons: Sequence[LevelComparison], added: Sequence[int]) -> str:
    """How closely the measured levels bracket one change of winner, and which levels were added to do so."""
    low, high = crossing.between
    if high > BRACKET_FACTOR * low:
        more = ", ".join(f"C={c}" for c in octave_levels(low, high))
        return f"; not bracketed within a factor of {BRACKET_FACTOR} (measure {more} to find it)"
    if low not in added and high not in added:
        return ""
    on = sorted(
        {n for c in comparisons if c.concurrency in added for n in (c.best_speculative, c.best_autoregressive) if n}
    )
    return (
        f"; {', '.join(f'C={c}' for c in added)} {'was' if len(added) == 1 else 'were'} added (on {' and '.join(on)}) "
        f"because the winner changed between levels further apart: the change is bracketed within a factor of "
        f"{BRACKET_FACTOR}"
    )


def find_crossover(comparisons: Sequence[LevelComparison], added: Sequence[int] = ()) -> Crossover:
    """The crossover; `added` are the levels measured only to bracket a change of winner (bracketing_levels)."""
    known = [(c.concurrency, c.speedup) for c in comparisons if c.speedup is not None]
    crossings = []
    for (c0, s0), (c1, s1) in zip(known, known[1:], strict=False):
        if (s0 > 1) != (s1 > 1):
            crossings.append(
                Crossing(
                    direction="stops_paying" if s0 > 1 else "starts_paying",
                    concurrency=round(_interpolate(c0, s0, c1, s1), 1),
                    between=(c0, c1),
                )
            )
    if not known:
        return Crossover(
            kind="unknown",
            concurrency=None,
            between=None,
            crossings=[],
            method=CROSSOVER_METHOD,
            statement="no concurrency level has both a speculative and an autoregressive measurement: "
            "no crossover can be stated",
        )
    lo, hi = known[0][0], known[-1][0]
    stops = next((c for c in crossings if c.direction == "stops_paying"), None)
    if stops is not None:
        statement = (
            f"speculation beats the best autoregressive configuration up to C={stops.between[0]} and loses from "
            f"C={stops.between[1]}: the speedup crosses 1 at about C={stops.concurrency:g} (interpolated)"
        ) + _bracket_words(stops, comparisons, added)
        if len(crossings) > 1:
            statement += "; the winner changes more than once: " + ", ".join(
                f"{c.direction.replace('_', ' ')} near C={c.concurrency:g}" for c in crossings
            )
            ties = {c.concurrency for c in comparisons if c.winner == "tie"}
            tied = sorted({level for c in crossings[1:] for level in c.between if level in ties})
            if tied:
                statement += (
                    f" ({', '.join(f'C={c}' for c in tied)} {'is a tie' if len(tied) == 1 else 'are ties'} "
                    "within the measurement spread: the later changes may be noise)"
                )
        return Crossover(
            kind="between_levels",
            concurrency=stops.concurrency,
            between=stops.between,
            crossings=crossings,
            statement=statement,
            added_levels=list(added),
            method=CROSSOVER_METHOD,
        )
    if crossings:
        first = crossings[0]
        return Crossover(
            kind="starts_paying_only",
            concurrency=None,
            between=None,
            crossings=crossings,
            added_levels=list(added),
            method=CROSSOVER_METHOD,
            statement=f"speculation loses at low load and wins from C={first.between[1]} "
            f"(crossing near C={first.concurrency:g}){_bracket_words(first, comparisons, added)}; it does not stop "
            f"paying within C={lo}..{hi}",
        )
    if all(s > 1 for _, s in known):
        return Crossover(
            kind="beyond_range",
            concurrency=None,
            between=None,
            crossings=[],
            method=CROSSOVER_METHOD,
            statement=f"speculation wins at every level measured (C={lo}..{hi}): the crossover lies beyond C={hi}",
        )
    return Crossover(
        kind="never_wins",
        concurrency=None,
        between=None,
        crossings=[],
        method=CROSSOVER_METHOD,
        statement=f"speculation never beats the best autoregressive configuration at the levels measured "
        f"(C={lo}..{hi})",
    )
