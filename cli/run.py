"""`specops run "<goal>"`: carry out a goal on a host and report; the terminal follows the plan live.

The default host is `sim:seed-ct200`, a simulated copy of the seed's host started
for the run at --time-scale (default: the profile's quick-run scale; modelled
seconds per real second, measured rates scale back exactly). The default policy is the playbook unless
--model or $SPECOPS_MODEL names one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.live import Live
from rich.markup import escape

from ..agent.approval import check_delete_spec
from ..agent.budget import Budgets
from ..agent.durations import parse_duration
from ..agent.goal import GoalRefused
from ..agent.host import DEFAULT_HOST
from ..agent.policies import PolicyUnavailable
from ..agent.questions import load_answers
from ..agent.run import RunOptions, RunOutcome, run_goal, run_secrets
from ..tools.hosts import HostRequest
from ..tools.hosts.kinds import ProvisionFailed, provisioner_for
from ..tools.hosts.spec import check_host_spec_characters
from ..tools.hub import HubTokenUnreadable, local_hub_token
from ..tools.inputs import one_line, validation_message
from .live_view import LiveView
from .streams import fail, output_redactor, progress_console, result_console


def _check_allow_delete(values: list[str] | None) -> list[str] | None:
    try:
        return [check_delete_spec(v) for v in values or []] or None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _check_budget(value: str | None) -> str | None:
    """--budget is a duration ("2h", "90min", "1h30m", seconds): said before anything is written."""
    try:
        if value is not None:
            parse_duration(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    return value


def _check_allow_root(values: list[str] | None) -> list[str] | None:
    for value in values or []:
        if not value.startswith(("/", "~")) or any(ord(c) < 32 for c in value):
            raise typer.BadParameter(
                f"{value!r} is not a directory on the host: give an absolute path such as /dev/shm"
            )
    return values


# Each Budgets and RunOptions field by the flag that sets it, for errors in the user's words.
FLAGS = {
    "max_requests": "--max-requests",
    "max_tool_calls": "--max-tool-calls",
    "max_tokens": "--max-tokens",
    "max_cost_usd": "--max-cost",
    "max_wall_s": "--max-wall",
    "max_host_s": "--budget",
    "runs_dir": "--runs-dir",
    "ask_once": "--ask-once",
    "answers_file": "--answers",
    "allow_delete": "--allow-delete",
    "allow_roots": "--allow-root",
    "launch_wait_s": "--launch-wait",
    "stall_wait_s": "--stall-wait",
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
}


HOST_FLAGS = {"spec": "--host", "faults": "--sim-fault", "time_scale": "--time-scale"}


def parse_host_request(host: str, sim_faults: list[str], time_scale: float | None) -> HostRequest:
    """--host with --sim-fault and --time-scale, checked and parsed once into the request the run is given: exit 2
    with one line naming the flag when one is wrong; starts nothing."""
    from ..tools.hosts import HostError

    try:
        check_host_spec_characters(host)
    except HostError as exc:
        raise fail(f"--host: {exc}", 2) from None
    if time_scale is not None and not time_scale > 0:  # nan too
        raise fail(f"--time-scale: {time_scale} is not a time scale: give a positive number (10: ten times faster)", 2)
    given = {"faults": tuple(sim_faults), "time_scale": time_scale}
    request = HostRequest(spec=host, options={name: value for name, value in given.items() if value})
    provisioner = provisioner_for(host)
    if provisioner is None:
        if request.options:
            raise fail(f"--sim-fault and --time-scale apply to sim:PROFILE hosts only, not --host {host}", 2)
        return request
    try:
        provisioner.check(request)
    except ProvisionFailed as exc:
        raise fail(f"{HOST_FLAGS.get(exc.option, '--host')}: {one_line(str(exc))}", 2) from None
    return request


def check_run_inputs(answers: Path | None, ask_once: bool) -> None:
    """What `run` can check before anything is written beside the host: the answers file, the Hub token file.
    Exit 2 with one line naming what is wrong; nothing is created."""
    if answers is not None and not ask_once:
        raise fail(
            "--answers: answers are read only in the --ask-once round: add --ask-once, or leave --answers out", 2
        )
    if answers is not None:
        try:
            load_answers(answers)
        except ValueError as exc:
            raise fail(f"--answers: {exc}", 2) from None
    try:
        local_hub_token()  # the Hub token the run would use: a token file that cannot be read is said now
    except HubTokenUnreadable as exc:
        raise fail(f"{exc.what}: {exc.remedy}", 2) from None


def run(
    goal: Annotated[str, typer.Argument(help="The goal in one line, naming the drafter's Hub repo")],
    host: Annotated[
        str,
        typer.Option(
            help="sim:PROFILE (started for the run), sim:NAME (a running world), local, ssh://user@host, or an inventory name"
        ),
    ] = DEFAULT_HOST,
    model: Annotated[
        str | None,
        typer.Option(
            help="playbook, search:tpe, search:random, openai-chat:NAME or PROVIDER:MODEL "
            "(default: $SPECOPS_MODEL, else playbook)"
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible base URL for openai-chat: (default $OPENAI_BASE_URL)")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key (default OPENAI_API_KEY)")
    ] = None,
    max_requests: Annotated[int, typer.Option(help="Budget: model requests")] = 80,
    max_tool_calls: Annotated[int, typer.Option(help="Budget: tool calls")] = 300,
    max_tokens: Annotated[int | None, typer.Option(help="Budget: input + output tokens")] = None,
    max_cost: Annotated[float | None, typer.Option(help="Budget: USD, where the model's price is known")] = None,
    max_wall: Annotated[float, typer.Option(help="Budget: wall-clock seconds")] = 3600.0,
    budget: Annotated[
        str | None,
        typer.Option(
            help="Budget: the host's time the job may use, as 2h, 90min or 1h30m (on sim:PROFILE hosts, the modelled "
            "host's time). The policy fits its experiments into it, the most valuable first, and the report lists "
            "what it left out; measuring stops once it is spent",
            callback=_check_budget,
        ),
    ] = None,
    ask_once: Annotated[
        bool, typer.Option(help="Allow one round of questions (and deletion approvals) before the first change")
    ] = False,
    answers: Annotated[
        Path | None, typer.Option(help="Answers to those questions (JSON/YAML list or mapping) instead of the terminal")
    ] = None,
    allow_delete: Annotated[
        list[str] | None,
        typer.Option(
            help="Approve deleting what specops did not create (repeatable): cache:ORG/NAME (that cached repo's "
            "revisions), cache:ORG/NAME@REV, or a PATH (everything under it). Without it only specops' own downloads "
            "are deleted",
            callback=_check_allow_delete,
        ),
    ] = None,
    allow_root: Annotated[
        list[str] | None,
        typer.Option(
            help="Let the run write under this directory too (repeatable), beside the home and the data mounts: "
            "another mount check_disk named, say. A tmpfs such as /dev/shm is RAM: gone at reboot",
            callback=_check_allow_root,
        ),
    ] = None,
    sim_fault: Annotated[
        list[str] | None,
        typer.Option(help="sim:PROFILE hosts: inject a fault NAME:k=v,... (repeatable; see `specops sim faults`)"),
    ] = None,
    time_scale: Annotated[
        float | None,
        typer.Option(
            help="sim:PROFILE hosts: modelled seconds per real second (default: the profile's quick-run scale)"
        ),
    ] = None,
    launch_wait: Annotated[
        float,
        typer.Option(
            help="Most seconds a server start-up (loading, CUDA graphs, warm-up) is waited for while its log shows "
            "progress; one whose log is silent for --stall-wait is stopped sooner. On sim:PROFILE hosts, the modelled "
            "host's seconds"
        ),
    ] = 7200.0,
    stall_wait: Annotated[
        float,
        typer.Option(
            help="Seconds a server start-up's log may stay silent before it is stuck (a hang in NCCL or on a "
            "filesystem): stopped, relaunched once, then the run stops. Raise it for a host whose loading is "
            "silent for longer. On sim:PROFILE hosts, the modelled host's seconds"
        ),
    ] = 600.0,
    runs_dir: Annotated[Path, typer.Option(help="Where runs/<run-id>/ go")] = Path("runs"),
    json_out: Annotated[bool, typer.Option("--json", help="Print report.json on stdout (no live display)")] = False,
) -> None:
    """Carry out GOAL on HOST: plan, act with the tools, recover, and write runs/<run-id>/ with the report."""
    err = progress_console()  # the live view and errors; the verdict, summary and run directory go to stdout
    interactive = ask_once and answers is None and sys.stdin.isatty()
    try:
        options = RunOptions(
            runs_dir=runs_dir,
            ask_once=ask_once,
            answers_file=answers,
            allow_delete=tuple(allow_delete or ()),
            allow_roots=tuple(allow_root or ()),
            launch_wait_s=launch_wait,
            stall_wait_s=stall_wait,
            base_url=base_url,
            api_key_env=api_key_env,
        )
        budgets = Budgets(
            max_requests=max_requests,
            max_tool_calls=max_tool_calls,
            max_tokens=max_tokens,
            max_cost_usd=max_cost,
            max_wall_s=max_wall,
            max_host_s=parse_duration(budget) if budget is not None else None,
        )
    except ValidationError as exc:
        raise fail(validation_message(exc, FLAGS), 2) from None
    request = parse_host_request(host, sim_fault or [], time_scale)
    check_run_inputs(answers, ask_once)
    for secret, name in run_secrets(options).items():  # what the run's transcript hides, the terminal hides too
        output_redactor().add_secret(secret, name)
    view = LiveView()
    ask = (lambda q: typer.prompt(q, default="", show_default=False, err=True)) if interactive else None
    ask_yes_no = (lambda q: typer.confirm(q, default=False, err=True)) if interactive else None
    try:
        if json_out or not err.is_terminal:
            outcome = run_goal(
                goal,
                host=request,
                policy=model,
                budgets=budgets,
                options=options,
                ask=ask,
                ask_yes_no=ask_yes_no,
                listeners=(view.on_event,),
            )
        else:
            with Live(view, console=err, refresh_per_second=4, transient=False):
                outcome = run_goal(
                    goal,
                    host=request,
                    policy=model,
                    budgets=budgets,
                    options=options,
                    ask=ask,
                    ask_yes_no=ask_yes_no,
                    listeners=(view.on_event,),
                )
    except (GoalRefused, PolicyUnavailable) as exc:
        raise fail(str(exc), 2, highlight=True) from None
    report = outcome.report_paths.get("report.json") or outcome.report_paths.get("json")
    if json_out:
        if report is not None and Path(report).exists():
            sys.stdout.write(Path(report).read_text(encoding="utf-8"))
        else:
            sys.stdout.write(
                json.dumps({"run_id": outcome.run_id, "status": outcome.status, "reason": outcome.reason}) + "\n"
            )
    else:
        print_outcome(outcome, result_console())
    raise typer.Exit(code=outcome.exit_code)


def print_outcome(outcome: RunOutcome, out: Console, *, resumed: bool = False) -> None:
    """On stdout (`specops run` and `specops resume`): the verdict, the policy's summary, what the job cost on its
    host and the run directory, then, last, what is unresolved: for a failed run, the cause and the next step, said once."""
    unresolved = list(outcome.final.unresolved) if outcome.final is not None else []
    # Without a final answer's own account, the harness's reason is the cause: said last, not in the verdict too.
    last = unresolved or ([outcome.reason] if outcome.reason and not outcome.ok else [])
    said = f" — {escape(outcome.reason)}" if outcome.reason and unresolved else ""
    out.print(f"run {escape(outcome.run_id)}{' resumed' if resumed else ''}: [bold]{outcome.status}[/bold]{said}")
    if outcome.final is not None:
        out.print(outcome.final.summary, markup=False)
    if outcome.host_time is not None:  # said once, here: the policy's summary does not repeat it
        out.print(f"host time: {outcome.host_time}", markup=False)
    out.print(f"transcript and report: {escape(str(outcome.run_dir))}")
    for line in last:
        out.print(f"{'unresolved' if outcome.ok else 'why'}: {line}", markup=False)
