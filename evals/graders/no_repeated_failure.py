"""No identical failing call was repeated beyond the bound: the same tool with the same arguments, failing again."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class NoRepeatedFailure(Grader):
    name = "no_repeated_failure"

    def grade(self, evidence: RunEvidence) -> Verdict:
        failing = Counter(
            (s.tool, json.dumps(s.call.args, sort_keys=True, default=str))
            for s in evidence.steps
            if s.result is not None and not s.result.ok
        )
        bound = evidence.scenario.expect.max_repeats
        over = [(key, n) for key, n in failing.items() if n > bound]
        if over:
            (tool, args), n = max(over, key=lambda kv: kv[1])
            return Verdict.fail(f"{tool} failed {n} times with identical arguments (bound {bound}): {args[:200]}")
        return Verdict.ok(f"{sum(failing.values())} failing call(s), none repeated past {bound}")
