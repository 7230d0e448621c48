"""Evidence for grader tests, written with the transcript's own event models (no stand-ins): a run as events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from specops.evals.evidence import RunEvidence
from specops.evals.execute import ScenarioRun
from specops.evals.host_state import HostSnapshot, LiveServer
from specops.evals.scenario import Scenario
from specops.transcripts.events import (
    ApprovalEvent,
    RunEndEvent,
    RunStartEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from specops.transcripts.records import ErrorRecord, PolicyInfo, Usage

HOME = "/w/root/home"


class Run:
    def __init__(self, scenario: dict[str, Any] | None = None) -> None:
        base = {"name": "unit", "why": "a run written event by event for a grader test", "goal": "deploy x/y-DFlash"}
        self.scenario = Scenario.model_validate({**base, **(scenario or {})})
        self.events: list[Any] = []
        self.report: dict[str, Any] = {
            "benchmarks": [],
            "configs": [],
            "comparison": [],
            "flags": [],
            "left_running": {"servers": [], "policy_text": []},
            "run": {},
        }
        self.before = HostSnapshot(files={})
        self.after = HostSnapshot(files={})
        self.live: list[LiveServer] = []
        self._add(
            RunStartEvent,
            goal=self.scenario.goal,
            policy=PolicyInfo(name="playbook"),
            config={"budgets": {"max_requests": 80, "max_tool_calls": 300, "max_wall_s": 300.0}},
        )

    def _add(self, cls, **fields):
        self.events.append(cls(seq=len(self.events), ts=datetime.now(UTC), run_id="r1", **fields))

    def tool(self, tool: str, args: dict[str, Any] | None = None, result: Any = None, error: str | None = None):
        call_id = f"c{len(self.events)}"
        self._add(ToolCallEvent, call_id=call_id, tool=tool, args=args or {})
        if result is None and tool == "todowrite" and "todos" in (args or {}):
            result = {"todos": args["todos"]}  # as the tool answers: the plan now
        if error is None:
            self._add(
                ToolResultEvent, call_id=call_id, tool=tool, ok=True, result=result, duration_s=0.1, host="sim:/w"
            )
        else:
            self._add(
                ToolResultEvent,
                call_id=call_id,
                tool=tool,
                ok=False,
                duration_s=0.1,
                host="sim:/w",
                error=ErrorRecord(kind=error, what=f"{tool} failed: {error}", remedy="fix it"),
            )
        return self

    def approval(self, by: str):
        self._add(ApprovalEvent, asked="delete /x?", answer="yes", approved=True, by=by)
        return self

    def end(self, status: str = "completed", requests: int = 10, duration_s: float = 30.0) -> RunEvidence:
        self._add(RunEndEvent, status=status, usage=Usage(requests=requests), duration_s=duration_s)
        run = ScenarioRun(
            scenario=self.scenario,
            policy="playbook",
            run_dir="/nonexistent/unit",
            run_status=status,
            home=HOME,
            before=self.before,
            after=self.after,
            live_servers=self.live,
        )
        return RunEvidence(run=run, events=self.events, report=self.report)
