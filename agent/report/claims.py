"""The policy's words checked against the evidence: figures it quotes, wins it claims, what it says it left.

The final answer is free text; what can be checked is what it states as fact:
throughput (N tok/s, at C=K when it says so), speedups and slowdowns (Nx),
acceptance lengths, the crossover, who wins at a concurrency (between the
configurations a clause names, else the best of each side), its status, and
what it left running. Each number is first read as the quantity it stands for
(a version, a concurrency, a throughput, a factor, an acceptance length), so
that "SGLang 0.5.10" is never an acceptance of 0.5 and "C1 32.2" is a
throughput. A figure with a concurrency that no measurement there supports is
`contradicted`; one that no measurement anywhere supports is `unsupported`.
Any tool result of the run backs a figure: an acceptance length may be the
acceptance eval's or a benchmark level's own. Words the checks cannot read are
left alone: a flag is raised only on a figure or a stated winner.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from specops.agent.final import FinalAnswer

from .comparison import compare_levels
from .evidence import ToolExchange
from .schema import (
    AcceptanceSection,
    BenchmarkRow,
    Crossover,
    Failure,
    Flag,
    HeadToHeadLevel,
    LeftRunning,
    LevelComparison,
)

THROUGHPUT_TOLERANCE = 0.10  # relative: quoted figures are usually rounded
SPEEDUP_TOLERANCE = 0.08
ACCEPTANCE_TOLERANCE = 0.15  # absolute, in tokens per verify step
# tau counts the bonus token, so it is at least 1 (a figure below is a draft accept *rate*); no drafter here verifies
# more than 16 tokens a step, so a larger figure is some other quantity (a throughput without its unit).
ACCEPTANCE_RANGE = (1.0, 16.0)

_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
_CLAUSE = re.compile(r",|;|\band\b|\bbut\b|\bwhile\b|\bwhereas\b")
# 1,530.5 or 97.9; not a digit of a name (TP8, K2.6, p99) or the tail of another number.
_NUM = r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

# Versions are names, not figures: v0.5.23, 0.5.10 (three parts), SGLang 0.5, CUDA 13.0.
_VERSION = re.compile(
    r"\bv\d+(?:\.\d+)+\w*"
    r"|(?<![\w.])\d+\.\d+\.\d+\w*"
    r"|\b(?:version|sglang|vllm|cuda|python|torch|pytorch|transformers|flashinfer|triton|nccl|driver|ubuntu)"
    r"\s*v?\d+\.\d+(?![\d.]*\s*(?:tok|x\b|×))",
    re.IGNORECASE,
)
# A concurrency: C=64, C≈64, C64, c=64, concurrency 64; a range of them: C=64-256, from C=1 to C=32, above C=32,
# up to C=32, C>=64.
_LEVEL = re.compile(
    r"(?:\b(?P<word>(?:at\s+or\s+)?(?:above|below)|beyond|past|from|under|up\s+to|until|through)\s+)?"
    r"\b(?:C\s*(?P<op>[=≈~]|[<>]=?|[≥≤])\s*|C(?=\d)|concurrency\s*(?:of\s*|=\s*)?)(?P<lo>\d+)"
    r"(?:\s*(?:-|–|\.\.)\s*(?:C\s*=?\s*)?(?P<hi>\d+)(?!\.?\d)|\s+to\s+C\s*=?\s*(?P<to>\d+))?",
    re.IGNORECASE,
)
OPEN = 1 << 30  # the top of "above C=32": every level measured
# How a word or operator before a concurrency opens it into a range: (lowest level included, highest).
_LEVEL_BOUNDS: dict[str, Callable[[int], tuple[int, int]]] = {
    **dict.fromkeys(("above", "beyond", "past", ">"), lambda c: (c + 1, OPEN)),
    **dict.fromkeys(("from", "at or above", ">=", "≥"), lambda c: (c, OPEN)),
    **dict.fromkeys(("below", "under", "<"), lambda c: (0, c - 1)),
    **dict.fromkeys(("up to", "until", "through", "at or below", "<=", "≤"), lambda c: (0, c)),
}
_TOK_S = re.compile(rf"({_NUM})\s*(?:tok(?:ens)?\s*/\s*s(?:ec)?\b|t/s\b|tps\b|tokens per second)", re.IGNORECASE)
# "1.3x", not "8x RTX PRO 6000" or "8x H200" (a GPU count).
_FACTOR = re.compile(rf"({_NUM})\s*(?:x|×)(?![\w])(?!\s*(?:GPUs?\b|RTX|NVIDIA|[A-Z]\d))", re.IGNORECASE)
# Units that make a number something else than a throughput or an acceptance length.
_OTHER_UNIT = (
    r"(?:[x×%°]|(?:ms|s|secs?|seconds?|min|minutes?|h|hours?|[KMGT]i?B|G|[KMG]?Hz|W|requests?|reqs?|prompts?"
    r"|GPUs?|concurrent|layers?)\b)"
)
# "C1 32.2", "C=256: 950": a bare number right after a concurrency is that level's throughput, when it ends the phrase
# or is compared ("C1 32.2 vs 33.9"); "C=64 2 of 3 configs" is not.
_AT_LEVEL = re.compile(
    rf"{_LEVEL.pattern}\s*:?\s+(?P<figure>{_NUM})(?![\d.]*\s*{_OTHER_UNIT})"
    r"(?=\s*(?:[,;:)(/|]|\.(?!\d)|$|vs\b|versus\b|against\b|and\b|or\b|->|→))",
    re.IGNORECASE,
)
# Two numbers joined so that they share a unit: "32.2 vs 33.9 tok/s", "1.4-2.9x", "from 97.9 to 124 tok/s".
_JOIN = r"\s*(?:-|–|—|to|vs\.?|versus|against|/|->|→)\s*"
_JOINED_BEFORE = re.compile(rf"({_NUM}){_JOIN}$", re.IGNORECASE)
_JOINED_AFTER = re.compile(rf"{_JOIN}({_NUM})(?![\d.]*\s*{_OTHER_UNIT})", re.IGNORECASE)
# A bare decimal (3.8), not part of a name or version (Kimi-K2.6, Llama-3.1-8B) and not carrying another unit.
_DECIMAL = re.compile(rf"(?<![\w.])(?<![A-Za-z]-)(\d{{1,2}}\.\d+)(?!\.?\d)(?!\s*{_OTHER_UNIT})", re.IGNORECASE)
_ACCEPT_WORDS = re.compile(r"accept|\btau\b|τ", re.IGNORECASE)
# Which way a factor points: the first of these after it, within its clause.
_SLOWER = re.compile(
    r"\b(?:slower|slowdown|behind|worse|(?:lower|less|fewer)\s+(?:throughput|tok)"
    r"|(?:higher|longer|more)\s+(?:latency|tpot|itl|ttft))",
    re.IGNORECASE,
)
_FASTER = re.compile(
    r"\b(?:faster|speed-?up|ahead|better|(?:higher|more)\s+(?:throughput|tok)|(?:lower|shorter)\s+(?:latency|tpot|itl))",
    re.IGNORECASE,
)
_CROSSOVER_WORD = re.compile(r"cross(?:over|es|ing)?\b", re.IGNORECASE)
# After the word: a concurrency, or "at/near/around 48" (an integer with no unit: not "at 1.0x").
_CROSSOVER_AT = re.compile(
    r"(?:\bC\s*[=≈~]?\s*|concurrency\s*(?:of\s*)?|\b(?:at|near|around|about)\s+(?:~\s*)?)(\d+)(?![\d.]*\s*[x×%])(?!\.\d)",
    re.IGNORECASE,
)
_SPECULATIVE = re.compile(r"dflash|speculat|drafter|eagle", re.IGNORECASE)
_THAN_SPECULATIVE = re.compile(rf"\bthan\s+(?:the\s+|a\s+)?[\w+.\-]*(?:{_SPECULATIVE.pattern})", re.IGNORECASE)
_WINS = re.compile(r"\b(wins?|winning|faster|beats?|ahead|outperforms?|better|pays)\b", re.IGNORECASE)
# "below the baseline" is a loss; "below C=64" names levels.
_LOSES = re.compile(
    r"\b(lose[sd]?|losing|slower|behind|worse|below(?!\s+(?:C\s*[=≈~<]?\s*\d|concurrency)))\b", re.IGNORECASE
)
_NEGATION = re.compile(r"\b(not|never|no longer)\b|n't", re.IGNORECASE)

Kind = Literal["tok_s", "speedup", "slowdown", "acceptance"]
Levels = list[tuple[int, int]]  # concurrency ranges named, a single level as (c, c)


@dataclass(frozen=True)
class Figure:
    """A number of the sentence, read as the quantity it stands for."""

    kind: Kind
    text: str  # as quoted: its digits say how it was rounded

    @property
    def value(self) -> float:
        return _number(self.text)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text with these spans overwritten (same length, so positions hold): what is read is not read again."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = "\0" * (end - start)
    return "".join(chars)


def _without_versions(text: str) -> str:
    return _blank(text, (m.span() for m in _VERSION.finditer(text)))


def _level_range(match: re.Match[str]) -> tuple[int, int]:
    low = int(match["lo"])
    if high := match["hi"] or match["to"]:
        return (low, int(high))
    word = " ".join((match["word"] or "").lower().split())
    bounds = _LEVEL_BOUNDS.get(word) or _LEVEL_BOUNDS.get(match["op"] or "")
    return bounds(low) if bounds else (low, low)


def _levels(text: str) -> Levels:
    return list(dict.fromkeys(_level_range(m) for m in _LEVEL.finditer(_without_versions(text))))


def _at(levels: Levels, concurrency: int) -> bool:
    return any(lo <= concurrency <= hi for lo, hi in levels)


def _named(levels: Levels) -> str:
    return "/".join(
        str(lo) if lo == hi else f">={lo}" if hi == OPEN else f"<={hi}" if lo == 0 else f"{lo}-{hi}"
        for lo, hi in levels
    )


def _factor_kind(after: str) -> Kind:
    """A factor is a slowdown when the words after it say so ("1.4x-2.9x slower", "a 1.6x slowdown"), or when it
    makes the speculative side the one compared against ("tp8-ep4 is 1.6x faster than DFlash")."""
    clause = after[: m.start()] if (m := _CLAUSE.search(after)) else after
    slower, faster = _SLOWER.search(clause), _FASTER.search(clause)
    says_slower = slower is not None and (faster is None or slower.start() < faster.start())
    return "slowdown" if says_slower != bool(_THAN_SPECULATIVE.search(clause)) else "speedup"


def read_figures(sentence: str) -> list[Figure]:
    """Every number of the sentence that is a throughput, a factor or an acceptance length, in the order written.

    Numbers are read most specific first and blanked once read: versions, numbers with a unit (tok/s, x), a
    number beside a concurrency (its throughput), numbers joined to a read one ("32.2 vs 33.9 tok/s"), the
    concurrencies themselves; what is left is an acceptance length only where the sentence speaks of acceptance.
    """
    text = _without_versions(sentence)
    read: list[tuple[int, int, Figure]] = []  # (start, end) of the whole phrase read, and its figure

    def keep(kind: Kind, match: re.Match[str], group: int | str = 1, whole: bool = True) -> tuple[int, int, Figure]:
        nonlocal text
        start, end = match.span() if whole else match.span(group)
        read.append((start, end, Figure(kind, match.group(group))))
        text = _blank(text, [(start, end)])
        return read[-1]

    for m in _TOK_S.finditer(text):
        keep("tok_s", m)
    for m in _FACTOR.finditer(text):
        keep(_factor_kind(sentence[m.end() :]), m)
    for m in _AT_LEVEL.finditer(text):
        keep("tok_s", m, group="figure", whole=False)
    text = _blank(text, (m.span() for m in _LEVEL.finditer(text)))
    pending = list(read)  # a chain "A vs B vs C tok/s" is read one neighbour at a time
    while pending:
        start, end, figure = pending.pop()
        for neighbour in (_JOINED_BEFORE.search(text, 0, start), _JOINED_AFTER.match(text, end)):
            if neighbour:
                kind = "tok_s" if figure.kind == "tok_s" else _factor_kind(sentence[neighbour.end(1) :])
                pending.append(keep(kind, neighbour, whole=False))
    if _ACCEPT_WORDS.search(sentence):
        low, high = ACCEPTANCE_RANGE
        for m in _DECIMAL.finditer(text):
            if low <= _number(m.group(1)) <= high:
                keep("acceptance", m)
    return [figure for _, _, figure in sorted(read, key=lambda r: r[0])]


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
    for figure in read_figures(sentence):
        if figure.kind != "tok_s":
            continue
        value, rounding = figure.value, _rounding(figure.text)
        if levels:
            here = [r for r in rows if _at(levels, r.concurrency)]
            if not _near(value, (r.output_tok_s for r in here), THROUGHPUT_TOLERANCE, rounding):
                measured = ", ".join(f"{r.config} {r.output_tok_s:.1f}" for r in here) or "nothing measured there"
                flags.append(
                    Flag(
                        source=source,
                        claim=sentence,
                        kind="contradicted",
                        evidence=f"{value:g} tok/s at C={_named(levels)}: measured {measured}",
                    )
                )
        elif not _near(value, (r.output_tok_s for r in rows), THROUGHPUT_TOLERANCE, rounding):
            flags.append(
                Flag(
                    source=source,
                    claim=sentence,
                    kind="unsupported",
                    evidence=f"no benchmark row within {THROUGHPUT_TOLERANCE:.0%} of {value:g} tok/s",
                )
            )
    return flags


def _pair_ratios(a: BenchmarkRow, b: BenchmarkRow) -> Iterator[float]:
    """How much faster a is than b: by throughput, and by per-token latency (TPOT) when both have it."""
    if b.output_tok_s > 0:
        yield a.output_tok_s / b.output_tok_s
    if a.tpot_ms_p50 and b.tpot_ms_p50:
        yield b.tpot_ms_p50 / a.tpot_ms_p50


def _measured_speedups(
    sentence: str,
    levels: Levels,
    rows: Sequence[BenchmarkRow],
    comparisons: Sequence[LevelComparison],
    head_to_head: Sequence[HeadToHeadLevel] = (),
) -> list[float]:
    """The factors the evidence holds at the levels named (all, if none): in a sentence about speculation, every
    speculative configuration over every autoregressive one (not only the best of each), and one drafter's best
    over another's, both ways round; otherwise any configuration over any other, both ways round (the words name
    the pair, this check judges the size)."""
    here = [r for r in rows if not levels or _at(levels, r.concurrency)]
    found = [
        v
        for c in comparisons
        if not levels or _at(levels, c.concurrency)
        for v in (c.speedup, c.tpot_speedup)
        if v is not None
    ]
    found += [
        f
        for h in head_to_head
        if not levels or _at(levels, h.concurrency)
        for v in (h.ratio, h.tpot_ratio)
        if v
        for f in (v, 1 / v)
    ]
    about_speculation = bool(_SPECULATIVE.search(sentence))
    for a in here:
        for b in here:
            same_level = a.concurrency == b.concurrency and a is not b
            if same_level and (a.speculative and not b.speculative or not about_speculation):
                found += _pair_ratios(a, b)
    return found


def _speedup_flags(
    source: str,
    sentence: str,
    comparisons: Sequence[LevelComparison],
    rows: Sequence[BenchmarkRow] = (),
    head_to_head: Sequence[HeadToHeadLevel] = (),
) -> list[Flag]:
    flags = []
    levels = _levels(sentence)
    measured = _measured_speedups(sentence, levels, rows, comparisons, head_to_head)
    for figure in read_figures(sentence):
        if figure.kind not in ("speedup", "slowdown"):
            continue
        value, rounding = figure.value, _rounding(figure.text)
        # "1.6x slower" is a speedup of 1/1.6: compared as a factor, so that its rounding and tolerance hold.
        candidates = [1 / v for v in measured if v > 0] if figure.kind == "slowdown" else measured
        if not _near(value, candidates, SPEEDUP_TOLERANCE, rounding):
            here = [c for c in comparisons if not levels or _at(levels, c.concurrency)]
            best = ", ".join(f"C={c.concurrency}: {c.speedup:.2f}x" for c in here if c.speedup is not None)
            said = f"{value:g}x slower" if figure.kind == "slowdown" else f"{value:g}x"
            flags.append(
                Flag(
                    source=source,
                    claim=sentence,
                    kind="contradicted" if levels else "unsupported",
                    evidence=f"{said}: measured speedups {best or 'none'}",
                )
            )
    return flags


def _names_acceptance(key: str) -> bool:
    return "accept_length" in key and "break_even" not in key  # a break-even is a threshold asked for, not measured


def _reported_acceptance(value: Any, key: str = "") -> Iterator[float]:
    """Every number a tool result reports under an acceptance-length name, wherever it sits: a benchmark level's
    accept_length and accept_length_lifetime, the acceptance eval's server_avg_accept_length, server_status's
    accept_length, a launch's avg_spec_accept_length."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _reported_acceptance(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _reported_acceptance(v, key)
    elif isinstance(value, int | float) and not isinstance(value, bool) and _names_acceptance(key):
        yield float(value)


