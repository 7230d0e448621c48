"""The recommendation follows the measurements: what the policy says to serve was the fastest measured somewhere.

Each configuration the policy's recommendation names after "serve" must be the
fastest configuration measured at one level at least (within `NOISE`, two runs of one
level differ by that much), and a configuration left running for a deploy goal must be
one of those. A policy that recommends the SGLang defaults where a tuned setting was
faster at every level, or a layout it never measured, fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict

NOISE = 0.03
_SERVE = re.compile(r"\bserve (\S+)")
_CAPS = re.compile(r"\+(?:max_running_requests|cuda_graph_max_bs)=[^+]*")


@dataclass
class RecommendationFollowsMeasurements(Grader):
    name = "recommendation_follows_measurements"

    def grade(self, evidence: RunEvidence) -> Verdict:
        report = evidence.report
        text = report.recommendation.policy_text if report is not None else None
        if report is None or not text or not report.benchmarks:
            return Verdict.ok("no recommendation over measurements")
        rows = [r for r in report.benchmarks if not r.requests_failed]
        fastest_somewhere = set()
        for level in {r.concurrency for r in rows}:
            here = [r for r in rows if r.concurrency == level]
            best = max(r.output_tok_s for r in here)
            fastest_somewhere |= {r.config for r in here if r.output_tok_s >= best * (1 - NOISE)}

        def fastest(name: str) -> bool:
            # The policy may name a layout without the settings recovery changed (tp8 for tp8+mem_fraction_static=0.9).
            return any(f == name or f.startswith(name + "+") for f in fastest_somewhere)

        named = [name.rstrip(".,;:)") for name in _SERVE.findall(text)]
        known = {c.name for c in report.configs}
        wrong = [n for n in named if any(k == n or k.startswith(n + "+") for k in known) and not fastest(n)]
        if wrong:
            return Verdict.fail(f"the policy says to serve {', '.join(wrong)}, never the fastest at a measured level")
        # A deployed server may carry a cap the run added (under a load it failed at): the measured one is its base.
        running = [_CAPS.sub("", s.config) for s in report.left_running.servers]
        stray = [c for c in running if c not in fastest_somewhere]
        if stray:
            return Verdict.fail(f"left running {', '.join(stray)}, never the fastest at a measured level")
        return Verdict.ok(f"{len(named)} recommended configurations, each the fastest at a measured level")
