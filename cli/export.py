"""`specops export RUN`: the run's chosen deployment as launch commands to paste into another scheduler."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..agent.replay import NotATranscript, transcript_path
from ..agent.report.deployment import render_shell
from ..agent.report.export import ExportRefused, export_deployment
from ..transcripts import TranscriptCorrupt, read_transcript
from .streams import fail, result_console


def export(
    run: Annotated[str, typer.Argument(help="A run directory (runs/<run-id>), its transcript.jsonl, or a run id")],
    config: Annotated[
        str | None, typer.Option("--config", help="Another configuration the run launched, by its report name")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, help="The report's winner at this concurrency")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the deployment as JSON")] = False,
    runs_dir: Annotated[Path, typer.Option(help="Where a run id is looked up")] = Path("runs"),
) -> None:
    """Print the configuration RUN recommends as the commands that launch it: one per node, and the gateway's."""
    try:
        path = transcript_path(_run_path(run, runs_dir))
        deployment = export_deployment(
            path.parent, read_transcript(path).events, config=config, concurrency=concurrency
        )
    except (NotATranscript, TranscriptCorrupt, ExportRefused) as exc:
        raise fail(str(exc), 2) from None
    text = deployment.model_dump_json(indent=2) if as_json else render_shell(deployment)
    # Literal text: no markup, emoji codes or highlighting may change a word of a command.
    result_console(highlight=False, soft_wrap=True).print(text, markup=False, emoji=False)


def _run_path(run: str, runs_dir: Path) -> Path:
    """RUN as given when it exists, else the run of that id under --runs-dir."""
    given = Path(run)
    if not given.exists() and "/" not in run and (runs_dir / run).is_dir():
        return runs_dir / run
    return given
