"""The policy's words checked against the evidence: figures it quotes, wins it claims, what it says it left.

The final answer is free text; what can be checked is what it states as fact:
throughput (N tok/s, at C=K when it says so), speedups (Nx), acceptance
lengths, the crossover, who wins at a concurrency, its status, and what it left
running. A figure with a concurrency that no measurement there supports is
`contradicted`; one that no measurement anywhere supports is `unsupported`.
Words the checks cannot read are left alone: a flag is raised only on a
figure or a stated winner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from specops.agent.final import FinalAnswer

from .schema import AcceptanceSection, BenchmarkRow, Crossover, Failure, Flag, LeftRunning, LevelComparison

THROUGHPUT_TOLERANCE = 0.10  # relative: quoted figures are usually rounded
SPEEDUP_TOLERANCE = 0.08
ACCEPTANCE_TOLERANCE = 0.15  # absolute, in tokens per verify step

_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
_CLAUSE = re.compile(r",|;|\band\b|\bbut\b|\bwhile\b|\bwhereas\b")
_TOK_S = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(?:tok(?:ens)?\s*/\s*s(?:ec)?\b|tokens per second)", re.IGNORECASE)
# "1.3x", not "8x RTX PRO 6000" or "8x H200" (a GPU count).
_SPEEDUP = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:x|×)(?![\w])(?!\s*(?:GPUs?\b|RTX|NVIDIA|[A-Z]\d))", re.IGNORECASE)
_CONCURRENCY = re.compile(r"\bC\s*[=≈~]\s*(\d+)|\bconcurrency\s*(?:of\s*|=\s*)?(\d+)", re.IGNORECASE)
_ACCEPT_WORDS = re.compile(r"accept|\btau\b|τ", re.IGNORECASE)
# A bare decimal (3.8), not part of a name or version (Kimi-K2.6, v0.5.10).
_DECIMAL = re.compile(r"(?<![\w.])(?<![A-Za-z]-)(\d{1,2}\.\d+)(?![\d.]*\s*(?:x|×|tok|%))", re.IGNORECASE)
_CROSSOVER = re.compile(
    r"cross(?:over|es|ing)?\b[^.]*?(?:\bC\s*[=≈~]\s*|concurrency\s*(?:of\s*)?|\b(?:at|near|around|about)\s+)(\d+)",
    re.IGNORECASE,
)
_SPECULATIVE = re.compile(r"dflash|speculat|drafter|eagle", re.IGNORECASE)
_WINS = re.compile(r"\b(wins?|winning|faster|beats?|ahead|outperforms?|better|pays)\b", re.IGNORECASE)
_LOSES = re.compile(r"\b(lose[sd]?|losing|slower|behind|worse|below)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|never|no longer)\b|n't", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _levels(text: str) -> list[int]:
    return list(dict.fromkeys(int(a or b) for a, b in _CONCURRENCY.findall(text)))


def _rounding(text: str) -> float:
    """Half a unit of the quoted figure's last digit: "0.01" may stand for anything in [0.005, 0.015)."""
    digits = text.partition(".")[2]
    return 0.5 * 10.0 ** -len(digits)


def _near(value: float, candidates: Iterable[float], relative: float, rounding: float = 0.0) -> bool:
    """Within the relative tolerance of a candidate, or within the quoted figure's own rounding of it (a small
    figure printed to two decimals, 0.01x for a measured 0.0113x, is as right as its digits can be)."""
    return any(abs(value - c) <= max(relative * abs(c), rounding) + 1e-12 for c in candidates)


def _throughput_flags(source: str, sentence: str, rows: Sequence[BenchmarkRow]) -> list[Flag]:
    flags = []
    levels = _levels(sentence)
    for match in _TOK_S.finditer(sentence):
        value, rounding = _number(match.group(1)), _rounding(match.group(1))
        if levels:
            here = [r for r in rows if r.concurrency in levels]
            if not _near(value, (r.output_tok_s for r in here), THROUGHPUT_TOLERANCE, rounding):
                measured = ", ".join(f"{r.config} {r.output_tok_s:.1f}" for r in here) or "nothing measured there"
                flags.append(Flag(source=source, claim=sentence, kind="contradicted",
                                  evidence=f"{value:g} tok/s at C={'/'.join(map(str, levels))}: measured {measured}"))
        elif not _near(value, (r.output_tok_s for r in rows), THROUGHPUT_TOLERANCE, rounding):
            flags.append(Flag(source=source, claim=sentence, kind="unsupported",
                              evidence=f"no benchmark row within {THROUGHPUT_TOLERANCE:.0%} of {value:g} tok/s"))
    return flags


def _speedup_flags(source: str, sentence: str, comparisons: Sequence[LevelComparison]) -> list[Flag]:
    flags = []
    levels = _levels(sentence)
    for match in _SPEEDUP.finditer(sentence):
        value = _number(match.group(1))
        here = [c for c in comparisons if not levels or c.concurrency in levels]
        known = [v for c in here for v in (c.speedup, c.tpot_speedup) if v is not None]
        if not _near(value, known, SPEEDUP_TOLERANCE, _rounding(match.group(1))):
            measured = ", ".join(f"C={c.concurrency}: {c.speedup:.2f}x" for c in here if c.speedup is not None)
            flags.append(Flag(source=source, claim=sentence, kind="contradicted" if levels else "unsupported",
                              evidence=f"{value:g}x: measured speedups {measured or 'none'}"))
    return flags


