"""`specops show RUN` in a terminal: the run at a glance, then its timeline, then what the report says."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .timeline import Entry, Timeline

_STATUS_STYLE = {
    "completed": "bold green",
    "failed": "bold red",
    "budget_exceeded": "bold yellow",
    "partial": "bold yellow",
    "cancelled": "yellow",
}
_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}


def render_terminal(timeline: Timeline, console: Console, *, verbose: bool = False) -> None:
    console.print(_header(timeline))
    console.print(_plan(timeline))
    table = Table(title="Timeline", show_header=True, header_style="bold", box=None, pad_edge=False, expand=False)
    table.add_column("t", justify="right", style="dim", no_wrap=True)
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("step", overflow="fold")
    table.add_column("took", justify="right", no_wrap=True)
    table.add_column("outcome", overflow="fold")
    for entry in timeline.entries:
        if entry.kind == "host" and not verbose:
            continue
        table.add_row(f"{entry.at_s:7.1f}s", str(entry.seq), *_row(entry, verbose))
    console.print(table)
    console.print(_ending(timeline))


def _header(t: Timeline) -> Panel:
    status = Text(
        t.status or "did not finish (no run_end: resume it with `specops resume`)",
        style=_STATUS_STYLE.get(t.status or "", "bold yellow"),
    )
    lines = Text.assemble(
        ("goal    ", "dim"),
        t.goal,
        "\n",
        ("run     ", "dim"),
        f"{t.run_id}  policy {t.policy}  host {t.host}",
        "\n",
        ("status  ", "dim"),
        status,
        (f" — {t.reason}" if t.reason else ""),
        "\n",
        ("took    ", "dim"),
        f"{t.duration_s:.1f} s, {t.model_turns} model turns, {t.tool_calls} tool calls, "
        f"{t.failures} failed ({t.recovered} recovered)" + (f", resumed {t.resumed}x" if t.resumed else ""),
    )
    return Panel(lines, title="specops run", expand=False)


def _plan(t: Timeline) -> Table:
    plan = Table(title="Plan", show_header=False, box=None, expand=False)
    for span in t.todos:
        took = f"{span.end_s - span.start_s:.1f} s" if span.start_s is not None and span.end_s is not None else ""
        plan.add_row(
            Text(_MARK.get(span.status, "[?]")), Text(span.id, style="bold"), span.content, Text(took, style="dim")
        )
    return plan


def _row(entry: Entry, verbose: bool) -> tuple[Text, str, Text]:
    took = f"{entry.duration_s:.1f} s" if entry.duration_s is not None else ""
    if entry.kind == "call":
        if entry.ok is None:
            outcome = Text("cut off (no result)", style="yellow")
        elif entry.ok:
            outcome = Text("ok", style="green")
        else:
            error = entry.details.get("error") or {}
            outcome = Text(f"{entry.error_kind}: {error.get('what', '')}"[:300], style="red")
            if entry.recovered:
                outcome.append("  -> recovered", style="bold green")
        step = Text(entry.title, style="bold cyan")
        if verbose:
            step.append(f" {entry.details.get('args')}", style="dim")
        return step, took, outcome
    style = {
        "plan": "magenta",
        "retry": "yellow",
        "error": "bold red",
        "approval": "blue",
        "note": "dim",
        "host": "dim",
    }[entry.kind]
    return Text(entry.title if verbose else entry.title[:200], style=style), took, Text("")


def _ending(t: Timeline) -> Group:
    parts: list[RenderableType] = []
    headline = t.headline
    if not headline:
        parts.append(Text("no report (the run did not finish)" if t.status is None else "no report", style="dim"))
    for key in ("recommendation", "acceptance", "crossover", "unresolved"):
        if key in headline:
            parts.append(Text.assemble((f"{key}: ", "bold"), headline[key]))
    if "summary" in headline:
        parts.append(Panel(headline["summary"], title="final answer", expand=False))
    return Group(*parts)
