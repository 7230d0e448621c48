"""The host-time budget's section: what the job measured by when on the host's clock, what the policy left out for
the budget, and without a budget, what smaller ones would have kept.

A configuration counts as measured at the end of its last benchmark sweep, on the host's clock from the job's
first host call (a resumed run's earlier sessions add their spans, as host_time.py counts them). A smaller budget
keeps, in this run's order, the configurations measured by then: an order a policy given that budget might change
(the playbook keeps room for its first speculative measurement: agent/policies/playbook_budget.py), so it says what
this run had measured by then, not what another run would have.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from specops.agent.durations import duration_words
from specops.agent.final import FinalAnswer

from .evidence import Evidence
from .host_time import on_host, sessions_of
from .schema import BenchmarkRow, BudgetSection, HostTimeSection, MeasuredBy, SmallerBudget

# The smaller budgets said when the job had none: these shares of what it used, in whole quarter hours.
SMALLER_SHARES = (0.25, 0.5, 0.75)
_QUARTER_HOUR_S = 900.0


def budget_section(
    evidence: Evidence, rows: Sequence[BenchmarkRow], host: HostTimeSection, final: FinalAnswer | None
) -> BudgetSection:
    budget_s = _budget_s(evidence)
    measured = measured_by(evidence, rows)
    section = BudgetSection(
        budget_s=budget_s, used_s=host.host_s, measured=measured, left_out=list(final.left_out) if final else []
    )
    if budget_s is not None or host.host_s is None or not measured:
        return section
    return section.model_copy(update={"smaller": smaller_budgets(measured, host.host_s)})


def _budget_s(evidence: Evidence) -> float | None:
    budgets = (evidence.run_start.config.get("budgets") or {}) if evidence.run_start else {}
    value = budgets.get("max_host_s")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def measured_by(evidence: Evidence, rows: Sequence[BenchmarkRow]) -> list[MeasuredBy]:
    """Each benchmarked configuration and the host seconds into the job at which its last sweep ended (one whose
    sweeps' host clock was not read is left out)."""
    elapsed = _host_seconds_into_job(evidence)
    ended: dict[str, float] = {}
    levels: dict[str, set[int]] = {}
    for row in rows:
        at = [elapsed[seq] for seq in row.seqs if seq in elapsed]
        if not at:
            continue
        ended[row.config] = max(ended.get(row.config, 0.0), *at)
        levels.setdefault(row.config, set()).add(row.concurrency)
    return [
        MeasuredBy(config=name, levels=sorted(levels[name]), host_s=round(at, 1))
        for name, at in sorted(ended.items(), key=lambda item: item[1])
    ]


def _host_seconds_into_job(evidence: Evidence) -> dict[int, float]:
    """For each host call's result seq, the host seconds from the job's start to its end: the spans of the run's
    earlier sessions, plus its own session's from that session's first host call."""
    by_session = [
        [
            (call.seq, call.host_time.start, call.host_time.end)
            for call in calls
            if on_host(call)
            and call.host_time is not None
            and call.host_time.start is not None
            and call.host_time.end is not None
        ]
        for calls in sessions_of(evidence)
    ]
    into: dict[int, float] = {}
    before = 0.0
    for calls in by_session:
        if not calls:
            continue
        first = min(start for _, start, _ in calls)
        for seq, _, end in calls:
            into[seq] = before + end - first
        before += max(end for _, _, end in calls) - first
    return into


def smaller_budgets(measured: Sequence[MeasuredBy], used_s: float) -> list[SmallerBudget]:
    """What budgets of a quarter, a half and three quarters of `used_s` (in whole quarter hours, at least one) would
    have kept in this run's order; each budget once."""
    found: dict[float, SmallerBudget] = {}
    for share in SMALLER_SHARES:
        budget = max(_QUARTER_HOUR_S, math.floor(used_s * share / _QUARTER_HOUR_S + 0.5) * _QUARTER_HOUR_S)
        if budget >= used_s or budget in found:
            continue
        found[budget] = SmallerBudget(budget_s=budget, kept=[m.config for m in measured if m.host_s <= budget])
    return list(found.values())


def budget_sentence(section: BudgetSection) -> str | None:
    """The report head's line on the budget: what it was, what was used, how much was left out; None without one."""
    if section.budget_s is None:
        return None
    used = f"{duration_words(section.used_s)} used" if section.used_s is not None else "the time used is unknown"
    line = f"host-time budget {duration_words(section.budget_s)}: {used}"
    if section.used_s is not None and section.used_s > section.budget_s:
        line += f" (over by {duration_words(section.used_s - section.budget_s)}: a step under way when it ran out)"
    n = len(section.left_out)
    return line + (f"; {n} experiment{'s' if n != 1 else ''} left out for it" if n else "; nothing left out for it")


def budget_markdown(section: BudgetSection) -> list[str]:
    """report.md's budget part: when each configuration's measurement ended, what was left out, smaller budgets."""
    if not section.measured and section.budget_s is None:
        return []
    lines = ["### Host-time budget", ""]
    said = budget_sentence(section)
    lines += [said[0].upper() + said[1:] + ".", ""] if said else ["The job had no host-time budget (--budget).", ""]
    if section.measured:
        lines += [
            "| configuration | levels | measured by (host time into the job) |",
            "|---|---|---|",
            *(
                f"| {m.config} | {', '.join(map(str, m.levels))} | {duration_words(m.host_s)} |"
                for m in section.measured
            ),
            "",
        ]
    if section.left_out:
        lines += ["Left out for the budget:", "", *(f"- {left}" for left in section.left_out), ""]
    for smaller in section.smaller:
        kept = ", ".join(smaller.kept) if smaller.kept else "no configuration's measurement"
        lines.append(f"- A budget of {duration_words(smaller.budget_s)} would have kept, in this run's order: {kept}.")
    return lines + ([""] if section.smaller else [])
