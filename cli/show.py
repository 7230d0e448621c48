"""`specops show RUN`: a run's timeline for a person, in the terminal or as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..agent.replay import NotATranscript, transcript_path
from ..transcripts import TranscriptCorrupt, read_transcript
from ..transcripts.show_html import render_html
from ..transcripts.show_terminal import render_terminal
from ..transcripts.timeline import build_timeline
from .streams import RedactingConsole, fail, output_redactor, result_console


def show(
    run: Annotated[Path, typer.Argument(help="A run directory (runs/<run-id>) or its transcript.jsonl[.gz]")],
    html: Annotated[Path | None, typer.Option("--html", help="Write one self-contained HTML page here instead")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every note and each call's arguments")] = False,
) -> None:
    """Show RUN: the plan and its changes, tool calls with durations, failures and recoveries, and the report."""
    try:
        path = transcript_path(run)
        events = read_transcript(path).events
        timeline = build_timeline(events)
    except (NotATranscript, TranscriptCorrupt, ValueError) as exc:
        raise fail(str(exc), 2) from None
    if html is not None:  # the page is the result: where it went, on stdout
        try:
            html.write_text(render_html(timeline, path.parent, redactor=output_redactor()), encoding="utf-8")
        except OSError as exc:
            raise fail(f"--html: cannot write {html}: {exc.strerror or exc}", 2) from None
        result_console(highlight=False, soft_wrap=True).print(
            f"wrote {escape(str(html))} ({html.stat().st_size / 1024:.0f} KiB)"
        )
        return
    render_terminal(timeline, RedactingConsole(), verbose=verbose)
