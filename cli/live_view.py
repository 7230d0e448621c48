"""What `specops run` shows while it works: the plan, a bar per download and per benchmark sweep, the latest calls.

Everything comes from the run's events as the recorder writes them (the view is a
listener), so the terminal never shows what the transcript does not hold:
- a download's bar moves with each `download_status` / `wait_download` result
  (bytes done of the listed total);
- a benchmark sweep's bar starts with the `benchmark` call (levels asked for) and
  fills when its result arrives (levels measured, best tok/s), the client running
  on the host as one process that reports once at the end.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..transcripts import EventBase, TodoChangeEvent, TodoItem, ToolCallEvent, ToolResultEvent

_STYLE = {"pending": "dim", "in_progress": "bold yellow", "completed": "green", "cancelled": "strike dim"}
_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}
_DOWNLOAD_TOOLS = ("download_status", "wait_download")


class LiveView:
    """The plan, progress bars and the latest tool activity, redrawn as events arrive."""

    def __init__(self) -> None:
        self.todos: list[TodoItem] = []
        self.activity: list[str] = []
        self.calls = 0
        self.failures = 0
        self.downloads = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TextColumn("{task.fields[state]}"),
            auto_refresh=False,
        )
        self.sweeps = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.0f}/{task.total:.0f} levels"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[outcome]}"),
            auto_refresh=False,
        )
        self._download_tasks: dict[tuple[str, str], TaskID] = {}
        self._sweep_tasks: dict[str, TaskID] = {}  # benchmark call id -> its bar

    def on_event(self, event: EventBase) -> None:
        if isinstance(event, TodoChangeEvent):
            self.todos = list(event.todos)
        elif isinstance(event, ToolCallEvent):
            self.calls += 1
            self.activity.append(f"-> {event.tool}")
            if event.tool == "benchmark":
                self._sweep_started(event.call_id, event.args)
        elif isinstance(event, ToolResultEvent):
            self.failures += not event.ok
            verdict = "ok" if event.ok else f"failed: {event.error.kind if event.error else '?'}"
            self.activity.append(f"<- {event.tool} {verdict} ({event.duration_s:.1f} s)")
            if event.tool in _DOWNLOAD_TOOLS and event.ok and isinstance(event.result, dict):
                self._download(event.result)
            elif event.tool == "benchmark":
                self._sweep_ended(event.call_id, event.result if event.ok else None, verdict)
        self.activity = self.activity[-6:]

    def _download(self, status: dict[str, Any]) -> None:
        key = (str(status.get("repo_id")), str(status.get("target_dir")))
        total = float(status.get("expected_bytes") or 0) or None
        if key not in self._download_tasks:
            self._download_tasks[key] = self.downloads.add_task(f"download {key[0]}", total=total, state="")
        self.downloads.update(
            self._download_tasks[key],
            completed=float(status.get("done_bytes") or 0),
            total=total,
            state=str(status.get("state", "")),
        )

    def _sweep_started(self, call_id: str, args: dict[str, Any]) -> None:
        levels = args.get("levels")
        if not isinstance(levels, list):
            levels = []
        port = args.get("port", "?")
        self._sweep_tasks[call_id] = self.sweeps.add_task(f"benchmark port {port}", total=len(levels) or 1, outcome="")

    def _sweep_ended(self, call_id: str, result: dict[str, Any] | None, verdict: str) -> None:
        task = self._sweep_tasks.get(call_id)
        if task is None:
            return
        if result is None:
            self.sweeps.update(task, outcome=verdict)
        else:
            levels = result.get("levels") or []
            self.sweeps.update(
                task,
                completed=len(levels),
                outcome=f"best {result.get('best_output_tok_s', 0):.0f} tok/s at C={result.get('best_at_concurrency')}",
            )
        self.sweeps.stop_task(task)

    def __rich__(self) -> Group:
        plan = Table(title="Plan", show_header=False, box=None, expand=False)
        for item in self.todos:
            plan.add_row(Text(f"{_MARK[item.status]} {item.content}", style=_STYLE[item.status]), item.priority)
        done = sum(t.status == "completed" for t in self.todos)
        progress = Text(f"{done}/{len(self.todos)} steps done · {self.calls} tool calls · {self.failures} failed")
        parts: list[Any] = [plan, progress]
        if self.downloads.tasks:
            parts.append(self.downloads)
        if self.sweeps.tasks:
            # The last few sweeps: a run makes one per configuration.
            for task in self.sweeps.tasks[:-4]:
                task.visible = False
            parts.append(self.sweeps)
        parts.append(Text("\n".join(self.activity), style="cyan"))
        return Group(*parts)
