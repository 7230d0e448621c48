"""The expected outcome: the run's status, the policy's own status, the words that explain it, and the findings.

Findings are read from the report's comparison (built from the measurements):
dflash_wins_low_load (speculative wins at the lowest level), dflash_loses_peak
(autoregressive has the higher peak), crossover_stated (the crossover is between
two measured levels, and the policy's recommendation or summary says so). A
scenario may also name configurations that must have been benchmarked, and words
no launch may carry (nothing speculative launched on an SGLang without DFLASH).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from specops.tools.errors import ErrorKind
from specops.tools.sglang.handle import RunningServer

from ..evidence import RunEvidence
from ._base import Grader, Verdict


def _findings(evidence: RunEvidence) -> dict[str, tuple[bool, str]]:
    report = evidence.report
    comparison = report.comparison if report is not None else []
    levels = sorted((c for c in comparison if c.winner), key=lambda c: c.concurrency)
    rows = report.benchmarks if report is not None else []
    peak = {kind: max((r.output_tok_s for r in rows if r.speculative == kind), default=0.0) for kind in (True, False)}
    crossover = report.crossover.kind if report is not None else None
    words = evidence.final_text.lower()
    return {
        # By the figures (speedup > 1), not the winner label, which says "tie" when the two intervals overlap.
        "dflash_wins_low_load": (
            bool(levels) and (levels[0].speedup or 0.0) > 1.0,
            f"lowest level speedup: {levels[0].speedup if levels else 'none'}",
        ),
        "dflash_loses_peak": (
            peak[False] > peak[True] > 0,
            f"peaks: DFlash {peak[True]:.0f}, baseline {peak[False]:.0f} tok/s",
        ),
        "crossover_stated": (
            crossover == "between_levels" and "crossover" in words,
            f"crossover {crossover}, {'said' if 'crossover' in words else 'not said'}",
        ),
    }


@dataclass
class ExpectedOutcome(Grader):
    name = "outcome"

    def grade(self, evidence: RunEvidence) -> Verdict:
        expect = evidence.scenario.expect
        status = evidence.run.run_status
        if status not in expect.status:
            return Verdict.fail(f"run ended {status} ({evidence.run.reason}); expected {' or '.join(expect.status)}")
        policy_status = evidence.policy_status
        if expect.final_status is not None and policy_status not in expect.final_status:
            return Verdict.fail(f"the policy's status is {policy_status}; expected {' or '.join(expect.final_status)}")
        text = evidence.final_text.lower()
        missing = [w for w in expect.explains if w.lower() not in text]
        if missing:
            return Verdict.fail(f"the final answer does not say {missing}: {text[:300]!r}")
        measured = {row.config for row in evidence.report.benchmarks} if evidence.report is not None else set()
        for pattern in expect.benchmarked:
            if not any(fnmatch.fnmatch(name, pattern) for name in measured):
                return Verdict.fail(f"no benchmark of a configuration like {pattern!r}; measured {sorted(measured)}")
        for word in expect.not_launched:
            for step in evidence.steps_of("launch_server"):
                # A process started: a ready server (its argv), or a launch that failed after starting (its
                # configuration). A launch refused before anything ran (too old, a rule) started nothing.
                if step.result is None or not (
                    step.ok or (step.result.error and step.result.error.kind == ErrorKind.LAUNCH_FAILED)
                ):
                    continue
                server = step.result_as(RunningServer)
                started = " ".join(server.argv) if server is not None else str(step.call.args)
                if word in started:
                    return Verdict.fail(f"a launch that started a process carried {word!r}: {started[:300]}")
        found = _findings(evidence)
        for name in expect.findings:
            held, why = found[name]
            if not held:
                return Verdict.fail(f"finding {name} does not hold: {why}")
        return Verdict.ok(
            f"{status}"
            + (f" / {policy_status}" if policy_status else "")
            + (f"; findings {', '.join(expect.findings)}" if expect.findings else "")
        )