@dataclass(frozen=True)
class AcceptanceEvidence:
    """What backs an acceptance length: the span of the acceptance evals (categories, both weightings and their
    intervals: a figure inside it is one of them or between them), and each other figure a tool reported."""

    eval_span: tuple[float, float] | None
    figures: tuple[float, ...]

    @classmethod
    def gather(
        cls, acceptance: Sequence[AcceptanceSection], rows: Sequence[BenchmarkRow], exchanges: Sequence[ToolExchange]
    ) -> AcceptanceEvidence:
        stats = [s for a in acceptance for s in (a.overall, *a.categories, *a.overall_by_thinking)]
        bounds = [
            v
            for s in stats
            for v in (s.request_mean, s.token_weighted, *(s.request_mean_ci95 or ()), *(s.token_weighted_ci95 or ()))
        ]
        figures = [a.server_avg_accept_length for a in acceptance if a.server_avg_accept_length is not None]
        figures += [r.accept_length for r in rows if r.accept_length is not None]  # sweeps of a level averaged
        figures += [v for x in exchanges if x.ok for v in _reported_acceptance(x.result)]  # each sweep's own
        return cls((min(bounds), max(bounds)) if bounds else None, tuple(sorted(set(figures))))

    def supports(self, value: float, rounding: float) -> bool:
        tolerance = max(ACCEPTANCE_TOLERANCE, rounding)
        in_span = self.eval_span is not None and self.eval_span[0] - tolerance <= value <= self.eval_span[1] + tolerance
        return in_span or any(abs(value - f) <= tolerance + 1e-12 for f in self.figures)

    def describe(self) -> str:
        parts = []
        if self.eval_span is not None:
            parts.append(
                f"{self.eval_span[0]:.2f}..{self.eval_span[1]:.2f} by the acceptance eval (categories, both "
                "weightings and their intervals)"
            )
        if self.figures:
            reported = dict.fromkeys(f"{f:.2f}" for f in self.figures)  # sorted already; equal once printed: once
            parts.append("reported by the benchmark and server " + ", ".join(reported))
        return "; ".join(parts)


