"""The gateway's start-up on a sim host is this machine's work, so the host's time stands through it.

sglang-router is a real program (Rust), on this machine's clock: before it routes, it registers the workers it was
given (a health check each, retried every --worker-startup-check-interval seconds of this machine's time). On a
real host that takes a second or two; here it takes as long as this machine takes, several times longer on a busy
machine, and the world's clock would count all of it at its time scale (a busy machine's 9 s of registering read
as 70 s of the host's). So, as a server's Python start-up is (wrappers.py), the router's start-up is held:
`python -m sglang_router.launch_router` keeps its wrapper's hold (commands/python.py), and this watcher, started
beside it, gives the hold back once the router lists every worker it was given healthy (GET /workers), once the
router has exited, or at the router's own start-up timeout (it gives up on a worker then, and says so in its log).

Run as `python -m specops.sim.host.router_start SIM_DIR PID -- ROUTER_ARGV...`, detached from the router's process
group, so that stopping the router does not stop the watcher before it has seen the router go.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..world.clock import WorldClock, process_alive

ROUTER = ["-m", "sglang_router.launch_router"]
POLL_S = 0.05  # this machine's seconds: how soon after the last worker turns healthy the host's time runs on
# Past the router's own start-up timeout it logs the worker it gave up on and routes without it.
GIVE_UP_MARGIN_S = 10.0
DEFAULT_STARTUP_TIMEOUT_S = 1800.0  # sglang-router's default --worker-startup-timeout-secs


@dataclass(frozen=True)
class RouterStart:
    """What the watcher needs of the router's command line: where it listens, whom it registers, for how long."""

    port: int
    workers: tuple[str, ...]
    startup_timeout_s: float

    @classmethod
    def from_argv(cls, argv: Sequence[str]) -> RouterStart:
        parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        parser.add_argument("--port", type=int, default=30000)
        parser.add_argument("--worker-startup-timeout-secs", type=float, default=DEFAULT_STARTUP_TIMEOUT_S)
        parser.add_argument("--worker-urls", nargs="*", default=[])
        known, _ = parser.parse_known_args(list(argv))
        return cls(known.port, tuple(u.rstrip("/") for u in known.worker_urls), known.worker_startup_timeout_secs)


def all_registered(start: RouterStart) -> bool:
    """Whether the router on `start.port` lists every worker it was given, healthy."""
    import urllib.request  # here, in the watcher: every `python` of a sim host imports this module

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{start.port}/workers", timeout=2) as answer:
            body = json.load(answer)
    except (OSError, ValueError):  # URLError is an OSError
        return False
    rows = body.get("workers") if isinstance(body, dict) else None
    healthy = {
        str(row.get("url", "")).rstrip("/")
        for row in (rows if isinstance(rows, list) else [])
        if isinstance(row, dict) and row.get("is_healthy") is True
    }
    return all(w in healthy for w in start.workers)


def watch(sim_dir: str, pid: int, start: RouterStart) -> None:
    """Hold the world's clock for the router `pid` until its workers are registered, it exits, or it gives up."""
    clock = WorldClock(sim_dir)
    deadline = time.monotonic() + start.startup_timeout_s + GIVE_UP_MARGIN_S
    try:
        while process_alive(pid) and time.monotonic() < deadline and not all_registered(start):
            time.sleep(POLL_S)
    finally:
        clock.release(pid)


def start_watcher(sim_dir: str, pid: int, argv: Sequence[str]) -> None:
    """Start the watcher of the router that this process `pid` is about to become (it execs `argv` next). Forked
    twice, so that the watcher is nobody's child here: the router would never reap it."""
    child = os.fork()
    if child:
        os.waitpid(child, 0)
        return
    try:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execv(sys.executable, [sys.executable, "-m", __name__, sim_dir, str(pid), "--", *argv])
    finally:
        os._exit(0)


if __name__ == "__main__":
    _sim_dir, _pid, _dash, *_argv = sys.argv[1:]
    watch(_sim_dir, int(_pid), RouterStart.from_argv(_argv))
