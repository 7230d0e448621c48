"""How a simulated host presents its time to the programs it runs: the modelled host's clock, as libfaketime does
for C programs.

A sim host runs `time_scale` times faster than the host it models: its server (sim/serving/engine.py) takes
step_time / time_scale real seconds per step, and its `date` reads the world's clock (world/clock.py), which runs
`time_scale` modelled seconds a real second. A program run on a real host measures in that host's seconds, and a
tool reading its figures converts nothing; so a program run on a sim host must measure in the modelled host's
seconds too, or every tool would have to know which kind of host it ran on. This module gives a program that clock:
its anchor is the world's clock when the host's `python` started it (commands/python.py), and from there it runs
at the world's time_scale:

- `time.time`, `time.monotonic`, `time.perf_counter` (and their `_ns` forms, and `time.clock_gettime` of those
  clocks) advance `rate` seconds per real second from the anchor, so a program's timestamps agree with the host's
  `date` and every duration it measures is the modelled host's;
- the CPU clocks (`time.process_time`, `time.thread_time`) advance `rate` seconds per real CPU second: a program's
  CPU share of a duration stays the share it really used (the host's CPU is as busy as this machine's);
- waits are shortened to match: `time.sleep(s)`, every selector's `select(timeout)` (asyncio's event loop waits
  there for its next timer, so `asyncio.sleep`, `wait_for` and call_later run on the host's seconds, and so do
  multiprocessing's and subprocess's waits) and `threading.Condition.wait(timeout)` (so Event, Semaphore and
  queue.Queue waits) wait timeout / rate real seconds. A selector's wait is exact to the microsecond: the kernel's
  epoll and poll count in milliseconds, which at rate 8 would be 8 modelled milliseconds of timer slack;
- `uvloop` is not importable: its timers read libuv's own clock, which no Python patch reaches; a program that
  prefers it falls back to asyncio's loop, as on a host where it is not installed.

Not scaled: socket timeouts and a lock's own `acquire(timeout=...)` (they wait in this machine's seconds, so they
give up later in the host's, never sooner), `datetime.now()` (it reads the system clock in C), and the clocks of
programs other than Python ones.

The anchor travels in the environment (HOST_TIME_VARIABLE: "rate model_ns wall_ns mono_ns perf_ns"), so every
Python process a program starts directly (multiprocessing's spawned workers) reads the same clock as its parent, to
the nanosecond: their perf_counter times subtract directly, as on one real host. Only the programs the host's
`python` runs get it: never the simulator's own server (`python -m sglang.launch_server`, which paces itself in real
seconds) nor the sim's commands (their wrappers unset the variable, wrappers.py). `install()` runs from the sim
host's sitecustomize (host_site/), before the program's first line; it imports the standard library only.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

HOST_TIME_VARIABLE = "SPECOPS_SIM_HOST_TIME"
INSTALLED_MARKER = "specops_host_time"  # set on a patched selector or Condition.wait: not wrapped twice
_CLOCK_IDS = ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME")
_CPU_CLOCK_IDS = ("CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID")


def anchor_value(rate: float, model_s: float) -> str:
    """The variable's value for a clock that reads `model_s` (modelled epoch seconds) now and runs at `rate`."""
    if rate <= 0:
        raise ValueError(f"a host clock's rate must be > 0, got {rate}")
    wall_ns, mono_ns, perf_ns = time.time_ns(), time.monotonic_ns(), time.perf_counter_ns()
    return f"{float(rate)!r} {round(model_s * 1e9)} {wall_ns} {mono_ns} {perf_ns}"


class HostClock:
    """A clock running `rate` seconds per real second from an anchor: `model_ns` (modelled epoch) at real epoch
    `wall_ns`; the monotonic clocks keep their real origin (`mono_ns`, `perf_ns`: their readings at the anchor)."""

    def __init__(self, value: str, *, real: Any = time) -> None:
        rate, model_ns, wall_ns, mono_ns, perf_ns = value.split()
        self.rate = float(rate)
        if not self.rate > 0:
            raise ValueError(f"a host clock's rate must be > 0, got {rate}")
        self.model_ns, self.wall_ns = int(model_ns), int(wall_ns)
        self.mono_ns, self.perf_ns = int(mono_ns), int(perf_ns)
        self.real = real  # the real clocks (the time module before install(), or a stand-in in tests)
        self._time: Callable[[], float] = real.time
        self._mono: Callable[[], float] = real.monotonic
        self._perf: Callable[[], float] = real.perf_counter
        self._time_ns: Callable[[], int] = real.time_ns
        self._mono_ns: Callable[[], int] = real.monotonic_ns
        self._perf_ns: Callable[[], int] = real.perf_counter_ns
        self._process: Callable[[], float] = real.process_time
        self._thread: Callable[[], float] = real.thread_time
        self._process_ns: Callable[[], int] = real.process_time_ns
        self._thread_ns: Callable[[], int] = real.thread_time_ns

    # wall clock: the modelled epoch
    def time(self) -> float:
        return self.model_ns / 1e9 + self.rate * (self._time() - self.wall_ns / 1e9)

    def time_ns(self) -> int:
        return self.model_ns + round(self.rate * (self._time_ns() - self.wall_ns))

    # monotonic clocks: their own origin, the modelled pace
    def monotonic(self) -> float:
        return self.mono_ns / 1e9 + self.rate * (self._mono() - self.mono_ns / 1e9)

    def monotonic_ns(self) -> int:
        return self.mono_ns + round(self.rate * (self._mono_ns() - self.mono_ns))

    def perf_counter(self) -> float:
        return self.perf_ns / 1e9 + self.rate * (self._perf() - self.perf_ns / 1e9)

    def perf_counter_ns(self) -> int:
        return self.perf_ns + round(self.rate * (self._perf_ns() - self.perf_ns))

    # CPU clocks: the modelled pace (they start at 0 with the process or thread)
    def process_time(self) -> float:
        return self.rate * self._process()

    def process_time_ns(self) -> int:
        return round(self.rate * self._process_ns())

    def thread_time(self) -> float:
        return self.rate * self._thread()

    def thread_time_ns(self) -> int:
        return round(self.rate * self._thread_ns())

    # waits
    def real_seconds(self, timeout: float | None) -> float | None:
        """How long a wait of `timeout` host seconds lasts here."""
        return None if timeout is None else timeout / self.rate