def _acceptance_flags(source: str, sentence: str, evidence: AcceptanceEvidence) -> list[Flag]:
    values = [f for f in read_figures(sentence) if f.kind == "acceptance"]
    if not values:
        return []
    if evidence.eval_span is None and not evidence.figures:
        return [
            Flag(
                source=source,
                claim=sentence,
                kind="unsupported",
                evidence="no acceptance length was measured (no acceptance eval, no per-level accept length)",
            )
        ]
    return [
        Flag(
            source=source,
            claim=sentence,
            kind="contradicted",
            evidence=f"acceptance {f.text}: measured " + evidence.describe(),
        )
        for f in values
        if not evidence.supports(f.value, _rounding(f.text))
    ]


def _crossover_flags(source: str, sentence: str, crossover: Crossover) -> list[Flag]:
    text = _without_versions(sentence)
    word = _CROSSOVER_WORD.search(text)
    match = _CROSSOVER_AT.search(text, word.end()) if word else None
    if match is None:
        return []
    claimed = int(match.group(1))
    if crossover.kind == "between_levels" and crossover.between is not None:
        lo, hi = crossover.between
        if lo <= claimed <= hi:
            return []
    elif crossover.kind == "starts_paying_only":
        # Speculation pays only under load: its crossing (where it starts to) is the crossover a policy names.
        if any(c.between[0] <= claimed <= c.between[1] for c in crossover.crossings):
            return []
    elif crossover.kind == "unknown":
        return [Flag(source=source, claim=sentence, kind="unsupported", evidence=crossover.statement)]
    return [Flag(source=source, claim=sentence, kind="contradicted", evidence=crossover.statement)]


