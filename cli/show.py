"""`specops show RUN`: a run's timeline for a person, in the terminal or as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from ..agent.replay import NotATranscript, transcript_path
from ..transcripts import TranscriptCorrupt, read_transcript
from ..transcripts.show_html import render_html
from ..transcripts.show_terminal import render_terminal
from ..transcripts.timeline import build_timeline


def show(
    run: Annotated[Path, typer.Argument(help="A run directory (runs/<run-id>) or its transcript.jsonl[.gz]")],
    html: Annotated[Optional[Path], typer.Option("--html", help="Write one self-contained HTML page here instead")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every note and each call's arguments")] = False,
) -> None:
    """Show RUN: the plan and its changes, tool calls with durations, failures and recoveries, and the report."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        path = transcript_path(run)
        events = read_transcript(path).events
        timeline = build_timeline(events)
    except (NotATranscript, TranscriptCorrupt, ValueError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from None
    if html is not None:
        html.write_text(render_html(timeline, path.parent), encoding="utf-8")
        err.print(f"wrote {html} ({html.stat().st_size / 1024:.0f} KiB)")
        return
    render_terminal(timeline, Console(), verbose=verbose)
