"""A run's timeline, read from its events: what `specops show` renders for a person (terminal or HTML).

Entries in order: plan changes, tool calls (paired with their results:
duration, ok or the typed error, and whether a later call of the same tool
recovered from the failure), retries, approvals, harness errors and notes.
Plus each todo's span (when it started and ended, by the plan's changes) and
the run's ending with the report's headline facts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from .events import (
    ApprovalEvent,
    ErrorEvent,
    Event,
    HostOpenedEvent,
    ModelResponseEvent,
    NoteEvent,
    ResumedEvent,
    RetryEvent,
    RunEndEvent,
    RunStartEvent,
    TodoChangeEvent,
    ToolCallEvent,
)
from .pairs import pair_tool_calls

EntryKind = Literal["plan", "call", "retry", "approval", "error", "note", "host"]


class Entry(BaseModel):
    kind: EntryKind
    seq: int
    at_s: float  # seconds since the run started
    title: str  # one line
    ok: bool | None = None  # calls: True/False; None while unfinished (the run stopped in it)
    duration_s: float | None = None
    error_kind: str | None = None
    recovered: bool = False  # a failed call that a later call of the same tool got past
    todo: str | None = None  # the todo in progress when it happened
    details: dict[str, Any] = {}  # arguments, result or error, the plan's changes: shown on demand


class TodoSpan(BaseModel):
    id: str
    content: str
    status: str
    start_s: float | None = None  # first in_progress
    end_s: float | None = None  # completed or cancelled


class Timeline(BaseModel):
    run_id: str
    goal: str
    policy: str
    host: str
    started: datetime
    duration_s: float
    status: str | None  # None: the run has no run_end (cut off)
    reason: str | None = None
    entries: list[Entry]
    todos: list[TodoSpan]
    model_turns: int
    tool_calls: int
    failures: int
    recovered: int
    report: dict[str, Any] | None = None
    resumed: int = 0  # times the run was resumed

    @property
    def headline(self) -> dict[str, str]:
        """The report's few facts a reader wants first."""
        report = self.report or {}
        out: dict[str, str] = {}
        run = report.get("run") or {}
        if run.get("summary_text"):
            out["summary"] = str(run["summary_text"])
        recommendation = (report.get("recommendation") or {}).get("text")
        if recommendation:
            out["recommendation"] = str(recommendation)
        overall = (report.get("acceptance") or {}).get("overall") or {}
        if overall.get("request_mean") is not None:
            out["acceptance"] = (
                f"request mean {overall['request_mean']:.2f}, token weighted "
                f"{overall.get('token_weighted') or 0:.2f} over {overall.get('prompts', '?')} prompts"
            )
        crossover = (report.get("crossover") or {}).get("statement")
        if crossover and report.get("benchmarks"):
            out["crossover"] = str(crossover)
        unresolved = report.get("unresolved_text") or []
        if unresolved:
            out["unresolved"] = "; ".join(map(str, unresolved))
        return out


def build_timeline(events: list[Event]) -> Timeline:
    if not events or not isinstance(events[0], RunStartEvent):
        raise ValueError("a timeline needs a transcript that starts with run_start")
    start = events[0]
    t0 = start.ts

    def at(event: Event) -> float:
        return (event.ts - t0).total_seconds()

    def entry_for(event: Event, kind: EntryKind, title: str, **more: Any) -> Entry:
        return Entry(kind=kind, seq=event.seq, at_s=at(event), todo=current, title=title, **more)

    entries: list[Entry] = []
    results = {id(pair.call): pair.result for pair in pair_tool_calls(events)}
    spans: dict[str, TodoSpan] = {}
    current: str | None = None
    end: RunEndEvent | None = None
    turns = resumed = 0
    for event in events:
        if isinstance(event, ModelResponseEvent):
            turns += 1
        elif isinstance(event, TodoChangeEvent):
            for todo in event.todos:
                span = spans.setdefault(todo.id, TodoSpan(id=todo.id, content=todo.content, status=todo.status))
                span.content, span.status = todo.content, todo.status
                if todo.status == "in_progress" and span.start_s is None:
                    span.start_s = at(event)
                if todo.status in ("completed", "cancelled") and span.end_s is None:
                    span.end_s = at(event)
            current = next((t.id for t in event.todos if t.status == "in_progress"), None)
            changed = [
                f"{c.id} {c.after or c.change}" if c.change == "status" else f"{c.id} {c.change}" for c in event.changes
            ]
            if changed:
                changes = {"changes": [c.model_dump(mode="json") for c in event.changes]}
                entries.append(entry_for(event, "plan", "plan: " + ", ".join(changed), details=changes))
        elif isinstance(event, ToolCallEvent):
            if event.tool == "todowrite":
                continue  # shown as the plan change it makes
            entry = entry_for(event, "call", event.tool, details={"call_id": event.call_id, "args": event.args})
            result = results.get(id(event))
            if result is not None:
                entry.ok, entry.duration_s = result.ok, result.duration_s
                if result.ok:
                    entry.details["result"] = result.result
                elif result.error is not None:
                    entry.error_kind = result.error.kind
                    entry.details["error"] = result.error.model_dump(mode="json")
            entries.append(entry)
        elif isinstance(event, RetryEvent):
            entries.append(entry_for(event, "retry", f"retry {event.what} (attempt {event.attempt}): {event.reason}"))
        elif isinstance(event, ApprovalEvent):
            title = f"asked: {event.asked} -> {event.answer} ({event.by})"
            entries.append(entry_for(event, "approval", title, ok=event.approved))
        elif isinstance(event, ErrorEvent):
            entries.append(
                entry_for(event, "error", f"{event.where}: {event.message}", ok=False, error_kind=event.kind)
            )
        elif isinstance(event, NoteEvent):
            entries.append(entry_for(event, "note", event.text))
        elif isinstance(event, HostOpenedEvent):
            title = f"host opened: {event.host.spec} ({event.host.opened})"
            entries.append(entry_for(event, "host", title, details={"host": event.host.model_dump(mode="json")}))
        elif isinstance(event, ResumedEvent):
            resumed += 1
            torn = " (a torn last line was dropped)" if event.torn_tail_dropped else ""
            entries.append(
                entry_for(event, "note", f"resumed after event {event.after_seq} under {event.policy}{torn}")
            )
        elif isinstance(event, RunEndEvent):
            end = event
    _mark_recoveries(entries)
    call_entries = [e for e in entries if e.kind == "call"]
    return Timeline(
        run_id=start.run_id,
        goal=start.goal,
        policy=start.policy.name,
        host=str(start.host.get("spec", "")),
        started=t0,
        duration_s=at(events[-1]),
        status=end.status if end else None,
        reason=end.reason if end else None,
        entries=entries,
        todos=list(spans.values()),
        model_turns=turns,
        tool_calls=len(call_entries),
        failures=sum(e.ok is False for e in call_entries),
        recovered=sum(e.recovered for e in call_entries),
        report=end.report if end else None,
        resumed=resumed,
    )


def _mark_recoveries(entries: list[Entry]) -> None:
    """A failed call is recovered when a later call of the same tool, or the next call in the same todo, succeeded."""
    for i, entry in enumerate(entries):
        if entry.kind != "call" or entry.ok is not False:
            continue
        later = [e for e in entries[i + 1 :] if e.kind == "call" and e.ok]
        entry.recovered = any(e.title == entry.title or (e.todo is not None and e.todo == entry.todo) for e in later)
