"""Where the run's time went: per todo item (while it was in progress) and per tool.

An item's time is the sum of its in-progress spells, each from the todo_change
that set it in_progress to the one that moved it on (or the run's end). Tool
calls are counted to the item in progress when they were made; with overlapping
work (a download running while the baseline is benchmarked) several items can
be in progress, and a call counts to each, so item times need not add up.

These are this machine's seconds (how long the agent waited); each item's and
tool's seconds on the host's own clock, the job's total and its GPU-hours, are
host_time.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from specops.agent.loop_tools import LOOP_TOOLS

from .evidence import Evidence, ToolExchange
from .host_time import calls_host_s, gpu_hours, host_time_section
from .schema import Timing, TodoTime, ToolTime


@dataclass
class _Item:
    content: str
    status: str
    spells: list[tuple[datetime, datetime | None]] = field(default_factory=list)


def _items(evidence: Evidence) -> dict[str, _Item]:
    items: dict[str, _Item] = {}
    for change in evidence.todo_changes:
        for todo in change.todos:
            item = items.setdefault(todo.id, _Item(todo.content, todo.status))
            item.content = todo.content
            was_in_progress = bool(item.spells) and item.spells[-1][1] is None
            if todo.status == "in_progress" and not was_in_progress:
                item.spells.append((change.ts, None))
            elif todo.status != "in_progress" and was_in_progress:
                item.spells[-1] = (item.spells[-1][0], change.ts)
            item.status = todo.status
        listed = {t.id for t in change.todos}
        for item_id, item in items.items():
            if item_id not in listed and item.spells and item.spells[-1][1] is None:
                item.spells[-1] = (item.spells[-1][0], change.ts)
                item.status = "removed"
    return items


def time_spent(evidence: Evidence) -> Timing:
    end = evidence.run_end.ts if evidence.run_end else evidence.last_ts
    host = host_time_section(evidence)
    todos = []
    for item_id, item in _items(evidence).items():
        spells = [(start, stop or end or start) for start, stop in item.spells]
        calls = [x for x in evidence.exchanges if any(start <= x.call_ts <= stop for start, stop in spells)]
        host_s = calls_host_s(calls)
        todos.append(
            TodoTime(
                id=item_id,
                content=item.content,
                final_status=item.status,
                in_progress_s=round(sum((stop - start).total_seconds() for start, stop in spells), 3),
                tool_calls=len(calls),
                tool_s=round(sum(x.duration_s for x in calls), 3),
                host_s=host_s,
                gpu_hours=gpu_hours(host_s, host.gpu_count),
            )
        )
    tools: dict[str, list[ToolExchange]] = {}
    for x in evidence.exchanges:
        tools.setdefault(x.tool, []).append(x)
    tool_times = [
        ToolTime(
            tool=name,
            calls=len(xs),
            failed=sum(1 for x in xs if not x.ok),
            total_s=round(sum(x.duration_s for x in xs), 3),
            max_s=round(max(x.duration_s for x in xs), 3),
            # The loop's own tools (todowrite) never reach the host: no host seconds, not zero.
            host_s=None if name in LOOP_TOOLS else calls_host_s(xs),
        )
        for name, xs in sorted(tools.items(), key=lambda kv: -sum(x.duration_s for x in kv[1]))
    ]
    return Timing(
        todos=todos,
        tools=tool_times,
        tool_total_s=round(sum(x.duration_s for x in evidence.exchanges), 3),
        model_total_s=round(evidence.model_time_s, 3),
        host=host,
    )
