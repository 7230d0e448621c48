"""The comparison used the best baseline per concurrency: the fastest autoregressive config measured at each level.

Checked in the report's comparison (built from the tools' results) and in the
policy's own words: a line such as "C=64: ... vs autoregressive best tp8-ep4"
must name the fastest autoregressive configuration measured at that level.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict

_STATED = re.compile(r"C=(\d+):[^\n]*?autoregressive best (\S+)")


@dataclass
class BestBaselinePerConcurrency(Grader):
    name = "best_baseline_per_concurrency"

    def grade(self, evidence: RunEvidence) -> Verdict:
        report = evidence.report
        best: dict[int, tuple[float, str]] = {}
        for row in report.benchmarks if report is not None else []:
            if not row.speculative and not row.requests_failed:
                c = row.concurrency
                best[c] = max(best.get(c, (0.0, "")), (row.output_tok_s, row.config))
        if report is None or not best:
            return Verdict.ok("no baseline measured")
        for level in report.comparison:
            c, named = level.concurrency, level.best_autoregressive
            if named is not None and c in best and named != best[c][1]:
                return Verdict.fail(f"C={c}: the comparison used {named}, the best baseline measured was {best[c][1]}")
        summary = report.run.summary_text or ""
        for c_text, named in _STATED.findall(summary):
            c = int(c_text)
            named = named.rstrip(".,;")
            # The policy may name a layout without the settings recovery changed (tp8 for tp8+mem_fraction_static=0.93).
            if c in best and named != best[c][1] and not best[c][1].startswith(named + "+"):
                return Verdict.fail(f"the policy compared against {named} at C={c}; the best baseline was {best[c][1]}")
        return Verdict.ok(f"best baseline at {len(best)} levels")