def _named_comparisons(
    clause: str, rows: Sequence[BenchmarkRow], comparisons: Sequence[LevelComparison]
) -> Sequence[LevelComparison]:
    """The comparisons a clause speaks of: between the configurations it names ("tp8-ep4+dflash+no-graphs is slower
    than tp8"), the best of a side it names none of; the best of each side when it names none."""
    named = {
        r.config for r in rows if re.search(rf"(?<![\w+\-]){re.escape(r.config)}(?![\w+\-])", clause, re.IGNORECASE)
    }
    if not named:
        return comparisons
    sides_named = {r.speculative for r in rows if r.config in named}
    return compare_levels([r for r in rows if r.config in named or r.speculative not in sides_named])


def _winner_flags(
    source: str, sentence: str, comparisons: Sequence[LevelComparison], rows: Sequence[BenchmarkRow] = ()
) -> list[Flag]:
    if not _SPECULATIVE.search(sentence):
        return []
    flags = []
    for clause in _CLAUSE.split(sentence):
        if _NEGATION.search(clause):
            continue  # "does not win" reads both ways to a pattern: leave it
        says = "speculative" if _WINS.search(clause) else "autoregressive" if _LOSES.search(clause) else None
        if says is None:
            continue
        if _THAN_SPECULATIVE.search(clause):  # "tp8-ep4 is faster than DFlash": the other side wins
            says = "autoregressive" if says == "speculative" else "speculative"
        spoken_of = _named_comparisons(clause, rows, comparisons)
        for lo, hi in _levels(clause):
            found = [c for c in spoken_of if lo <= c.concurrency <= hi and c.winner is not None]
            if lo == hi and not found:
                flags.append(
                    Flag(
                        source=source,
                        claim=sentence,
                        kind="unsupported",
                        evidence=f"no comparison of both kinds at C={lo}",
                    )
                )
            for c in found:
                if c.winner not in (says, "tie"):
                    flags.append(
                        Flag(
                            source=source,
                            claim=sentence,
                            kind="contradicted",
                            evidence=f"at C={c.concurrency} the {c.winner} side won: {c.best_speculative} "
                            f"{c.speculative_tok_s:.1f} vs {c.best_autoregressive} "
                            f"{c.autoregressive_tok_s:.1f} tok/s",
                        )
                    )
    return flags


