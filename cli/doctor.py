"""`specops doctor HOST`: can we reach the host, what is on it, and what would stop a DFlash deployment.

HOST is any host `specops run --host` takes, opened the same way (agent.host.open_run_host):
sim:PROFILE starts that simulated host for the check and stops it after.

Exit status: 0 when nothing is wrong, 1 when problems were found (listed),
2 when the host cannot be reached or its spec is bad. The findings go to stdout
(`--json`: one JSON object, also when the host cannot be reached), progress and
errors to stderr. Nothing printed holds a secret: every line goes through the
run's redaction, with this machine's Hub token added to it.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from pydantic import BaseModel
from rich.markup import escape
from rich.table import Table

from specops.agent.host import HostNotAnswering, is_provisioned, open_run_host
from specops.sglang_releases.facts import algorithm_history, first_release_with
from specops.tools.disk import mount_for
from specops.tools.errors import ToolError
from specops.tools.facts import CliFacts, HostFacts, gather_host_facts
from specops.tools.host_problems import host_problems
from specops.tools.hosts import HostError
from specops.tools.hub import HubTokenUnreadable, local_hub_token, local_hub_token_source
from specops.tools.parsers.df import PSEUDO_FSTYPES
from specops.transcripts.redaction import Redactor

from .streams import error_line, progress_console, result_console

# A mount this full leaves no room for a model download.
NEARLY_FULL_PERCENT = 90


class Problem(BaseModel):
    what: str
    remedy: str


class HubToken(BaseModel):
    """This machine's Hub token as huggingface_hub finds it: whether there is one and where, never its value."""

    found: bool
    source: str | None = None
    error: str | None = None


class DoctorResult(BaseModel):
    """What `--json` prints: the same keys whether or not the host was reached."""

    host: str  # as given
    reached: bool
    opened: str | None = None  # the host opened for it (a sim:PROFILE's world, stopped since)
    ok: bool  # reached, and no problem found
    error: str | None = None  # why it was not reached
    problems: list[Problem] = []
    facts: HostFacts | None = None
    hub_token: HubToken


def local_hub_token_check(redactor: Redactor) -> tuple[HubToken, list[Problem]]:
    """Where this machine's Hub token is (the agent lists and reads gated repos with it); its value goes to `redactor`."""
    try:
        token = local_hub_token()
        source = local_hub_token_source()
    except HubTokenUnreadable as exc:
        return HubToken(found=False, error=exc.what), [Problem(what=exc.what, remedy=exc.remedy)]
    if token is None:
        return HubToken(found=False), []
    redactor.add_secret(token.get_secret_value(), "HF_TOKEN")
    return HubToken(found=True, source=source), []


def _hub_token_row(hub: HubToken) -> str:
    if hub.found:
        return f"found ({hub.source})"
    if hub.error:
        return f"UNREADABLE {hub.error}"
    return "none (gated repos need one: `hf auth login` or HF_TOKEN)"


