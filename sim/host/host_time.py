"""How a simulated host presents its time to the programs it runs: the world's clock, as libfaketime does for C
programs.

A program run on a real host measures in that host's seconds, and a tool reading its figures converts nothing; so
a program run on a sim host (and the simulator's own server, whose decode steps are modelled seconds) must measure
in the modelled host's seconds, or every tool would have to know which kind of host it ran on. This module gives
a process the world's clock (world/clock.py), read live:

- `time.time` (and `_ns`, and `clock_gettime(CLOCK_REALTIME)`) is the world clock's reading; `time.monotonic` and
  `time.perf_counter` are seconds since the host booted on that clock, so every process of the host (a spawned
  worker, the server) reads the same monotonic time, as on one real host;
- the CPU clocks advance the world's time_scale seconds per real CPU second: a program's CPU share stays the share
  it really used;
- waits are waits on the world's clock: `time.sleep`, every selector's `select(timeout)` (so asyncio's timers) and
  `threading.Condition.wait(timeout)` (Event, Semaphore, queue.Queue) return when the clock reaches their end,
  however long it stood meanwhile;
- the process counts among the world's programs (world/quiescence.py): a simulated server names its next decode
  step only once every thread of every program is asleep, so neither this machine's scheduler nor a program's
  own handling of a chunk counts as the host's time;
- `uvloop` is not importable: its timers read libuv's own clock, which no Python patch reaches; a program that
  prefers it falls back to asyncio's loop, as on a host where it is not installed.

Not covered: socket timeouts and a lock's own `acquire(timeout=...)` (they wait in this machine's seconds),
`datetime.now()` (it reads the system clock in C), and the clocks of programs other than Python ones.

The variable HOST_TIME_VARIABLE carries the world (JSON: its .sim directory, the host's boot time), set by the
host's `python` (commands/python.py) and inherited by every Python process a program starts. The sim's commands
unset it (wrappers.py): they hold the clock while they run instead. `install()` runs from the sim host's
sitecustomize (host_site/), before the program's first line.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..world import clock as world_clock
from ..world.quiescence import register_program

HOST_TIME_VARIABLE = "SPECOPS_SIM_HOST_TIME"
INSTALLED_MARKER = "specops_host_time"  # set on a patched selector or Condition.wait: not wrapped twice
_CPU_CLOCK_IDS = ("CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID")
_MONOTONIC_IDS = ("CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME")
_LONGEST_REAL_WAIT_S = 0.5  # a wait looks at the clock again at least this often (its rate may change meanwhile)
# ... and at most this often while the clock stands short of the wait's end (a server settling a step), which it
# would otherwise poll in a busy loop.
_SHORTEST_REAL_WAIT_S = 0.0005
# A wait this close to its end has reached it: epoch readings are coarser (a quarter microsecond) than the
# monotonic end a caller computes from them.
_ROUNDING_S = 1e-6


def variable_value(sim_dir: str, boot_s: float) -> str:
    """The variable's value for a program of the world whose .sim directory is `sim_dir`, booted at `boot_s`."""
    return json.dumps({"world": sim_dir, "boot": boot_s})


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.last = math.nan  # this thread's last reading (epoch): a wait's timeout counts from it


