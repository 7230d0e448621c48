"""`specops replay RUN`: re-drive today's agent code from a recorded run; exit 1 at the first divergence.

specops replay runs/<id>                              offline: recorded tool results, no model, no host
specops replay runs/<id> --live-tools --host H        recorded policy (or today's playbook), real tools on H
specops replay runs/<id> --from N --model M --host H  fork: the recorded run up to event N, then policy M
                                   [--base-url URL]  (M = openai-chat:NAME: its server)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..agent.goal import GoalRefused
from ..agent.policies import PolicyUnavailable
from ..agent.replay import NotATranscript, ReplayRefused
from ..agent.replay import replay as replay_run
from ..tools.hosts import HostError
from ..tools.hosts.spec import check_host_spec_characters
from ..transcripts import TranscriptCorrupt
from .show import note_a_cut_last_line
from .streams import fail


def replay(
    run: Annotated[Path, typer.Argument(help="A run directory (runs/<run-id>) or its transcript.jsonl")],
    live_tools: Annotated[
        bool,
        typer.Option(
            "--live-tools", help="Run the tools for real against --host instead of serving the recorded results"
        ),
    ] = False,
    host: Annotated[
        str | None, typer.Option(help="The fresh host for --live-tools and --from (e.g. sim:seed-ct200)")
    ] = None,
    from_event: Annotated[
        int | None, typer.Option("--from", help="Fork: replay up to this event (seq), then continue with --model")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Fork: the live policy after --from (playbook, openai-chat:NAME, PROVIDER:MODEL)")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="Fork: the OpenAI-compatible base URL for an openai-chat: --model (default: the recorded run's, else $OPENAI_BASE_URL)"
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            help="Fork: the environment variable holding its API key (default: the recorded run's, else OPENAI_API_KEY)"
        ),
    ] = None,
    runs_dir: Annotated[Path, typer.Option(help="Where the new run of --live-tools / --from goes")] = Path("runs"),
) -> None:
    """Replay RUN with today's code; print the first divergence and exit 1, or one line and exit 0."""
    if (live_tools or from_event is not None) and host is None:
        raise fail("--live-tools and --from run real tools: name the fresh host with --host (e.g. sim:seed-ct200)")
    if (model is not None or base_url is not None or api_key_env is not None) and from_event is None:
        raise fail("--model (and --base-url, --api-key-env) pick the policy after a fork: pass --from N with it")
    if host is not None:
        try:
            check_host_spec_characters(host)
        except HostError as exc:
            raise fail(f"--host: {exc}", 2) from None
    note_a_cut_last_line(run)
    try:
        result = replay_run(
            run,
            live_host=host if (live_tools or from_event is not None) else None,
            fork_at=from_event,
            fork_model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            runs_dir=runs_dir,
        )
    except (NotATranscript, ReplayRefused, TranscriptCorrupt, GoalRefused, PolicyUnavailable) as exc:
        raise fail(str(exc), 2) from None
    typer.echo(result.summary())  # the verdict, on stdout
    raise typer.Exit(code=0 if result.ok else 1)