def find_problems(facts: HostFacts, home: str | None = None) -> list[Problem]:
    """What would stop a deployment on the host. `home`: the host's home, under which downloads go (~/models):
    a nearly full mount is a problem only there (another full mount, an HF_HOME cache say, takes no download)."""
    # A GPU, SGLang and the Hub in the words `specops run` stops with (tools/host_problems.py).
    problems = [Problem(what=p.what, remedy=p.remedy) for p in host_problems(facts)]
    if facts.speculative is not None and not facts.speculative.dflash:
        need = first_release_with("DFLASH")
        problems.append(
            Problem(
                what=f"SGLang {facts.sglang_version} is too old for DFlash (needs {need} or newer)",
                remedy=f"upgrade SGLang to {need} or newer; until then only autoregressive serving works",
            )
        )
    by_name = {c.name: c for c in facts.clis}
    hf, legacy = by_name.get("hf"), by_name.get("huggingface-cli")
    if facts.huggingface_hub_version is None:
        hf = legacy = None  # the CLIs cannot work without the library: host_problems says to install it, once
    if hf is not None and not hf.works:
        problems.append(
            Problem(
                what=f"hf CLI does not work: {hf.detail}",
                remedy="reinstall huggingface_hub (pip install -U huggingface_hub), or download with "
                "snapshot_download from python3",
            )
        )
    if legacy is not None and legacy.path and not legacy.works:
        problems.append(
            Problem(
                what=f"huggingface-cli is broken: {legacy.detail}",
                remedy="use `hf download` instead; never rely on huggingface-cli on this host",
            )
        )
    downloads_to = mount_for(home, facts.mounts) if home is not None else None
    for mount in facts.mounts:
        if mount.fstype in PSEUDO_FSTYPES or mount.use_percent is None:
            continue
        if downloads_to is not None and mount.mount_point != downloads_to.mount_point:
            continue
        if mount.use_percent >= NEARLY_FULL_PERCENT:
            problems.append(
                Problem(
                    what=f"{mount.mount_point} is {mount.use_percent}% full ({mount.free} free of {mount.size})",
                    remedy="free space (list_freeable) or download to another mount",
                )
            )
    return problems


def _cli_row(cli: CliFacts, facts: HostFacts) -> str:
    if not cli.works and facts.huggingface_hub_version is None:
        return "unusable: huggingface_hub is not installed for python3"
    return ("ok " if cli.works else "BROKEN ") + cli.detail


def minimum_versions() -> str:
    """Each --speculative-algorithm with the first SGLang release that takes it (from the release wheels)."""
    history = algorithm_history()
    oldest = history["scanned"][0]
    return ", ".join(
        f"{name} since {since}{' or earlier' if since == oldest else ''}"
        for name, since in history["first_release_with"].items()
    )


def _speculative_row(facts: HostFacts) -> str:
    support = facts.speculative
    if support is None:
        return "-"
    dp = {
        "refused": "DFlash not with DP attention",
        "needs_dp_lm_head": "DFlash with DP attention needs the DP LM head",
        "allowed": "DFlash with DP attention",
        "not_offered": "no DFlash",
    }[support.dflash_with_dp_attention]
    return f"{', '.join(support.algorithms)} ({dp}); first releases: {minimum_versions()}"


def _hub_row(facts: HostFacts) -> str:
    hub = facts.hub
    if hub is None:
        return "not checked (no python3)"
    via = f" through the proxy {hub.via}" if hub.via else ""
    return f"{'ok' if hub.reached else 'UNREACHABLE'} {hub.endpoint}{via}: {hub.detail}"


def _facts_table(facts: HostFacts, hub: HubToken, redactor: Redactor) -> Table:
    """The facts, one row each, every cell redacted (a process's path may hold a secret)."""
    table = Table(title=redactor.redact_text(facts.host), show_header=False)
    table.add_column("fact", style="bold")
    table.add_column("value")
    gpus = f"{facts.gpu_count} x {facts.gpu_model}, {facts.gpus[0].memory_total} each" if facts.gpus else "none"
    rows = [
        ("hostname", facts.hostname or "?"),
        ("os / kernel", f"{facts.os or '?'} / {facts.kernel or '?'}"),
        ("gpus", gpus),
        ("driver / cuda", f"{facts.driver_version or '-'} / {facts.cuda_version or '-'}"),
        ("interconnect", facts.interconnect.summary if facts.interconnect else "-"),
        ("cpu", f"{facts.cpu.model or '?'} ({facts.cpu.cores or '?'} cores)"),
        ("memory", f"{facts.memory.total} ({facts.memory.available} available)" if facts.memory else "?"),
        ("python", facts.python_version or "none"),
        ("sglang", facts.sglang_version or "not installed"),
        ("speculative", _speculative_row(facts)),
        ("huggingface_hub", facts.huggingface_hub_version or "not installed"),
        ("hub (from the host)", _hub_row(facts)),
    ]
    rows += [(cli.name, _cli_row(cli, facts)) for cli in facts.clis]
    rows += [
        (f"mount {m.mount_point}", f"{m.free} free of {m.size} ({m.use_percent}% used, {m.fstype})")
        for m in facts.mounts
    ]
    rows += [
        (
            f"serving :{s.port}",
            f"pid {s.pid} {s.model_path or '?'}"
            + (f" + {s.speculative_algorithm} {s.draft_model_path}" if s.speculative_algorithm else "")
            + f", {s.gpu_memory} GPU memory on {s.gpus_used} GPUs",
        )
        for s in facts.serving
    ] or [("serving", "nothing")]
    rows += [
        (f"gpu process {p.pid}", f"{p.process_name}: {p.gpu_memory_bytes // 1024**2} MiB on {p.gpus_used} GPUs")
        for p in facts.other_gpu_processes
    ]
    rows.append(("hub token (here)", _hub_token_row(hub)))
    for fact, value in rows:
        table.add_row(redactor.redact_text(fact), redactor.redact_text(value))
    return table


