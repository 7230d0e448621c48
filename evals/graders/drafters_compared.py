"""A comparison of drafters is reported as one: a section per drafter, each beside its own card, and head to head.

A goal naming several drafters ("does A beat B?") asks for each to be measured on the same
layouts and levels and set against the other. A scenario names the drafters compared
(`expect.compared`): the report must give each its own section with the configurations
that served it, set each acceptance table beside the card of the drafter it measured
(never another's: the EAGLE-3 table once showed the DFlash card's figures), and carry a
head-to-head row, with a verdict, at every level both were benchmarked at.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class DraftersCompared(Grader):
    name = "drafters_compared"

    def grade(self, evidence: RunEvidence) -> Verdict:
        expected = evidence.scenario.expect.compared
        if not expected:
            return Verdict.ok("no comparison of drafters expected")
        report = evidence.report
        if report is None:
            return Verdict.fail("no report to show the comparison")
        sections = {s.identity: s for s in report.drafters if s.identity}
        missing = [d for d in expected if d not in sections]
        if missing:
            return Verdict.fail(f"no section for {missing}; the report has {sorted(sections)}")
        unserved = [d for d in expected if not sections[d].configs]
        if unserved:
            return Verdict.fail(f"no benchmarked configuration served {unserved}")
        for run in report.acceptance_runs:
            own = sections[run.drafter].card if run.drafter in sections else None
            for stat in run.categories:
                stated = own.figures.get(stat.category) if own is not None else None
                if stat.card is not None and stat.card != stated:
                    return Verdict.fail(
                        f"the acceptance table of {run.drafter} ({run.config}) sets {stat.card} beside "
                        f"{stat.category}, which is not its own card's figure ({stated})"
                    )
        levels = {d: {r.concurrency for r in report.benchmarks if r.config in sections[d].configs} for d in expected}
        both = sorted(set.intersection(*levels.values()))
        compared = {h.concurrency for h in report.head_to_head if h.winner is not None}
        if not both:
            return Verdict.fail("no level benchmarked for every drafter compared")
        if set(both) - compared:
            return Verdict.fail(f"no head-to-head verdict at C={sorted(set(both) - compared)}")
        return Verdict.ok(f"{len(expected)} drafters, each its own section and card; head to head at C={both}")
