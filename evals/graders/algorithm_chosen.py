"""The run served the speculative algorithm the evidence calls for: every speculative launch and the report name it.

A scenario names the algorithm its goal and drafter call for (`expect.algorithm`):
EAGLE3 for an EAGLE-3 drafter, NEXTN for MTP heads, STANDALONE for a small model of the
target's family, NGRAM for n-gram speculation. A run that launched another algorithm,
or whose report reads the drafter as another, chose wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class AlgorithmChosen(Grader):
    name = "algorithm_chosen"

    def grade(self, evidence: RunEvidence) -> Verdict:
        expected = evidence.scenario.expect.algorithm
        if expected is None:
            return Verdict.ok("no algorithm expected")
        report = evidence.report
        if report is None:
            return Verdict.fail(f"no report to show that {expected} was chosen")
        launched = {c.algorithm for c in report.configs if c.speculative}
        if launched - {expected}:
            return Verdict.fail(f"launched {sorted(a for a in launched if a)}; the evidence calls for {expected}")
        said = report.drafter.algorithm if report.drafter else None
        if said != expected:
            return Verdict.fail(f"the report reads the drafter as {said}; the evidence calls for {expected}")
        if not launched:
            return Verdict.ok(f"{expected} read from the configs; nothing speculative launched")
        return Verdict.ok(f"{expected} read and launched")
