"""The run used the drafter the truth calls for: when the goal names none, the one a careful search finds.

A goal phrased as people phrase it ("find a DFlash drafter for Qwen3-8B") names no repo;
the Hub lists that drafter beside decoys (quantized copies, fine-tunes, a drafter for
another size, a gated experiment). A scenario names the drafter a careful engineer would
choose (`expect.drafter`): the report's drafter section must be that repo, and every
download the run started must be of it, so no decoy was fetched on the way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class DrafterChosen(Grader):
    name = "drafter_chosen"

    def grade(self, evidence: RunEvidence) -> Verdict:
        expected = evidence.scenario.expect.drafter
        if expected is None:
            return Verdict.ok("no drafter expected")
        report = evidence.report
        chosen = report.drafter.repo_id if report is not None and report.drafter is not None else None
        if chosen != expected:
            return Verdict.fail(f"the report's drafter is {chosen}; the truth calls for {expected}")
        fetched = {str(step.call.args.get("repo_id")) for step in evidence.steps_of("start_download")}
        if fetched - {expected}:
            return Verdict.fail(f"downloaded {sorted(fetched - {expected})} as well as {expected}")
        return Verdict.ok(f"{expected} chosen" + (" and downloaded" if fetched else ""))