def doctor(
    host: Annotated[
        str,
        typer.Argument(
            help="sim:PROFILE (started for the check), sim:NAME (a running world), local, ssh://user@host[:port], or an inventory name"
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as one JSON object on stdout")] = False,
) -> None:
    """Can we reach HOST, what is on it, and what would stop a DFlash deployment there."""
    redactor = Redactor()
    hub, hub_problems = local_hub_token_check(redactor)
    try:
        with open_run_host(host) as run_host:
            opened = run_host.host.spec
            progress_console(width=160, highlight=False).print(
                f"[green]reached[/green] {escape(redactor.redact_text(host if is_provisioned(host) else opened))}"
            )
            facts = gather_host_facts(run_host.host)
            home = run_host.context.home
    except (HostNotAnswering, HostError, ToolError) as exc:
        said = redactor.redact_text(_unreachable_reason(host, exc))
        if as_json:
            _print_json(redactor, DoctorResult(host=host, reached=False, ok=False, error=said, hub_token=hub))
        error_line(f"[red]cannot reach {escape(redactor.redact_text(host))}[/red]: {escape(said)}", highlight=True)
        raise typer.Exit(code=2) from None
    problems = [*find_problems(facts, home), *hub_problems]
    if as_json:
        result = DoctorResult(
            host=host, reached=True, opened=opened, ok=not problems, problems=problems, facts=facts, hub_token=hub
        )
        _print_json(redactor, result)
        raise typer.Exit(code=1 if problems else 0)
    console = result_console(width=160)  # the findings, on stdout; progress and errors on stderr
    console.print(_facts_table(facts, hub, redactor))
    for note in facts.notes:
        console.print(f"[dim]note: {escape(redactor.redact_text(note))}[/dim]")
    if not problems:
        console.print("[green]no problems found[/green]")
        return
    console.print(f"[red]{len(problems)} problem(s):[/red]")
    for p in problems:
        what, remedy = redactor.redact_text(p.what), redactor.redact_text(p.remedy)
        console.print(f"  - {escape(what)}\n    [dim]what to do: {escape(remedy)}[/dim]")
    raise typer.Exit(code=1)


def _unreachable_reason(host: str, exc: Exception) -> str:
    """The reason alone: open_run_host's "cannot open host X: " is what `cannot reach X:` already says."""
    said = str(exc)
    for prefix in (f"cannot open host {host}: ", f"host {host} does not answer: "):
        if said.startswith(prefix):
            return said[len(prefix) :]
    return said


def _print_json(redactor: Redactor, result: DoctorResult) -> None:
    """The result on stdout as one JSON object, every string redacted."""
    typer.echo(json.dumps(redactor.redact(result.model_dump(mode="json")), indent=2))
