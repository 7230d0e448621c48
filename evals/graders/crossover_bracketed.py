"""The crossover is bracketed: every change of winner lies between two measured levels at most a factor of 2 apart,
or the report says it does not and which levels would find it; levels added to bracket it are where it says.

Read from the report. The changes of winner are those of the comparison (the speedup
of the best speculative over the best autoregressive configuration crossing 1 between
adjacent levels), and the crossover's `crossings` must list exactly those. For each:

- its two levels are at most BRACKET_FACTOR (2) apart, or the crossover's statement
  says "not bracketed" and names every level between that would find it (the octaves,
  "measure C=2, C=4, ... to find it");
- the levels in `added_levels` are each named in the statement, which names the
  configurations they were measured on ("added (on A and B)"): at each added level the
  benchmark rows are of those configurations only, together they cover every one named,
  and the named ones are of both kinds (the fastest speculative and the fastest
  autoregressive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from specops.agent.report.bracketing import BRACKET_FACTOR, octave_levels
from specops.agent.report.schema import Report

from ..evidence import RunEvidence
from ._base import Grader, Verdict

_LEVEL = re.compile(r"\bC=(\d+)\b")
_ADDED_ON = re.compile(r"added \(on ([^)]+)\)")


def changes_of_winner(report: Report) -> list[tuple[int, int]]:
    """Adjacent measured levels (both kinds measured) between which the speedup crosses 1."""
    known = sorted((c.concurrency, c.speedup) for c in report.comparison if c.speedup is not None)
    return [(c0, c1) for (c0, s0), (c1, s1) in zip(known, known[1:], strict=False) if (s0 > 1) != (s1 > 1)]


def bracketing_problems(report: Report) -> list[str]:
    crossover = report.crossover
    statement = crossover.statement
    stated_levels = {int(c) for c in _LEVEL.findall(statement)}
    changes = changes_of_winner(report)
    problems = []
    listed = sorted(tuple(c.between) for c in crossover.crossings)
    if listed != sorted(changes):
        problems.append(f"the crossings listed {listed} are not the changes of winner measured {changes}")
    for low, high in changes:
        if high <= BRACKET_FACTOR * low:
            continue
        wanted = octave_levels(low, high)
        if "not bracketed" not in statement:
            problems.append(
                f"the winner changes between C={low} and C={high}, more than {BRACKET_FACTOR}x apart, and the "
                f"statement does not say it is not bracketed: {statement!r}"
            )
        elif missing := [c for c in wanted if c not in stated_levels]:
            problems.append(
                f"C={low}..{high} is left unbracketed without naming the levels that would find it "
                f"({', '.join(f'C={c}' for c in missing)} not named)"
            )
    added = crossover.added_levels
    if not added:
        return problems
    unnamed = [c for c in added if c not in stated_levels]
    if unnamed or "added" not in statement:
        problems.append(
            f"the statement does not name the added levels {', '.join(f'C={c}' for c in unnamed or added)}: "
            f"{statement!r}"
        )
    on = _ADDED_ON.search(statement)
    if on is None:
        return [*problems, f"the statement does not name the configurations C={added} were measured on"]
    named = {name.strip() for name in on.group(1).split(" and ") if name.strip()}
    rows = report.benchmarks
    covered: set[str] = set()
    for level in added:
        here = {r.config for r in rows if r.concurrency == level}
        if not here:
            problems.append(f"added level C={level} has no benchmark row")
        elif here - named:
            problems.append(
                f"C={level} was measured on {', '.join(sorted(here - named))} too, not only on what the statement "
                f"names ({', '.join(sorted(named))})"
            )
        covered |= here
    if named - covered:
        problems.append(f"the statement names {', '.join(sorted(named - covered))}, not measured at any added level")
    kinds = {r.speculative for r in rows if r.config in named}
    if kinds != {True, False}:
        problems.append(f"the added levels were measured on {', '.join(sorted(named))}: not one of each kind")
    return problems


@dataclass
class CrossoverBracketed(Grader):
    name = "crossover_bracketed"

    def grade(self, evidence: RunEvidence) -> Verdict:
        report = evidence.report
        if report is None or not report.comparison:
            return Verdict.ok("nothing compared")
        problems = bracketing_problems(report)
        if problems:
            return Verdict.fail(
                "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
            )
        changes = changes_of_winner(report)
        if not changes:
            return Verdict.ok("the winner does not change between measured levels")
        added = report.crossover.added_levels
        return Verdict.ok(
            f"{len(changes)} change(s) of winner: "
            + ", ".join(f"C={lo}..{hi}" for lo, hi in changes)
            + (f"; C={', '.join(map(str, added))} added on what the statement names" if added else "")
        )
