"""The playbook's account of the measurements: per concurrency, the best speculative against the best autoregressive.

The report computes its own comparison from the recorded tool results; this is
the policy's reading of the same numbers in words, for the final answer: who
wins at each level, where speculation stops paying, and what to serve for which
load.
"""

from __future__ import annotations

from dataclasses import dataclass

Sweep = dict[int, float]  # concurrency -> output tok/s


@dataclass(frozen=True)
class LevelVerdict:
    concurrency: int
    best_ar: tuple[str, float] | None
    best_spec: tuple[str, float] | None

    @property
    def speedup(self) -> float | None:
        if self.best_ar is None or self.best_spec is None or self.best_ar[1] <= 0:
            return None
        return self.best_spec[1] / self.best_ar[1]


def best_at(results: dict[str, Sweep], level: int) -> tuple[str, float] | None:
    """The fastest configuration measured at `level` and its tok/s; None when none was."""
    at = [(name, sweep[level]) for name, sweep in results.items() if level in sweep]
    return max(at, key=lambda pair: pair[1], default=None)


def compare(ar: dict[str, Sweep], spec: dict[str, Sweep]) -> list[LevelVerdict]:
    levels = sorted({c for sweep in (*ar.values(), *spec.values()) for c in sweep})
    return [LevelVerdict(c, best_at(ar, c), best_at(spec, c)) for c in levels]


def comparison_lines(verdicts: list[LevelVerdict], spoken: str = "DFlash") -> list[str]:
    """One line per level; `spoken` is the algorithm as people name it (DFlash, EAGLE-3, MTP, n-gram...)."""
    lines = []
    for v in verdicts:
        ar = f"{v.best_ar[0]} {v.best_ar[1]:.1f} tok/s" if v.best_ar else "no autoregressive result"
        spec = f"{v.best_spec[0]} {v.best_spec[1]:.1f} tok/s" if v.best_spec else f"no {spoken} result"
        ratio = f" ({v.speedup:.2f}x)" if v.speedup is not None else ""
        lines.append(f"C={v.concurrency}: {spoken} best {spec} vs autoregressive best {ar}{ratio}")
    return lines


def tuning_lines(defaults: dict[str, Sweep], tuned: dict[str, Sweep]) -> list[str]:
    """What tuning gained over SGLang's default settings, per level: the best tuned setting against the best
    configuration at the defaults, where both were measured."""
    if not tuned or not defaults:
        return []
    gains = []
    for level in sorted({c for sweep in tuned.values() for c in sweep}):
        best_tuned, best_default = best_at(tuned, level), best_at(defaults, level)
        if best_tuned is None or best_default is None or best_default[1] <= 0:
            continue
        gain = best_tuned[1] / best_default[1] - 1
        gains.append(
            f"C={level}: {best_tuned[0]} {best_tuned[1]:.1f} tok/s ({gain:+.0%})"
            if gain > 0
            else f"C={level}: the defaults stay best ({best_default[0]} {best_default[1]:.1f} tok/s)"
        )
    return ["tuning against SGLang's default settings: " + "; ".join(gains)] if gains else []


@dataclass(frozen=True)
class Recommendation:
    text: str
    deploy: str | None  # the configuration to leave running for a deploy goal
    spec_wins_at: list[int]
    spec_loses_at: list[int]


@dataclass(frozen=True)
class _Both:
    """A level with a best autoregressive and a best speculative result, and a speedup between them."""

    concurrency: int
    ar: tuple[str, float]
    spec: tuple[str, float]
    speedup: float


def _both(v: LevelVerdict) -> _Both | None:
    speedup = v.speedup
    if v.best_ar is None or v.best_spec is None or speedup is None:
        return None
    return _Both(v.concurrency, v.best_ar, v.best_spec, speedup)


