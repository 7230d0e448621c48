"""What a grader reads about one scenario run: the eval record, the transcript's events and the report.

Loaded from the run's directory, so grading a fresh run and re-grading a saved
one (`specops eval --regrade DIR`) read exactly the same things.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from specops.transcripts import ToolPair, pair_tool_calls, read_transcript
from specops.transcripts.events import (
    ApprovalEvent,
    Event,
    RunEndEvent,
    RunStartEvent,
    TodoChangeEvent,
)

from .execute import ScenarioRun, load_run

TRANSCRIPT = "transcript.jsonl"
REPORT = "report.json"


@dataclass
class RunEvidence:
    run: ScenarioRun
    events: list[Event] = field(default_factory=list)
    report: dict[str, Any] | None = None

    @classmethod
    def load(cls, run_dir: Path) -> RunEvidence:
        run = load_run(run_dir)
        transcript = run_dir / TRANSCRIPT
        events = read_transcript(transcript).events if transcript.exists() else []
        report_file = run_dir / REPORT
        report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.exists() else None
        if report is None:
            end = next((e for e in reversed(events) if isinstance(e, RunEndEvent)), None)
            report = end.report if end is not None else None
        return cls(run=run, events=events, report=report)

    @property
    def scenario(self):
        return self.run.scenario

    @cached_property
    def steps(self) -> list[ToolPair]:
        return pair_tool_calls(self.events)

    def steps_of(self, tool: str) -> list[ToolPair]:
        return [s for s in self.steps if s.tool == tool]

    @property
    def run_start(self) -> RunStartEvent | None:
        return next((e for e in self.events if isinstance(e, RunStartEvent)), None)

    @property
    def run_end(self) -> RunEndEvent | None:
        return next((e for e in reversed(self.events) if isinstance(e, RunEndEvent)), None)

    @property
    def approvals(self) -> list[ApprovalEvent]:
        return [e for e in self.events if isinstance(e, ApprovalEvent)]

    @property
    def final_todos(self) -> list[dict[str, Any]] | None:
        """The plan as the policy last wrote it (a cancelled item's reason is in the call, not the todo record)."""
        writes = [s for s in self.steps if s.tool == "todowrite" and s.ok]
        if writes:
            last_write = writes[-1].result
            return list((last_write.result or {}).get("todos") or []) if last_write is not None else []
        last = next((e for e in reversed(self.events) if isinstance(e, TodoChangeEvent)), None)
        return None if last is None else [t.model_dump(mode="json") for t in last.todos]

    @property
    def policy_status(self) -> str | None:
        """The final answer's own status (completed, partial, failed, cannot_do), as the report recorded it."""
        return ((self.report or {}).get("run") or {}).get("policy_status")

    @property
    def final_text(self) -> str:
        """Everything the policy said at the end, for word checks: summary, recommendation, unresolved, left running."""
        end = self.run_end
        parts = [end.reason or ""] if end is not None else []
        if self.report:
            run = self.report.get("run") or {}
            parts.append(str(run.get("summary_text") or ""))
            parts += [str(t) for t in self.report.get("unresolved_text") or []]
            rec = self.report.get("recommendation") or {}
            parts.append(str(rec.get("policy_text") or ""))
            parts += [str(t) for t in (self.report.get("left_running") or {}).get("policy_text") or []]
        return "\n".join(p for p in parts if p)
