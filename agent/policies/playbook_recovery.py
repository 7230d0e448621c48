"""The playbook's recovery rules: from a failed launch or download, the next thing to try (or to stop).

Each rule reads the typed error the tool returned and changes what caused the
failure, never repeating a call that failed the same way: a new call differs
in the setting the cause points at. The exceptions are a plain crash at
start (NCCL, a dying child), which SGLang's own advice is to relaunch once,
and a start-up that stalled (its log silent), relaunched once: a second
stall stops the run (the pipeline), since every layout would load the same way.
Every rule is bounded; past the bound the playbook records the failure and
moves on.
"""

from __future__ import annotations

from dataclasses import dataclass

from specops.tools.download.models import DownloadCause
from specops.tools.errors import ErrorKind

from .playbook_configs import Candidate
from .playbook_history import Outcome

MAX_LAUNCH_TRIES = 3  # per configuration, counting the first
MEM_FRACTION_STEPS = (0.9, 0.93, 0.95)
REDUCED_CONTEXT = 32768
PORT_STEP = 1
MAX_DOWNLOAD_RESTARTS = 2


@dataclass(frozen=True)
class Retry:
    """Launch this instead; `change` says what was changed and why, for the final answer."""

    candidate: Candidate
    change: str


@dataclass(frozen=True)
class GiveUp:
    reason: str


def after_launch_failure(candidate: Candidate, failure: Outcome, tried: list[Candidate]) -> Retry | GiveUp:
    """What to launch next after `candidate` failed with `failure`; `tried` holds every launch of it so far."""
    details = failure.details
    cause = str(details.get("cause", failure.kind))
    if len(tried) >= MAX_LAUNCH_TRIES:
        return GiveUp(f"{candidate.name}: {len(tried)} launches failed, the last with {cause}: {failure.what}")
    config = candidate.config
    seen = [t.config for t in tried]

    def fresh(change: str, **fields: object) -> Retry | GiveUp:
        nxt = candidate.with_(**fields)
        if nxt.config in seen:
            return GiveUp(f"{candidate.name}: {cause} again after {change}; nothing else to change")
        return Retry(nxt, change)

    if failure.kind in (
        ErrorKind.SGLANG_RULE_VIOLATION,
        ErrorKind.SGLANG_TOO_OLD,
        ErrorKind.UNSUPPORTED_FLAGS,
        ErrorKind.SGLANG_NOT_INSTALLED,
    ):
        return GiveUp(f"{candidate.name}: {failure.describe()}")
    if cause == "port_in_use":
        port = int(config.get("port", 30000)) + PORT_STEP
        return fresh(f"port {config.get('port', 30000)} is taken: port {port}", port=port)
    if cause == "cuda_graph_failure" and config.get("cuda_graphs", True):
        return fresh("CUDA graphs failed to capture: CUDA graphs off", cuda_graphs=False, cuda_graph_max_bs=None)
    if cause == "out_of_memory":
        if details.get("memory") == "weights_do_not_fit":
            return GiveUp(
                f"{candidate.name}: the weights do not fit in GPU memory at this parallelism "
                f"({failure.what}); free the GPU memory other processes hold"
            )
        current = config.get("mem_fraction_static")
        higher = next((f for f in MEM_FRACTION_STEPS if current is None or f > current), None)
        if higher is not None:
            return fresh(
                f"the static memory pool was too small: mem_fraction_static {higher}", mem_fraction_static=higher
            )
        if config.get("context_length") is None:
            return fresh(f"still short of memory: context_length {REDUCED_CONTEXT}", context_length=REDUCED_CONTEXT)
        return GiveUp(f"{candidate.name}: out of memory at mem_fraction_static {current} and a reduced context")
    if cause == "stalled" and len(tried) == 1:
        return Retry(candidate, "stuck while starting (its log silent): relaunched once, as the remedy says")
    if cause == "crash" and len(tried) == 1:
        return Retry(
            candidate, "crashed while starting (no specific cause in the log): relaunched once, as SGLang advises"
        )
    return GiveUp(f"{candidate.name}: {failure.describe()}")


def stalled_twice(name: str, details: dict[str, object]) -> str:
    """Why the run stops after a configuration's start-up stalled on its relaunch too: the silence in the host's
    minutes, where it stopped, and the two knobs a user has (the last words of the run's `why:`)."""
    silent = details.get("silent_s")
    minutes = f"{float(silent) / 60:.1f} min" if isinstance(silent, int | float) else "the stall window"
    lines = details.get("lines")
    last = f" at {lines[-1]!r}" if isinstance(lines, list) and lines else ""
    log = f" (log: {details['log_path']})" if details.get("log_path") else ""
    return (
        f"launch {name} stalled twice: its log was silent for {minutes} of the host's time{last}{log}. A silent "
        "start-up is a hang (NCCL, a filesystem), not a slow load, and every other layout would load the same way: "
        "nothing else was launched. Read the log; if this host only loads silently for longer, run again with a "
        "longer --stall-wait (the silence allowed) and --launch-wait (the whole start-up)"
    )


# Download causes and what the playbook does about each.
SWITCH_METHOD = DownloadCause.CLI_UNUSABLE
MAKE_ROOM = DownloadCause.NO_SPACE
RESTART = (DownloadCause.THROTTLED, DownloadCause.PARTIAL, DownloadCause.KILLED, DownloadCause.UNKNOWN)
STOP = (DownloadCause.GATED, DownloadCause.NOT_FOUND)
