"""Budgets respected: requests, tool calls and wall time within what the run was given, and no budget ran out."""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class BudgetsRespected(Grader):
    name = "budgets_respected"

    def grade(self, evidence: RunEvidence) -> Verdict:
        end, start = evidence.run_end, evidence.run_start
        if end is None or start is None:
            return Verdict.fail("the transcript has no run_start/run_end: the run did not end cleanly")
        if end.status == "budget_exceeded" and "budget_exceeded" not in evidence.scenario.expect.status:
            return Verdict.fail(f"a budget ran out: {end.reason}")
        budgets = start.config.get("budgets") or {}
        calls = len(evidence.steps)
        checks = [
            ("model requests", end.usage.requests, budgets.get("max_requests")),
            ("tool calls", calls, budgets.get("max_tool_calls")),
            ("wall seconds", end.duration_s, budgets.get("max_wall_s")),
        ]
        over = [f"{what} {used} > {limit}" for what, used, limit in checks if limit is not None and used > limit]
        if over:
            return Verdict.fail("; ".join(over))
        return Verdict.ok(f"{end.usage.requests} requests, {calls} tool calls, {end.duration_s:.0f} s")