class HostClock:
    """The world's clock as one process of the host reads it and waits on it."""

    def __init__(self, value: str, *, real: Any = time) -> None:
        try:
            data = json.loads(value)
            self.world = world_clock.WorldClock(str(data["world"]))
            self.boot = float(data["boot"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"not a host clock: {value!r}") from exc
        if not self.world.exists():
            raise ValueError(f"no world clock in {data['world']!r}")
        self.rate = self.world.memory.header().base_rate  # the CPU clocks' pace
        self.real = real  # the real time functions (the time module before install(), or a stand-in in tests)
        self._process: Callable[[], float] = real.process_time
        self._thread: Callable[[], float] = real.thread_time
        self._process_ns: Callable[[], int] = real.process_time_ns
        self._thread_ns: Callable[[], int] = real.thread_time_ns
        self._sleep: Callable[[float], None] = real.sleep
        self._state = _ThreadState()

    # readings
    def time(self) -> float:
        now = self.world.now()
        state = self._state
        if now <= state.last:
            # The clock stands (a server settling a step): each reading still moves on by the least step a float
            # can, as a real clock's nanoseconds do, so a loop that waits for time to pass (multiprocessing's
            # wait(timeout=0) looks until its deadline is behind it) ends instead of spinning until the clock moves.
            now = math.nextafter(state.last, math.inf)
        state.last = now
        return now

    def time_ns(self) -> int:
        return round(self.time() * 1e9)

    def monotonic(self) -> float:
        return self.time() - self.boot

    def monotonic_ns(self) -> int:
        return round(self.monotonic() * 1e9)

    def process_time(self) -> float:
        return self.rate * self._process()

    def process_time_ns(self) -> int:
        return round(self.rate * self._process_ns())

    def thread_time(self) -> float:
        return self.rate * self._thread()

    def thread_time_ns(self) -> int:
        return round(self.rate * self._thread_ns())

    # waits
    def wait(self, timeout: float | None, block: Any) -> Any:
        """Wait on the world's clock for `timeout` host seconds (None: for as long as it takes) with
        `block(real_seconds)`, which returns something true when what it waits for came (then so does this).

        The wait names no horizon: the clock may stand meanwhile (a server settling a decode step, a program
        starting), and the wait then looks again no sooner than _SHORTEST_REAL_WAIT_S."""
        if timeout is None:
            return block(None)
        state = self._state
        start = state.last if not math.isnan(state.last) else self.time()
        end = (start - self.boot) + timeout  # on the monotonic clock
        while True:
            now = self.time()
            # Within a microsecond of its end: a clock standing at a horizon set for this very moment, whose
            # epoch reading rounds a hair below the monotonic end the caller computed, has reached it.
            if now - self.boot >= end - _ROUNDING_S:
                return block(0)
            header = self.world.memory.header()
            real = (end + self.boot - now) / max(header.rate, 1e-9)
            if header.held or header.horizon < end + self.boot:
                real = max(real, _SHORTEST_REAL_WAIT_S)  # someone stops the clock short of this wait's end
            came = block(min(real, _LONGEST_REAL_WAIT_S))
            if came:
                return came

    def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            self._sleep(seconds)
            return
        self.wait(seconds, lambda real: self._sleep(real) if real else None)


def _patch_time(clock: HostClock) -> None:
    real_gettime, real_gettime_ns = time.clock_gettime, time.clock_gettime_ns
    monotonic_ids = {getattr(time, name) for name in _MONOTONIC_IDS if hasattr(time, name)}
    cpu_ids = {getattr(time, name) for name in _CPU_CLOCK_IDS if hasattr(time, name)}
    realtime = getattr(time, "CLOCK_REALTIME", None)

    def clock_gettime(clk_id: int) -> float:
        if clk_id == realtime:
            return clock.time()
        if clk_id in monotonic_ids:
            return clock.monotonic()
        return clock.rate * real_gettime(clk_id) if clk_id in cpu_ids else real_gettime(clk_id)

    def clock_gettime_ns(clk_id: int) -> int:
        if clk_id == realtime:
            return clock.time_ns()
        if clk_id in monotonic_ids:
            return clock.monotonic_ns()
        return round(clock.rate * real_gettime_ns(clk_id)) if clk_id in cpu_ids else real_gettime_ns(clk_id)

    patched: dict[str, Any] = {
        "time": clock.time,
        "time_ns": clock.time_ns,
        "monotonic": clock.monotonic,
        "monotonic_ns": clock.monotonic_ns,
        "perf_counter": clock.monotonic,
        "perf_counter_ns": clock.monotonic_ns,
        "process_time": clock.process_time,
        "process_time_ns": clock.process_time_ns,
        "thread_time": clock.thread_time,
        "thread_time_ns": clock.thread_time_ns,
        "sleep": clock.sleep,
        "clock_gettime": clock_gettime,
        "clock_gettime_ns": clock_gettime_ns,
    }
    for name, function in patched.items():
        setattr(time, name, function)


def _patch_selectors(clock: HostClock) -> None:
    """Every selector waits on the world's clock; epoll and poll (millisecond timeouts) wait the sub-millisecond
    part on the selector's own descriptor with select(), whose timeout counts microseconds."""
    import select
    import selectors

    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector", "KqueueSelector"):
        cls = getattr(selectors, name, None)
        if cls is None or getattr(cls.select, INSTALLED_MARKER, False):
            continue
        original = cls.select
        fine = name in ("EpollSelector", "KqueueSelector")  # one descriptor stands for all: select() can wait on it

        def waited(self: Any, timeout: float | None = None, _original: Any = original, _fine: bool = fine) -> Any:
            if timeout is not None and timeout <= 0:
                return _original(self, 0)  # a look, not a wait

            def block(real: float | None) -> Any:
                if _fine and real:
                    try:
                        select.select([self.fileno()], [], [], real)
                    except (ValueError, OSError):  # a descriptor past select()'s limit: the kernel's own timeout
                        return _original(self, real)
                    return _original(self, 0)
                return _original(self, real)

            return clock.wait(timeout, block) or []

        setattr(waited, INSTALLED_MARKER, True)
        cls.select = waited


def _patch_threading(clock: HostClock) -> None:
    original = threading.Condition.wait
    if getattr(original, INSTALLED_MARKER, False):
        return

    def wait(self: Any, timeout: float | None = None) -> bool:
        return bool(clock.wait(timeout, lambda real: original(self, real)))

    setattr(wait, INSTALLED_MARKER, True)
    threading.Condition.wait = wait  # type: ignore[method-assign]
    # threading binds `from time import monotonic as _time` when imported (before this, at start-up): its deadlines
    # (Condition.wait_for, Semaphore.acquire) must read the host's clock as the waits above do.
    setattr(threading, "_time", clock.monotonic)  # noqa: B010 - a private name of threading


_installed: HostClock | None = None  # this process's host clock, once install() put it in place


class _NoUvloop:
    """A meta path finder that makes `import uvloop` fail as where it is not installed (see the module doc)."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name == "uvloop" or name.startswith("uvloop."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def install(environ: dict[str, str] | None = None) -> HostClock | None:
    """Give this process the host's clock, when the host's `python` started it with one; the clock, or None."""
    import sys

    global _installed
    value = (os.environ if environ is None else environ).get(HOST_TIME_VARIABLE)
    if not value or _installed is not None:
        return None
    try:
        clock = HostClock(value)
    except ValueError:
        return None  # not one of ours: leave the process's time alone
    _installed = clock
    world_clock.process_world, world_clock.process_boot = clock.world, clock.boot
    register_program(clock.world.dir, os.getpid())
    _patch_time(clock)
    _patch_selectors(clock)
    _patch_threading(clock)
    sys.modules.pop("uvloop", None)
    sys.meta_path.insert(0, _NoUvloop())
    return clock


def installed() -> HostClock | None:
    """This process's host clock, if it has one."""
    return _installed
