"""`specops show RUN`: a run's timeline for a person, in the terminal or as one self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..agent.replay import NotATranscript, transcript_path
from ..transcripts import TranscriptCorrupt, read_transcript
from ..transcripts.show_html import render_html
from ..transcripts.show_terminal import render_terminal
from ..transcripts.timeline import Timeline, build_timeline
from .streams import RedactingConsole, fail, note_line, output_redactor, result_console


def note_a_cut_last_line(run: Path) -> None:
    """Say in one line (stderr) that RUN's transcript ends in a cut line, before replay or resume reads past it; a
    transcript that cannot be read is left to the command, which says why."""
    try:
        note = read_transcript(transcript_path(run)).torn_tail_note
    except (NotATranscript, TranscriptCorrupt, ValueError, OSError):
        return
    if note:
        note_line(note)


def with_report_files(timeline: Timeline, run_dir: Path) -> Timeline:
    """The timeline with the report the run wrote beside its transcript, when its run_end event is not there (a
    last line cut off): report.json has the same facts."""
    report_file = run_dir / "report.json"
    if timeline.report is not None or not report_file.is_file():
        return timeline
    try:
        report = json.loads(report_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return timeline  # a report that cannot be read is not shown; the timeline still is
    status = (report.get("run") or {}).get("status") if isinstance(report, dict) else None
    return timeline.model_copy(update={"report": report, "status": timeline.status or status})


def show(
    run: Annotated[Path, typer.Argument(help="A run directory (runs/<run-id>) or its transcript.jsonl[.gz]")],
    html: Annotated[Path | None, typer.Option("--html", help="Write one self-contained HTML page here instead")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every note and each call's arguments")] = False,
) -> None:
    """Show RUN: the plan and its changes, tool calls with durations, failures and recoveries, and the report."""
    try:
        path = transcript_path(run)
        read = read_transcript(path)
        timeline = with_report_files(build_timeline(read.events), path.parent)
    except (NotATranscript, TranscriptCorrupt, ValueError) as exc:
        raise fail(str(exc), 2) from None
    if read.torn_tail_note:
        note_line(read.torn_tail_note)
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
