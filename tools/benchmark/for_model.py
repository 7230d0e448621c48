"""The benchmark as a model is shown it: one row per level, the figures a planner compares, flags, warnings.

A full BenchmarkResult is about 9k characters per sweep (latency summaries
with every percentile, client load, counters); the report keeps all of it,
and the workload is what the caller asked for.
The planner needs per level: throughput with its interval, TTFT and TPOT at
p50 and p99, the accept length, how many requests finished or failed, and
whether the level can be trusted. Flags name what is wrong in a word; the
warnings beside the table say it in full, each with what to do.
"""

from __future__ import annotations

from typing import Any

from ..acceptance import DEFAULT_MIN_USEFUL_ACCEPT_LENGTH
from .models import BenchmarkResult, LatencySummary, LevelResult

COLUMNS = ("C", "tok_s", "ci95", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "accept", "ok", "failed", "flags")
# Latencies in ms.


def benchmark_view(result: BenchmarkResult) -> dict[str, Any]:
    # The header as one line, and no accept column on an autoregressive server: one sweep in a dozen is read as a
    # table, and a dozen sit in the history of a run.
    speculative = result.speculative_algorithm is not None
    columns = [c for c in COLUMNS if speculative or c != "accept"]
    return {
        "speculative": result.speculative_algorithm,
        "columns": " ".join(columns),
        "levels": [_row(level, speculative) for level in result.levels],
        "warnings": _warnings(result),
    }


def _warnings(result: BenchmarkResult) -> list[str]:
    """Each kind of warning once, in full, with the levels it came up at (a busy client at four levels is one
    warning, not four copies of its remedy); the sweep's own warnings as they are."""
    by_kind: dict[str, tuple[list[int], str]] = {}
    for level in result.levels:
        for text in level.warnings:
            kind = text.split(" (")[0].split(":")[0]
            levels, first = by_kind.setdefault(kind, ([], text))
            levels.append(level.concurrency)
    grouped = [f"C={', C='.join(str(c) for c in levels)}: {first}" for levels, first in by_kind.values()]
    per_level = {f"C={level.concurrency}: {text}" for level in result.levels for text in level.warnings}
    return grouped + [w for w in result.warnings if w not in per_level]


def _row(level: LevelResult, speculative: bool) -> list[Any]:
    return [
        f"{level.arrival_rate_per_s:g}/s" if level.arrival_rate_per_s is not None else level.concurrency,
        _tenth(level.output_tok_s),
        [_tenth(x) for x in level.output_tok_s_ci95] if level.output_tok_s_ci95 else None,
        _ms(level.ttft, "p50_ms"),
        _ms(level.ttft, "p99_ms"),
        _ms(level.tpot, "p50_ms"),
        _ms(level.tpot, "p99_ms"),
        *([level.accept_length] if speculative else []),
        level.requests_completed,
        level.requests_failed,
        _flags(level),
    ]


def _tenth(value: float | None) -> float | None:
    """Throughput to a tenth of a token a second: what a planner compares; the thirteen digits after it are noise
    (and a dozen sweeps' worth of them in every request). The report keeps every digit."""
    return round(value, 1) if value is not None else None


def _ms(summary: LatencySummary | None, field: str) -> float | None:
    value = getattr(summary, field) if summary is not None and summary.samples else None
    return round(value, 1) if value is not None else None


def _flags(level: LevelResult) -> str:
    """Words for what makes a level's figures doubtful; the warnings say why and what to do."""
    flags = []
    if not level.valid:
        flags.append(f"INVALID: {level.invalid_reason or 'the server failed'}")
    if level.stalled:
        flags.append("stalled")  # unstable far past a level's noise: measure it again
    elif level.unstable:
        flags.append("unstable")
    if level.client is not None and level.client.limited:
        flags.append("client_busy")
    if level.accept_length is not None and level.accept_length < DEFAULT_MIN_USEFUL_ACCEPT_LENGTH:
        flags.append("low_accept")  # the floor the level's warning and the acceptance tool use
    if level.requests_failed:
        flags.append("failures")
    return ", ".join(flags)
