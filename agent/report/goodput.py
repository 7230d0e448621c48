"""Goodput in the report: the targets the rows were judged against, and the markdown section per configuration.

Each benchmark result carries the targets its levels were judged against
(BenchmarkResult.goodput_targets, tools/benchmark/goodput.py). The report
states one set: the one most sweeps with per-request timings used; a row's
goodput averages only the sweeps judged against it (rows.py), and sweeps judged
against other targets are named in a note.
"""

from __future__ import annotations

from collections import Counter

from specops.tools.benchmark.goodput import GoodputTargets, goodput_method

from .evidence import Evidence
from .schema import GoodputTargetsUsed, Report


def report_targets(evidence: Evidence) -> GoodputTargets | None:
    """The targets the report states: those most sweeps with goodput figures were judged against (the first seen
    on a tie); None when no sweep has a goodput figure."""
    judged = [
        parsed.value.goodput_targets
        for parsed in evidence.benchmarks
        if any(level.goodput_tok_s is not None for level in parsed.value.levels)
    ]
    if not judged:
        return None
    counts = Counter(judged)
    return max(dict.fromkeys(judged), key=lambda t: counts[t])


def goodput_targets_used(evidence: Evidence, notes: list[str]) -> GoodputTargetsUsed | None:
    """The report's goodput_targets; a note for each sweep judged against others (left out of the rows' goodput)."""
    targets = report_targets(evidence)
    if targets is None:
        return None
    for parsed in evidence.benchmarks:
        other = parsed.value.goodput_targets
        if other != targets and any(level.goodput_tok_s is not None for level in parsed.value.levels):
            notes.append(
                f"seq {parsed.seq}: goodput judged against {other.words()}, not the report's {targets.words()}; "
                "left out of the goodput columns"
            )
    return GoodputTargetsUsed(ttft_ms=targets.ttft_ms, tpot_ms=targets.tpot_ms, method=goodput_method(targets).strip())


def goodput_markdown(report: Report) -> list[str]:
    """report.md's goodput section: per configuration and level, goodput against tok/s and the share of good
    requests, with the targets; the server's load beside them where it was sampled."""
    targets = report.goodput_targets
    rows = [r for r in report.benchmarks if r.goodput_tok_s is not None]
    if targets is None or not rows:
        return []
    load = any(r.server_running_mean is not None or r.server_token_usage_max is not None for r in rows)
    lines = [
        "## Goodput against latency targets",
        "",
        f"A request is good when the server finished it with TTFT <= {targets.ttft_ms:g} ms and TPOT <= "
        f"{targets.tpot_ms:g} ms (modelled time on a simulated host). Goodput is the output tok/s of good requests, "
        "over the same window as tok/s; % good is good / (completed + failed), of that many requests judged (requests "
        "cut at a timed level's end are not judged; a level that cuts most of them judges few).",
        "",
    ]
    header = ["config", "C", "goodput tok/s", "tok/s", "% good"]
    if load:
        header += ["running (mean)", "queued (mean)", "KV use (max)"]
    table = []
    for r in rows:
        cells: list[object] = [
            r.config,
            r.concurrency,
            f"{r.goodput_tok_s:.1f}",
            f"{r.output_tok_s:.1f}",
            f"{r.good_fraction:.0%} of {r.requests_judged}" if r.good_fraction is not None else None,
        ]
        if load:
            cells += [
                f"{r.server_running_mean:.1f}" if r.server_running_mean is not None else None,
                f"{r.server_queued_mean:.1f}" if r.server_queued_mean is not None else None,
                f"{r.server_token_usage_max:.0%}" if r.server_token_usage_max is not None else None,
            ]
        table.append(cells)
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join("-" if c is None else str(c).replace("|", "\\|") for c in row) + " |" for row in table]
    return lines + [""]
