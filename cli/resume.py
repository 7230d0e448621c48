"""`specops resume RUN`: continue a run that was killed (kill -9 included), appending to its transcript."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..agent.replay import NotATranscript
from ..agent.replay.resume import ResumeRefused, RunAlreadyEnded
from ..agent.replay.resume import resume as resume_run
from ..agent.run import RunOptions, run_secrets
from ..transcripts import TranscriptCorrupt
from .run import print_outcome
from .show import note_a_cut_last_line
from .streams import fail, output_redactor, result_console


def resume(
    run: Annotated[Path, typer.Argument(help="The run directory (runs/<run-id>) of a run that was cut off")],
    model: Annotated[str | None, typer.Option(help="Continue with this policy instead of the recorded one")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="An openai-chat: policy's server, when it moved (default: the recorded one)")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="The environment variable holding its API key (default: the recorded one)")
    ] = None,
) -> None:
    """Continue RUN where its transcript stops: finished work is not redone, new events append to the same run."""
    # The key the continued run may use and the Hub token, hidden on the terminal as in the run's own files.
    for secret, name in run_secrets(RunOptions(api_key_env=api_key_env)).items():
        output_redactor().add_secret(secret, name)
    note_a_cut_last_line(run)
    try:
        outcome = resume_run(run, model=model, base_url=base_url, api_key_env=api_key_env)
    except RunAlreadyEnded as exc:  # nothing to do, and nothing changed: not an error
        result_console(highlight=False, soft_wrap=True).print(str(exc), markup=False)
        raise typer.Exit(code=0) from None
    except (NotATranscript, ResumeRefused, TranscriptCorrupt) as exc:
        raise fail(str(exc), 2) from None
    print_outcome(outcome, result_console(highlight=False, soft_wrap=True), resumed=True)
    raise typer.Exit(code=outcome.exit_code)
