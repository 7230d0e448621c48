"""Waiting for a launched server: ready by its log line AND its health endpoint, or failed, noticed at once.

Each poll checks, in order: is the process alive (a crash ends the wait at
once, not at the timeout), has the log said "The server is fired up and ready
to roll!", and does /health answer 200 through the port forward. Only both
signals together mean ready: the log line alone could come from an earlier run
appended to the same file, and a 200 alone could come from another server on
the port.

Patience follows progress: a server whose log keeps moving (shards loading,
CUDA graphs capturing) is waited for up to `timeout_s`; one whose log shows
nothing new for `stall_s` is stuck (a hang in NCCL or on a filesystem) and
the wait ends there, long before the timeout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..context import ToolContext
from ..hosts import DetachedProcess, Host, RemoteFileNotFound
from ..simulated import simulated_scales
from .diagnosis import Diagnosis, diagnose, fatal_line
from .server_http import health_status

READY_LINE = "The server is fired up and ready to roll!"
TAIL_LINES = 200
DIAGNOSIS_LINES = 400
# A server whose log shows a fatal error usually exits within seconds (SGLang's parent
# kills itself on the child's SIGQUIT); past this it is stopped and reported anyway.
FATAL_EXIT_GRACE_S = 5.0


@dataclass(frozen=True)
class Outcome:
    ready: bool
    elapsed_s: float
    log_tail: str
    diagnosis: Diagnosis | None = None
    exited: bool = False
    stalled: bool = False  # the log showed nothing new for stall_s: stuck, not slow
    quiet_start_s: float = 0.0  # seconds before the log's first line: the process starting, before any loading
    silent_s: float = 0.0  # seconds since the log last changed, when the wait ended

    @property
    def last_line(self) -> str:
        """The log's last line: where a server that did not come up had got to."""
        lines = [line.strip() for line in self.log_tail.splitlines() if line.strip()]
        return lines[-1] if lines else ""


FIRST_POLL_S = 0.05
# Each wait is at most this share of the time already waited, so a server that is ready is
# noticed within ~20% of its start-up time: a 1 s load is not rounded up to a 2 s poll.
POLL_SHARE_OF_ELAPSED = 0.2


def poll_interval(timeout_s: float) -> float:
    """The longest wait between polls: a few hundred polls over the timeout, never slower than every 2 s."""
    return min(2.0, max(0.2, timeout_s / 300))


def next_poll_s(elapsed_s: float, timeout_s: float) -> float:
    """Poll often early (most servers that fail, fail fast; fast loads end early), then back off to poll_interval."""
    return min(poll_interval(timeout_s), max(FIRST_POLL_S, POLL_SHARE_OF_ELAPSED * elapsed_s))


def _tail(host: Host, log_path: str, lines: int) -> str:
    try:
        return host.tail(log_path, lines)
    except RemoteFileNotFound:
        return ""


def wait_until_ready(
    host: Host,
    proc: DetachedProcess,
    port: int,
    *,
    timeout_s: float,
    stall_s: float | None = None,
    quiet_s: float | None = None,
    startup_s: float = 0.0,
) -> Outcome:
    """Wait for ready, an exit, a fatal log line, a stall (`stall_s` without a new log line), or the timeout, both
    `startup_s` longer while the log is still empty (Python starting). Reached at the timeout, a log silent for
    more than `quiet_s` (default `stall_s`) is a stall too, not a slow load."""
    start = time.monotonic()
    fatal_since: float | None = None
    seen, moved_at = "", start  # the log as last read, and when it last changed
    quiet_start = 0.0

    def ended(ready: bool, tail: str, diagnosis: Diagnosis | None = None, **more: bool) -> Outcome:
        now = time.monotonic()
        return Outcome(ready, now - start, tail, diagnosis, quiet_start_s=quiet_start, silent_s=now - moved_at, **more)

    while True:
        elapsed = time.monotonic() - start
        alive = host.is_running(proc)
        text = _tail(host, proc.log_path, TAIL_LINES)
        if text != seen:
            quiet_start = quiet_start if seen else elapsed
            seen, moved_at = text, time.monotonic()
        if not alive:
            tail = _tail(host, proc.log_path, DIAGNOSIS_LINES)
            return ended(False, tail, diagnose(tail), exited=True)
        if READY_LINE in text and health_status(host, port) == 200:
            return ended(True, text)
        if fatal_line(text):
            fatal_since = fatal_since if fatal_since is not None else time.monotonic()
            if time.monotonic() - fatal_since > FATAL_EXIT_GRACE_S:
                tail = _tail(host, proc.log_path, DIAGNOSIS_LINES)
                return ended(False, tail, diagnose(tail))
        allowance = 0.0 if seen else startup_s
        silent = time.monotonic() - moved_at
        if stall_s is not None and silent > stall_s + allowance:
            return ended(False, _tail(host, proc.log_path, DIAGNOSIS_LINES), stalled=True)
        if elapsed > timeout_s + allowance:
            quiet = quiet_s if quiet_s is not None else stall_s
            stalled = quiet is not None and silent > quiet + allowance
            return ended(False, _tail(host, proc.log_path, DIAGNOSIS_LINES), stalled=stalled)
        time.sleep(next_poll_s(time.monotonic() - start, timeout_s))


# A simulated server starts Python and does its real work (reading the stored checkpoint, the warm-up request) at
# this machine's pace: real seconds its first line may take, and the least real silence that counts as a stall.
SIM_STARTUP_S = 30.0
SIM_MIN_STALL_S = 10.0


@dataclass(frozen=True)
class Wait:
    """How long a start-up is waited for, in the modelled host's seconds, and how much faster a sim host loads."""

    limit_s: float
    stall_s: float
    scale: float = 1.0

    def modelled(self, outcome: Outcome) -> float:
        """The start-up's length on the modelled host: a sim host's loading scaled back, its Python start not."""
        if self.scale == 1:
            return round(outcome.elapsed_s, 2)
        return round((outcome.elapsed_s - outcome.quiet_start_s) * self.scale, 2)


def wait_for_start(
    ctx: ToolContext, proc: DetachedProcess, port: int, ready_timeout_s: float | None, stall_timeout_s: float
) -> tuple[Wait, Outcome]:
    """Wait for the server `proc` on `port` of ctx's host to be ready (readiness.wait_until_ready), as long as the
    run allows."""
    # Waits are in the modelled host's seconds; a simulated host loads load_time_scale times faster, but its
    # Python starts at this machine's pace, which no time scale shortens.
    sim = simulated_scales(ctx.host)
    scale, startup, least = (sim.load_time_scale, SIM_STARTUP_S, SIM_MIN_STALL_S) if sim.simulated else (1, 0, 0)
    # The user's --launch-wait bounds every start-up; a caller may ask for less (a quick screen), never more.
    limit = min(ready_timeout_s or ctx.launch_wait_s, ctx.launch_wait_s)
    wait = Wait(limit_s=limit, stall_s=stall_timeout_s, scale=scale)
    outcome = wait_until_ready(
        ctx.host,
        proc,
        port,
        timeout_s=wait.limit_s / scale,
        stall_s=max(wait.stall_s / scale, least),
        quiet_s=max(wait.stall_s / scale, 1.0),  # at the timeout, a second of silence on a sim host's clock
        startup_s=startup,
    )
    return wait, outcome
