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

Every duration is the host's: read off its clock (Host.clock), as SGLang's own
log stamps are, never this machine's, and the waits between polls are the
host's too (Host.sleep), so a 10-minute stall window is judged in ten of its
minutes. The moment a server was ready is its ready line's own stamp, not the
poll that saw it: a poll's commands take their time (a slow SSH link, a busy
host), and the stamp does not move with them.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..context import ToolContext
from ..hosts import CommandFailed, DetachedProcess, Host, RemoteFileNotFound
from .diagnosis import Diagnosis, diagnose, fatal_line
from .server_http import health_status

READY_LINE = "The server is fired up and ready to roll!"
# SGLang stamps its lines with the host's local time to the second: `[2026-12-07 14:40:01] The server is fired up…`.
STAMP_RESOLUTION_S = 1.0  # the moment a stamp names lies somewhere in its second: its middle is the estimate
_READY_STAMP = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})[^\]]*\] " + re.escape(READY_LINE), re.MULTILINE)
TAIL_LINES = 200
DIAGNOSIS_LINES = 400
# A server whose log shows a fatal error usually exits within seconds (SGLang's parent
# kills itself on the child's SIGQUIT); past this it is stopped and reported anyway. In this
# machine's seconds: it bounds how long this wait lasts here, not a figure of the host's.
FATAL_EXIT_GRACE_S = 5.0


@dataclass(frozen=True)
class Outcome:
    """How a wait ended; every duration is in the host's seconds, read off the host's own clock."""

    ready: bool
    elapsed_s: float
    log_tail: str
    diagnosis: Diagnosis | None = None
    exited: bool = False
    stalled: bool = False  # the log showed nothing new for stall_s: stuck, not slow
    silent_s: float = 0.0  # seconds since the log last changed, when the wait ended

    @property
    def took_s(self) -> float:
        """The wait's length on the host's clock, as reports give it."""
        return round(self.elapsed_s, 2)

    @property
    def last_line(self) -> str:
        """The log's last line: where a server that did not come up had got to."""
        lines = [line.strip() for line in self.log_tail.splitlines() if line.strip()]
        return lines[-1] if lines else ""


FIRST_POLL_S = 0.05
# Each wait is at most this share of the time already waited, so a server that is ready is
# noticed within ~20% of its start-up time: a 1 s load is not rounded up to a 2 s poll.
POLL_SHARE_OF_ELAPSED = 0.2
STALL_POLLS = 20  # a stall is judged within about 1/STALL_POLLS of its window
LEAST_SLEEP_S = 0.05  # never busier than this: each poll is a few commands on the host


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
    launched_at: float | None = None,
) -> Outcome:
    """Wait for ready, an exit, a fatal log line, a stall (`stall_s` without a new log line), or the timeout, all
    judged on the host's clock. Reached at the timeout, a log silent for more than `quiet_s` (default `stall_s`) is
    a stall too, not a slow load. `launched_at`: the host's time just before the process started (default: now)."""
    start = launched_at if launched_at is not None else host.clock()
    fatal_since: float | None = None
    seen, moved_at = "", start  # the log as last read, and when (host time) it last changed
    now = start

    def ended(ready: bool, tail: str, diagnosis: Diagnosis | None = None, **more: bool) -> Outcome:
        return Outcome(ready, now - start, tail, diagnosis, silent_s=now - moved_at, **more)

    while True:
        alive = host.is_running(proc)
        text = _tail(host, proc.log_path, TAIL_LINES)
        now = host.clock()
        elapsed = now - start
        if text != seen:
            seen, moved_at = text, now
        if not alive:
            tail = _tail(host, proc.log_path, DIAGNOSIS_LINES)
            return ended(False, tail, diagnose(tail), exited=True)
        if READY_LINE in text and health_status(host, port) == 200:
            return Outcome(True, ready_at(host, text, start=start, seen_at=now) - start, text)
        if fatal_line(text):
            fatal_since = fatal_since if fatal_since is not None else time.monotonic()
            if time.monotonic() - fatal_since > FATAL_EXIT_GRACE_S:
                tail = _tail(host, proc.log_path, DIAGNOSIS_LINES)
                return ended(False, tail, diagnose(tail))
        silent = now - moved_at
        if stall_s is not None and silent > stall_s:
            return ended(False, _tail(host, proc.log_path, DIAGNOSIS_LINES), stalled=True)
        if elapsed > timeout_s:
            quiet = quiet_s if quiet_s is not None else stall_s
            stalled = quiet is not None and silent > quiet
            return ended(False, _tail(host, proc.log_path, DIAGNOSIS_LINES), stalled=stalled)
        step = next_poll_s(elapsed, timeout_s)
        if stall_s is not None:
            step = min(step, stall_s / STALL_POLLS)
        host.sleep(max(step, LEAST_SLEEP_S))


def ready_at(host: Host, text: str, *, start: float, seen_at: float) -> float:
    """When the server was ready, on the host's clock: the middle of the second its last ready line is stamped with,
    between the launch (`start`) and the poll that saw it (`seen_at`). The poll's own time when the line has no
    stamp the host can read, or one from before this launch (an earlier run's log)."""
    stamps = _READY_STAMP.findall(text)
    if not stamps:
        return seen_at
    try:
        stamped = host.time_of_stamp(stamps[-1]) + STAMP_RESOLUTION_S / 2
    except CommandFailed:
        return seen_at
    if stamped < start - STAMP_RESOLUTION_S:
        return seen_at
    return min(max(stamped, start), seen_at)


@dataclass(frozen=True)
class Wait:
    """How long a start-up is waited for, in the host's seconds."""

    limit_s: float
    stall_s: float


def wait_for_start(
    ctx: ToolContext,
    proc: DetachedProcess,
    port: int,
    ready_timeout_s: float | None,
    stall_timeout_s: float | None,
    *,
    launched_at: float | None = None,
) -> tuple[Wait, Outcome]:
    """Wait for the server `proc` on `port` of ctx's host to be ready (readiness.wait_until_ready), as long as the
    run allows. A timeout left None is the run's (--launch-wait, --stall-wait)."""
    # The user's --launch-wait bounds every start-up; a caller may ask for less (a quick screen), never more.
    limit = min(ready_timeout_s or ctx.launch_wait_s, ctx.launch_wait_s)
    wait = Wait(limit_s=limit, stall_s=stall_timeout_s or ctx.stall_wait_s)
    outcome = wait_until_ready(
        ctx.host, proc, port, timeout_s=wait.limit_s, stall_s=wait.stall_s, launched_at=launched_at
    )
    return wait, outcome
