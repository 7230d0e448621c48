"""`specops resume RUN`: continue a run that was killed (kill -9 included), appending to its transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from ..agent.replay import NotATranscript
from ..agent.replay.resume import ResumeRefused, resume as resume_run
from ..transcripts import TranscriptCorrupt


def resume(
    run: Annotated[Path, typer.Argument(help="The run directory (runs/<run-id>) of a run that was cut off")],
    model: Annotated[Optional[str], typer.Option(help="Continue with this policy instead of the recorded one")] = None,
    base_url: Annotated[str | None, typer.Option(help="An openai-chat: policy's server, when it moved (default: the recorded one)")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="The environment variable holding its API key (default: the recorded one)")] = None,
) -> None:
    """Continue RUN where its transcript stops: finished work is not redone, new events append to the same run."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        outcome = resume_run(run, model=model, base_url=base_url, api_key_env=api_key_env)
    except (NotATranscript, ResumeRefused, TranscriptCorrupt) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from None
    err.print(f"run {outcome.run_id} resumed: [bold]{outcome.status}[/bold]" + (f" — {outcome.reason}" if outcome.reason else ""))
    if outcome.final is not None:
        err.print(outcome.final.summary)
    err.print(f"transcript and report: {outcome.run_dir}")
    raise typer.Exit(code=outcome.exit_code)
