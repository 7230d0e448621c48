"""The throughput/latency table: one row per configuration and concurrency, from the benchmark results.

A configuration measured at the same level by several sweeps gets one row:
the figures are the mean of the sweeps, and the throughput's 95% interval is
the Student-t interval of that mean. A single sweep has an interval only when
its level reports one (`output_tok_s_ci95`); otherwise the spread is unknown
and the row says so (None) rather than pretending to a precision it lacks.
A level the server died in (`valid` False) measured the failure, not the
configuration: it is left out, with a note; so is a level that stalled inside its
window (LevelResult.stalled) where another sweep of it held still. Goodput averages
only the sweeps judged against the report's targets (goodput.py); the server's load
is the mean of the sweeps that sampled it, its KV-cache use the highest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from specops.tools.acceptance_intervals import t975
from specops.tools.benchmark.goodput import GoodputTargets
from specops.tools.benchmark.models import LatencySummary, LevelResult

from .evidence import Evidence
from .goodput import report_targets
from .schema import BenchmarkRow, Interval
from .servers import ServerTimeline


@dataclass(frozen=True)
class _Sample:
    seq: int
    level: LevelResult
    targets: GoodputTargets | None = None  # what the sweep judged goodput against


def benchmark_rows(evidence: Evidence, timeline: ServerTimeline, notes: list[str]) -> list[BenchmarkRow]:
    groups: dict[tuple[str, int], list[_Sample]] = {}
    speculative: dict[str, bool] = {}
    targets = report_targets(evidence)
    for parsed in evidence.benchmarks:
        result = parsed.value
        served = timeline.at(result.port, parsed.call_seq, result.speculative_algorithm)
        speculative[served.config] = served.speculative or result.speculative_algorithm is not None
        for level in result.levels:
            if level.arrival_rate_per_s is not None:
                notes.append(
                    f"seq {parsed.seq}: {served.config} at {level.arrival_rate_per_s:g} requests/s (open loop) is in "
                    "the transcript, not in the table of closed-loop levels"
                )
                continue
            if not level.valid:
                notes.append(
                    f"seq {parsed.seq}: {served.config} at C={level.concurrency} is not valid "
                    f"({level.invalid_reason or 'the server failed'}); left out of the table"
                )
                continue
            if level.total_output_tokens == 0:
                notes.append(
                    f"seq {parsed.seq}: {served.config} at C={level.concurrency} streamed no token "
                    f"({'; '.join(level.errors[:2]) or 'no error given'}); left out of the table"
                )
                continue
            sample = _Sample(parsed.seq, level, result.goodput_targets)
            groups.setdefault((served.config, level.concurrency), []).append(sample)
    for (config, concurrency), samples in groups.items():
        held = [s for s in samples if not s.level.stalled]
        if held and len(held) < len(samples):
            stalled = ", ".join(str(s.seq) for s in samples if s.level.stalled)
            notes.append(
                f"seq {stalled}: {config} at C={concurrency} stalled inside the level; the table keeps the "
                f"measurement{'s' if len(held) > 1 else ''} that held still (seq {', '.join(str(s.seq) for s in held)})"
            )
            groups[(config, concurrency)] = held
    order = list(dict.fromkeys(config for config, _ in groups))
    return [
        _row(config, speculative[config], concurrency, groups[(config, concurrency)], targets)
        for config in order
        for concurrency in sorted(c for name, c in groups if name == config)
    ]


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _latency(samples: list[_Sample], pick: Callable[[LevelResult], LatencySummary | None], field: str) -> float | None:
    return _mean([getattr(summary, field) if (summary := pick(s.level)) is not None else None for s in samples])


def throughput_interval(samples: list[float], reported: Interval | None) -> Interval | None:
    """95% interval of the mean throughput: from repeats, else what a single level reported, else unknown."""
    if len(samples) >= 2:
        mean = sum(samples) / len(samples)
        sd = math.sqrt(sum((v - mean) ** 2 for v in samples) / (len(samples) - 1))
        half = t975(len(samples) - 1) * sd / math.sqrt(len(samples))
        return (mean - half, mean + half)
    return reported


def _goodput_and_load(samples: list[_Sample], targets: GoodputTargets | None) -> dict[str, float | int | None]:
    """The row's goodput (over the sweeps judged against the report's targets) and the server's load."""
    judged = [s.level for s in samples if targets is not None and s.targets == targets]
    judged = [level for level in judged if level.goodput_tok_s is not None]
    counted = sum(level.requests_completed + level.requests_failed for level in judged)
    loads = [s.level.server_metrics for s in samples if s.level.server_metrics is not None]
    usage = [load.token_usage_max for load in loads if load.token_usage_max is not None]
    return {
        "goodput_tok_s": _mean([level.goodput_tok_s for level in judged]),
        "good_fraction": sum(level.good_requests or 0 for level in judged) / counted if counted else None,
        "requests_judged": counted if judged else None,
        "server_running_mean": _mean([load.running_mean for load in loads]),
        "server_queued_mean": _mean([load.queued_mean for load in loads]),
        "server_token_usage_max": max(usage) if usage else None,
    }


def _row(
    config: str, speculative: bool, concurrency: int, samples: list[_Sample], targets: GoodputTargets | None = None
) -> BenchmarkRow:
    levels = [s.level for s in samples]
    tok_s = [level.output_tok_s for level in levels]
    # A level model that reports its own interval (newer benchmark tool) is used when there is one sweep.
    reported = getattr(levels[0], "output_tok_s_ci95", None) if len(levels) == 1 else None
    limited = [level.client.limited for level in levels if level.client is not None]
    unstable = [level.unstable for level in levels if hasattr(level, "unstable")]
    return BenchmarkRow(
        config=config,
        speculative=speculative,
        concurrency=concurrency,
        achieved_concurrency=sum(level.achieved_concurrency for level in levels) / len(levels),
        output_tok_s=sum(tok_s) / len(tok_s),
        output_tok_s_ci95=throughput_interval(tok_s, tuple(reported) if reported else None),
        samples=len(samples),
        requests=sum(level.requests_completed + level.requests_cut for level in levels),
        requests_failed=sum(level.requests_failed for level in levels),
        ttft_ms_p50=_latency(samples, lambda lv: lv.ttft, "p50_ms"),
        ttft_ms_p90=_latency(samples, lambda lv: lv.ttft, "p90_ms"),
        ttft_ms_p99=_latency(samples, lambda lv: lv.ttft, "p99_ms"),
        itl_ms_p50=_latency(samples, lambda lv: lv.itl_per_token, "p50_ms"),
        itl_ms_p90=_latency(samples, lambda lv: lv.itl_per_token, "p90_ms"),
        itl_ms_p99=_latency(samples, lambda lv: lv.itl_per_token, "p99_ms"),
        tpot_ms_p50=_latency(samples, lambda lv: lv.tpot, "p50_ms"),
        tpot_per_chunk_ms_p50=_latency(samples, lambda lv: getattr(lv, "tpot_per_chunk", None), "p50_ms"),
        inter_chunk_gap_ms_p50=_latency(samples, lambda lv: lv.inter_chunk_gap, "p50_ms"),
        e2e_ms_p50=_latency(samples, lambda lv: lv.e2e, "p50_ms"),
        tokens_per_chunk=_mean([level.tokens_per_chunk for level in levels]),
        accept_length=_mean([level.accept_length for level in levels]),
        client_limited=any(limited) if limited else None,
        unstable=any(unstable) if unstable else None,
        seqs=[s.seq for s in samples],
        **_goodput_and_load(samples, targets),
    )
