"""Budgets respected: requests, tool calls, wall time and the host's time within what the run was given, and no
budget ran out. The host's time is the report's (from the first host call to the last, on the host's clock): a
policy given a host-time budget must plan its experiments to end within it, not be cut off by the loop."""

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
        host_s = evidence.report.timing.host.host_s if evidence.report is not None else None
        if budgets.get("max_host_s") is not None:
            if host_s is None:
                return Verdict.fail("the run had a host-time budget but its report does not know its host time")
            checks.append(("host seconds", round(host_s, 1), budgets["max_host_s"]))
        over = [f"{what} {used} > {limit}" for what, used, limit in checks if limit is not None and used > limit]
        if over:
            return Verdict.fail("; ".join(over))
        on_host = f", {host_s:.0f} host s" if host_s is not None else ""
        return Verdict.ok(f"{end.usage.requests} requests, {calls} tool calls, {end.duration_s:.0f} s{on_host}")
