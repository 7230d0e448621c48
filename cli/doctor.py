"""`specops doctor HOST`: can we reach the host, what is on it, and what would stop a DFlash deployment.

Exit status: 0 when nothing is wrong, 1 when problems were found (listed),
2 when the host cannot be reached or its spec is bad.
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from specops.sglang_releases.facts import algorithm_history, first_release_with
from specops.tools.errors import ToolError
from specops.tools.facts import HostFacts, gather_host_facts
from specops.tools.hosts import HostError, open_host
from specops.tools.parsers.df import PSEUDO_FSTYPES

from .streams import error_line

# A mount this full leaves no room for a model download.
NEARLY_FULL_PERCENT = 90


class Problem(BaseModel):
    what: str
    remedy: str


def find_problems(facts: HostFacts) -> list[Problem]:
    problems: list[Problem] = []
    if not facts.gpus:
        problems.append(
            Problem(
                what="no NVIDIA GPU visible (nvidia-smi missing or lists none)",
                remedy="use a GPU host, or check the driver with nvidia-smi",
            )
        )
    if facts.sglang_version is None:
        problems.append(
            Problem(
                what="SGLang is not installed for python3",
                remedy=f"pip install 'sglang[all]' ({first_release_with('DFLASH')} or newer for DFlash)",
            )
        )
    elif facts.speculative is not None and not facts.speculative.dflash:
        need = first_release_with("DFLASH")
        problems.append(
            Problem(
                what=f"SGLang {facts.sglang_version} is too old for DFlash (needs {need} or newer)",
                remedy=f"upgrade SGLang to {need} or newer; until then only autoregressive serving works",
            )
        )
    by_name = {c.name: c for c in facts.clis}
    hf, legacy = by_name.get("hf"), by_name.get("huggingface-cli")
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
    for mount in facts.mounts:
        if mount.fstype in PSEUDO_FSTYPES or mount.use_percent is None:
            continue
        if mount.use_percent >= NEARLY_FULL_PERCENT:
            problems.append(
                Problem(
                    what=f"{mount.mount_point} is {mount.use_percent}% full ({mount.free} free of {mount.size})",
                    remedy="free space (list_freeable) or download to another mount",
                )
            )
    return problems


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


def _facts_table(facts: HostFacts) -> Table:
    table = Table(title=f"{facts.host}", show_header=False)
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
    ]
    rows += [(cli.name, ("ok " if cli.works else "BROKEN ") + cli.detail) for cli in facts.clis]
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
    for fact, value in rows:
        table.add_row(fact, value)
    return table


def doctor(
    host: Annotated[str, typer.Argument(help="local, ssh://user@host[:port], an inventory name, or sim:ROOT")],
) -> None:
    """Can we reach HOST, what is on it, and what would stop a DFlash deployment there."""
    console = Console(width=160)  # the findings, on stdout; progress and errors on stderr
    try:
        with open_host(host) as reached:
            Console(stderr=True, width=160).print(f"[green]reached[/green] {escape(reached.spec)}")
            facts = gather_host_facts(reached)
    except (HostError, ToolError) as exc:
        error_line(f"[red]cannot reach {escape(host)}[/red]: {escape(str(exc))}", highlight=True)
        raise typer.Exit(code=2) from None
    console.print(_facts_table(facts))
    for note in facts.notes:
        console.print(f"[dim]note: {escape(note)}[/dim]")
    problems = find_problems(facts)
    if not problems:
        console.print("[green]no problems found[/green]")
        return
    console.print(f"[red]{len(problems)} problem(s):[/red]")
    for p in problems:
        console.print(f"  - {escape(p.what)}\n    [dim]what to do: {escape(p.remedy)}[/dim]")
    raise typer.Exit(code=1)
