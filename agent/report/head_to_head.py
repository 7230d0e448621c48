"""Drafter against drafter at each concurrency: the question a run comparing drafters was asked.

Each side is its drafter's fastest configuration at the level (the best layout
of one need not be the other's), so the ratio compares the drafters as each
would be served. The ratio, its interval and the tie rule are comparison.py's
(ratio_verdict), and so is each side's speedup over the best autoregressive
configuration at the level: the figure compare_levels gives that drafter alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .comparison import AGAINST_AUTOREGRESSIVE, best_row, ratio_verdict, row_notes
from .schema import BenchmarkRow, DrafterAtLevel, HeadToHeadLevel


def rows_by_drafter(rows: Sequence[BenchmarkRow], serving: Mapping[str, str]) -> dict[str, list[BenchmarkRow]]:
    """The speculative rows of each drafter (`serving`: configuration name -> drafter), in the order first measured."""
    grouped: dict[str, list[BenchmarkRow]] = {}
    for row in rows:
        drafter = serving.get(row.config) if row.speculative else None
        if drafter is not None:
            grouped.setdefault(drafter, []).append(row)
    return grouped


def drafters_head_to_head(
    rows: Sequence[BenchmarkRow], serving: Mapping[str, str], read_order: Sequence[str]
) -> list[HeadToHeadLevel]:
    """Every pair of benchmarked drafters (a read before b), level by level; empty with fewer than two."""
    grouped = rows_by_drafter(rows, serving)
    ranked = [d for d in read_order if d in grouped] + [d for d in grouped if d not in read_order]
    baseline = [r for r in rows if not r.speculative]
    return [
        level
        for i, a in enumerate(ranked)
        for b in ranked[i + 1 :]
        for level in head_to_head(a, grouped[a], b, grouped[b], baseline)
    ]


def head_to_head(
    a: str, a_rows: Sequence[BenchmarkRow], b: str, b_rows: Sequence[BenchmarkRow], baseline: Sequence[BenchmarkRow]
) -> list[HeadToHeadLevel]:
    """a's rows against b's at each level both were measured at; `baseline` holds the autoregressive rows."""
    levels = sorted({r.concurrency for r in a_rows} & {r.concurrency for r in b_rows})
    compared = []
    for concurrency in levels:
        top = best_row([r for r in a_rows if r.concurrency == concurrency])
        bottom = best_row([r for r in b_rows if r.concurrency == concurrency])
        assert top is not None and bottom is not None, "both were measured at the levels compared"
        ar = best_row([r for r in baseline if r.concurrency == concurrency and not r.speculative])
        verdict = ratio_verdict(top, bottom, ratio="ratio", bottom_figure=f"{b}'s figure")
        winner = {"top": a, "bottom": b, "tie": "tie", None: None}[verdict.winner]
        compared.append(
            HeadToHeadLevel(
                concurrency=concurrency,
                a=_side(a, top, ar),
                b=_side(b, bottom, ar),
                ratio=verdict.ratio,
                ratio_ci95=verdict.interval,
                tpot_ratio=verdict.tpot_ratio,
                winner=winner,
                best_autoregressive=ar.config if ar else None,
                autoregressive_tok_s=ar.output_tok_s if ar else None,
                notes=verdict.notes + row_notes(top, bottom),
            )
        )
    return compared


def _side(name: str, row: BenchmarkRow, ar: BenchmarkRow | None) -> DrafterAtLevel:
    """One side at a level, with its speedup over the best autoregressive row as compare_levels states it."""
    against = (
        ratio_verdict(row, ar, ratio="speedup", bottom_figure="the autoregressive figure")
        if ar is not None and row.speculative
        else None
    )
    return DrafterAtLevel(
        drafter=name,
        config=row.config,
        output_tok_s=row.output_tok_s,
        output_tok_s_ci95=row.output_tok_s_ci95,
        vs_autoregressive=against.ratio if against else None,
        vs_autoregressive_ci95=against.interval if against else None,
        vs_autoregressive_winner=AGAINST_AUTOREGRESSIVE[against.winner] if against else None,
    )