def _acceptance_flags(source: str, sentence: str, acceptance: Sequence[AcceptanceSection]) -> list[Flag]:
    if not _ACCEPT_WORDS.search(sentence):
        return []
    values = [m.group(1) for m in _DECIMAL.finditer(_TOK_S.sub("", _SPEEDUP.sub("", sentence)))]
    if not values:
        return []
    stats = [s for a in acceptance for s in (a.overall, *a.categories)]
    bounds = [v for s in stats for v in (s.request_mean, s.token_weighted,
                                          *(s.request_mean_ci95 or ()), *(s.token_weighted_ci95 or ()))]
    if not bounds:
        return [Flag(source=source, claim=sentence, kind="unsupported", evidence="no acceptance eval was run")]
    low, high = min(bounds) - ACCEPTANCE_TOLERANCE, max(bounds) + ACCEPTANCE_TOLERANCE
    return [
        Flag(source=source, claim=sentence, kind="contradicted",
             evidence=f"acceptance {v}: measured {min(bounds):.2f}..{max(bounds):.2f} over categories, both weightings "
             "and their intervals")
        for v in values if not low <= float(v) <= high
    ]


def _crossover_flags(source: str, sentence: str, crossover: Crossover) -> list[Flag]:
    match = _CROSSOVER.search(sentence)
    if match is None:
        return []
    claimed = int(match.group(1))
    if crossover.kind == "between_levels" and crossover.between is not None:
        lo, hi = crossover.between
        if lo <= claimed <= hi:
            return []
    elif crossover.kind == "unknown":
        return [Flag(source=source, claim=sentence, kind="unsupported", evidence=crossover.statement)]
    return [Flag(source=source, claim=sentence, kind="contradicted", evidence=crossover.statement)]


def _winner_flags(source: str, sentence: str, comparisons: Sequence[LevelComparison]) -> list[Flag]:
    if not _SPECULATIVE.search(sentence):
        return []
    by_level = {c.concurrency: c for c in comparisons}
    flags = []
    for clause in _CLAUSE.split(sentence):
        if _NEGATION.search(clause):
            continue  # "does not win" reads both ways to a pattern: leave it
        says = "speculative" if _WINS.search(clause) else "autoregressive" if _LOSES.search(clause) else None
        if says is None:
            continue
        for level in _levels(clause):
            found = by_level.get(level)
            if found is None or found.winner is None:
                flags.append(Flag(source=source, claim=sentence, kind="unsupported",
                                  evidence=f"no comparison of both kinds at C={level}"))
            elif found.winner not in (says, "tie"):
                flags.append(Flag(source=source, claim=sentence, kind="contradicted",
                                  evidence=f"at C={level} the {found.winner} side won: {found.best_speculative} "
                                  f"{found.speculative_tok_s:.1f} vs {found.best_autoregressive} "
                                  f"{found.autoregressive_tok_s:.1f} tok/s"))
    return flags


def check_claims(
    final: FinalAnswer | None, *, status: str, rows: Sequence[BenchmarkRow], comparisons: Sequence[LevelComparison],
    crossover: Crossover, acceptance: Sequence[AcceptanceSection], failures: Sequence[Failure], running: LeftRunning,
) -> list[Flag]:
    if final is None:
        return []
    flags: list[Flag] = []
    texts = [("summary", final.summary)] + ([("recommendation", final.recommendation)] if final.recommendation else [])
    for source, text in texts:
        for sentence in _sentences(text):
            flags += _throughput_flags(source, sentence, rows)
            flags += _speedup_flags(source, sentence, comparisons)
            flags += _acceptance_flags(source, sentence, acceptance)
            flags += _crossover_flags(source, sentence, crossover)
            flags += _winner_flags(source, sentence, comparisons)
    unresolved = [f for f in failures if f.status == "unresolved"]
    if final.status == "completed" and unresolved and not final.unresolved:
        flags.append(Flag(source="unresolved", claim="completed, with nothing listed as unresolved", kind="contradicted",
                          evidence=f"{len(unresolved)} failure(s) never recovered: "
                          + "; ".join(f"seq {f.seq} {f.tool} {f.kind}" for f in unresolved)))
    if final.status == "completed" and status not in ("completed",):
        flags.append(Flag(source="status", claim=f"status {final.status}", kind="contradicted",
                          evidence=f"the run ended {status}"))
    if running.servers and not final.left_running:
        flags.append(Flag(source="left_running", claim="nothing listed as left running", kind="contradicted",
                          evidence="still running: " + ", ".join(f"{s.config} on port {s.port} (pid {s.pid})"
                                                                 for s in running.servers)))
    if final.left_running and not running.servers and not running.downloads:
        flags.append(Flag(source="left_running", claim="; ".join(final.left_running), kind="unsupported",
                          evidence="every server this run launched was stopped, and no download was left running"))
    return flags