def recommend(verdicts: list[LevelVerdict], spoken: str = "DFlash") -> Recommendation:
    both = [b for b in map(_both, verdicts) if b is not None]
    wins = [b.concurrency for b in both if b.speedup > 1.0]
    loses = [b.concurrency for b in both if b.speedup <= 1.0]
    ar_only = [(v.concurrency, v.best_ar) for v in verdicts if v.best_ar is not None]
    peak_ar = max(ar_only, key=lambda pair: pair[1][1], default=None)
    if not both:
        if peak_ar is None:
            return Recommendation("nothing was measured, so there is nothing to recommend", None, [], [])
        peak_at, (peak_name, peak_tok_s) = peak_ar
        return Recommendation(
            f"no {spoken} measurement to compare with: serve {peak_name} (peak {peak_tok_s:.1f} tok/s "
            f"at C={peak_at}) until the drafter can be measured",
            peak_name,
            [],
            [],
        )
    if not wins:
        assert peak_ar is not None, "a level with a speedup has an autoregressive result"
        peak_name = peak_ar[1][0]
        return Recommendation(
            f"{spoken} did not beat the best autoregressive configuration at any measured concurrency "
            f"({', '.join(f'C={c}' for c in loses)}): serve {peak_name} without speculation",
            peak_name,
            [],
            loses,
        )
    spec_at_low = next(b for b in both if b.concurrency == wins[0])
    winning = [b for b in both if b.concurrency in wins]
    if not loses:
        groups = _fastest_by_level(winning)
        if len(groups) == 1:
            return Recommendation(
                f"{spoken} beats the best autoregressive configuration at every measured concurrency "
                f"(up to C={both[-1].concurrency}): serve {groups[0][0]} for all loads measured",
                groups[0][0],
                wins,
                [],
            )
        # Tuned settings: the fastest speculative setting differs by load. One server: the one fastest at most levels.
        most = max(groups, key=lambda g: len(g[1]))[0]
        return Recommendation(
            f"{spoken} beats the best autoregressive configuration at every measured concurrency "
            f"(up to C={both[-1].concurrency}); the fastest setting depends on the load: {_serve_each(groups)}",
            most,
            wins,
            [],
        )
    first_loss = min(loses)
    if max(loses) < wins[0]:
        # Speculation pays only under load (a cheap draft whose verify hides in a bigger batch, or a lighter
        # verify setting): autoregressive below, speculative above.
        ar_low = next(b for b in both if b.concurrency == max(loses))
        groups = _fastest_by_level(winning)
        serve_high = (
            f"serve {spec_at_low.spec[0]} ({spoken}) from C={wins[0]} on"
            if len(groups) == 1
            else f"from C={wins[0]} on {spoken} is faster, the fastest setting by load: {_serve_each(groups)}"
        )
        text = (
            f"{spoken} loses at low load and wins under load: serve {ar_low.ar[0]} up to C={max(loses)} "
            f"({ar_low.ar[1]:.1f} vs {ar_low.spec[1]:.1f} tok/s at C={ar_low.concurrency}); {serve_high} "
            f"({spec_at_low.speedup:.2f}x at C={spec_at_low.concurrency}); the crossover lies between "
            f"C={max(loses)} and C={wins[0]}"
        )
        return Recommendation(text, spec_at_low.spec[0], wins, loses)
    below = [c for c in wins if c < first_loss]
    crossover = (
        f"between C={max(below)} and C={first_loss}"
        if below
        else f"below C={first_loss} (mixed: {spoken} wins again higher up)"
    )
    ar_high = next(b for b in both if b.concurrency == max(loses))
    groups = _fastest_by_level(winning)
    serve_low = (
        f"serve {spec_at_low.spec[0]} ({spoken}) for low load: it wins at {', '.join(f'C={c}' for c in wins)}"
        if len(groups) == 1
        else f"{spoken} wins at {', '.join(f'C={c}' for c in wins)}, the fastest setting by load: {_serve_each(groups)}"
    )
    text = (
        f"{serve_low} "
        f"({spec_at_low.speedup:.2f}x at C={spec_at_low.concurrency}); from C={first_loss} on the best autoregressive "
        f"configuration is faster ({ar_high.ar[0]}: {ar_high.ar[1]:.1f} vs {ar_high.spec[1]:.1f} tok/s at "
        f"C={ar_high.concurrency}), so serve {ar_high.ar[0]} for high-throughput load; the crossover lies {crossover}"
    )
    return Recommendation(text, spec_at_low.spec[0], wins, loses)


def _fastest_by_level(levels: list[_Both]) -> list[tuple[str, list[int]]]:
    """The fastest speculative configuration at each level, neighbouring levels with the same one grouped."""
    return _runs([(b.concurrency, b.spec[0]) for b in levels])


def _runs(by_level: list[tuple[int, str]]) -> list[tuple[str, list[int]]]:
    """(level, what) pairs in level order as runs of neighbouring levels with the same `what`."""
    groups: list[tuple[str, list[int]]] = []
    for level, what in by_level:
        if groups and groups[-1][0] == what:
            groups[-1][1].append(level)
        else:
            groups.append((what, [level]))
    return groups


def _serve_each(groups: list[tuple[str, list[int]]]) -> str:
    return ", ".join(f"serve {name} at {', '.join(f'C={c}' for c in levels)}" for name, levels in groups)


def shape_line(results: dict[str, Sweep], replicated: set[str]) -> str | None:
    """Over a host group, the faster shape at each level where both ran, in words (the report's "One server or
    replicas" table has the figures): one server, or replicas behind the gateway; None when only one shape ran."""
    levels = sorted({c for sweep in results.values() for c in sweep})
    by_level: list[tuple[int, str]] = []
    for level in levels:
        one = best_at({n: s for n, s in results.items() if n not in replicated}, level)
        many = best_at({n: s for n, s in results.items() if n in replicated}, level)
        if one is not None and many is not None:
            by_level.append((level, "replicas" if many[1] > one[1] else "one server"))
    if not by_level:
        return None
    said = "; ".join(f"{shape} at {', '.join(f'C={c}' for c in levels)}" for shape, levels in _runs(by_level))
    return (
        f"one server or replicas behind the gateway, the faster shape in total by load: {said} (the report's "
        "'One server or replicas' table has both, per GPU too)"
    )
