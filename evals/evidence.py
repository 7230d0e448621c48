"""What a grader reads about one scenario run: the eval record, the transcript's events and the report.

Loaded from the run's directory, so grading a fresh run and re-grading a saved
one (`specops eval --regrade DIR`) read exactly the same things.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from specops.agent.report.schema import Report
from specops.agent.todo import Todo, TodoWriteResult
from specops.transcripts import ToolPair, pair_tool_calls, read_transcript
from specops.transcripts.events import (
    ApprovalEvent,
    Event,
    RunEndEvent,
    RunStartEvent,
    TodoChangeEvent,
)

from .execute import ScenarioRun, load_run
from .scenario import Scenario

TRANSCRIPT = "transcript.jsonl"
REPORT = "report.json"


class ReportInvalid(ValueError):
    """A saved report that is not a valid report (the schema of agent/report/schema.py): which file, and why."""

    def __init__(self, source: str, exc: ValidationError) -> None:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(report)"
        super().__init__(f"{source}: not a valid report ({exc.error_count()} error(s); first: {where}: {first['msg']})")
        self.source = source


def _report(data: str | dict[str, Any], source: str) -> Report:
    try:
        return Report.model_validate_json(data) if isinstance(data, str) else Report.model_validate(data)
    except ValidationError as exc:
        raise ReportInvalid(source, exc) from None


@dataclass
class RunEvidence:
    run: ScenarioRun
    events: list[Event] = field(default_factory=list)
    report: Report | None = None

    @classmethod
    def load(cls, run_dir: Path) -> RunEvidence:
        """The run's records; the report validated once, from report.json or else the transcript's run_end."""
        run = load_run(run_dir)
        transcript = run_dir / TRANSCRIPT
        events = read_transcript(transcript).events if transcript.exists() else []
        report_file = run_dir / REPORT
        report = _report(report_file.read_text(encoding="utf-8"), str(report_file)) if report_file.exists() else None
        if report is None:
            end = next((e for e in reversed(events) if isinstance(e, RunEndEvent)), None)
            report = (
                _report(end.report, f"{transcript} (run_end's report)")
                if end is not None and end.report is not None
                else None
            )
        return cls(run=run, events=events, report=report)

    @property
    def scenario(self) -> Scenario:
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
    def final_todos(self) -> list[Todo] | None:
        """The plan as the policy last wrote it (a cancelled item's reason is in the call, not the todo record)."""
        writes = [s for s in self.steps if s.tool == "todowrite" and s.ok]
        if writes:
            last_write = writes[-1].result_as(TodoWriteResult)
            return list(last_write.todos) if last_write is not None else []
        last = next((e for e in reversed(self.events) if isinstance(e, TodoChangeEvent)), None)
        return None if last is None else [Todo.model_validate(t.model_dump()) for t in last.todos]

    @property
    def policy_status(self) -> str | None:
        """The final answer's own status (completed, partial, failed, cannot_do), as the report recorded it."""
        return self.report.run.policy_status if self.report is not None else None

    @property
    def final_text(self) -> str:
        """Everything the policy said at the end, for word checks: summary, recommendation, unresolved, left running."""
        end = self.run_end
        parts = [end.reason or ""] if end is not None else []
        if self.report is not None:
            parts.append(self.report.run.summary_text or "")
            parts += self.report.unresolved_text
            parts.append(self.report.recommendation.policy_text or "")
            parts += self.report.left_running.policy_text
        return "\n".join(p for p in parts if p)
