"""The todo plan came first: the run's first tool call writes the plan (a run that calls no tool has nothing to plan)."""

from __future__ import annotations

from dataclasses import dataclass

from specops.agent.toolset import TODO_TOOL

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class PlanFirst(Grader):
    name = "plan_first"

    def grade(self, evidence: RunEvidence) -> Verdict:
        steps = evidence.steps
        if not steps:
            return Verdict.ok("no tool was called")
        if steps[0].tool != TODO_TOOL:
            return Verdict.fail(f"the first tool call was {steps[0].tool}, not {TODO_TOOL}")
        return Verdict.ok()