def check_claims(
    final: FinalAnswer | None,
    *,
    status: str,
    rows: Sequence[BenchmarkRow],
    comparisons: Sequence[LevelComparison],
    crossover: Crossover,
    acceptance: Sequence[AcceptanceSection],
    failures: Sequence[Failure],
    running: LeftRunning,
    exchanges: Sequence[ToolExchange] = (),
    head_to_head: Sequence[HeadToHeadLevel] = (),
) -> list[Flag]:
    """Flags on the final answer. `exchanges` (every tool call of the run) lets a figure that only a raw result
    holds back a claim: one sweep's accept length where the rows average several, a server's own. `head_to_head`
    backs a factor between two drafters."""
    if final is None:
        return []
    flags: list[Flag] = []
    accepted = AcceptanceEvidence.gather(acceptance, rows, exchanges)
    texts = [("summary", final.summary)] + ([("recommendation", final.recommendation)] if final.recommendation else [])
    for source, text in texts:
        for sentence in _sentences(text):
            flags += _throughput_flags(source, sentence, rows)
            flags += _speedup_flags(source, sentence, comparisons, rows, head_to_head)
            flags += _acceptance_flags(source, sentence, accepted)
            flags += _crossover_flags(source, sentence, crossover)
            flags += _winner_flags(source, sentence, comparisons, rows)
    unresolved = [f for f in failures if f.status == "unresolved"]
    if final.status == "completed" and unresolved and not final.unresolved:
        flags.append(
            Flag(
                source="unresolved",
                claim="completed, with nothing listed as unresolved",
                kind="contradicted",
                evidence=f"{len(unresolved)} failure(s) never recovered: "
                + "; ".join(f"seq {f.seq} {f.tool} {f.kind}" for f in unresolved),
            )
        )
    if final.status == "completed" and status not in ("completed",):
        flags.append(
            Flag(
                source="status", claim=f"status {final.status}", kind="contradicted", evidence=f"the run ended {status}"
            )
        )
    if running.servers and not final.left_running:
        flags.append(
            Flag(
                source="left_running",
                claim="nothing listed as left running",
                kind="contradicted",
                evidence="still running: "
                + ", ".join(f"{s.config} on port {s.port} (pid {s.pid})" for s in running.servers),
            )
        )
    if final.left_running and not running.servers and not running.downloads:
        flags.append(
            Flag(
                source="left_running",
                claim="; ".join(final.left_running),
                kind="unsupported",
                evidence="every server this run launched was stopped, and no download was left running",
            )
        )
    return flags