def _patch_time(clock: HostClock) -> None:
    real_sleep = time.sleep
    real_gettime, real_gettime_ns = time.clock_gettime, time.clock_gettime_ns
    scaled_ids = {getattr(time, name) for name in _CLOCK_IDS if hasattr(time, name)}
    cpu_ids = {getattr(time, name) for name in _CPU_CLOCK_IDS if hasattr(time, name)}
    realtime = getattr(time, "CLOCK_REALTIME", None)

    def sleep(seconds: float) -> None:
        real_sleep(seconds / clock.rate if seconds > 0 else seconds)

    def clock_gettime(clk_id: int) -> float:
        if clk_id == realtime:
            return clock.time()
        if clk_id in scaled_ids:
            now = real_gettime(clk_id)
            return now + (clock.rate - 1.0) * (now - clock.mono_ns / 1e9)  # keeps its origin near the anchor
        return clock.rate * real_gettime(clk_id) if clk_id in cpu_ids else real_gettime(clk_id)

    def clock_gettime_ns(clk_id: int) -> int:
        if clk_id == realtime:
            return clock.time_ns()
        if clk_id in scaled_ids:
            now = real_gettime_ns(clk_id)
            return now + round((clock.rate - 1.0) * (now - clock.mono_ns))
        return round(clock.rate * real_gettime_ns(clk_id)) if clk_id in cpu_ids else real_gettime_ns(clk_id)

    patched: dict[str, Any] = {
        "time": clock.time,
        "time_ns": clock.time_ns,
        "monotonic": clock.monotonic,
        "monotonic_ns": clock.monotonic_ns,
        "perf_counter": clock.perf_counter,
        "perf_counter_ns": clock.perf_counter_ns,
        "process_time": clock.process_time,
        "process_time_ns": clock.process_time_ns,
        "thread_time": clock.thread_time,
        "thread_time_ns": clock.thread_time_ns,
        "sleep": sleep,
        "clock_gettime": clock_gettime,
        "clock_gettime_ns": clock_gettime_ns,
    }
    for name, function in patched.items():
        setattr(time, name, function)


def _patch_selectors(clock: HostClock) -> None:
    """Every selector waits timeout / rate; epoll and poll (millisecond timeouts) wait the sub-millisecond part on
    the selector's own descriptor with select(), whose timeout counts microseconds."""
    import select
    import selectors

    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector", "KqueueSelector"):
        cls = getattr(selectors, name, None)
        if cls is None or getattr(cls.select, INSTALLED_MARKER, False):
            continue
        original = cls.select
        fine = name in ("EpollSelector", "KqueueSelector")  # one descriptor stands for all: select() can wait on it

        def scaled(self: Any, timeout: float | None = None, _original: Any = original, _fine: bool = fine) -> Any:
            real = clock.real_seconds(timeout)
            if _fine and real is not None and real > 0:
                try:
                    select.select([self.fileno()], [], [], real)
                except (ValueError, OSError):  # a descriptor past select()'s limit: the kernel's own timeout
                    return _original(self, real)
                return _original(self, 0)
            return _original(self, real)

        setattr(scaled, INSTALLED_MARKER, True)
        cls.select = scaled


def _patch_threading(clock: HostClock) -> None:
    import threading

    original = threading.Condition.wait
    if getattr(original, INSTALLED_MARKER, False):
        return

    def wait(self: Any, timeout: float | None = None) -> bool:
        return original(self, clock.real_seconds(timeout))

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
    _patch_time(clock)
    _patch_selectors(clock)
    _patch_threading(clock)
    sys.modules.pop("uvloop", None)
    sys.meta_path.insert(0, _NoUvloop())
    return clock
