"""A simulated host's clock: the modelled host's time, which every process of the world and every tool reads.

A real host's clock runs at one second a second. A simulated host's runs `rate` times faster than this machine's (a
quick run loads an 8-minute checkpoint in a tenth of a second), and derived from this machine's wall clock alone it
would stretch whenever this machine is busy: a simulated server starved of CPU for two seconds would have "taken"
8,000 modelled seconds to load, and a benchmark client a scheduler kept waiting for 5 ms would see every token
5 x rate ms late. So the clock runs only while nothing in the world is doing the simulator's own work:

- a **hold**: a process computing what a real host would spend no modelled time on (Python starting the simulator,
  a server reading its arguments) stops the clock until it releases the hold or exits. Every executable on a sim
  host's PATH holds the clock from its first instruction: its wrapper script writes the hold before the
  interpreter starts (wrappers.py).
- a **horizon**: a process modelling something that takes time (a checkpoint loading, a decode step) names the
  modelled time of its next event; the clock does not pass it until the process, having done what comes there,
  names the next. A starved process stops the clock at its next event instead of falling behind. A simulated
  server names its next step only once the world is quiet (world/quiescence.py, serving/pacing.py): its clients
  have taken in the step's tokens and sent what they send in answer, so this machine's scheduler and the
  clients' own handling of a chunk never count as the host's time.
- the **rate**: the world's time_scale, or faster while a participant asks for more (a server loading runs the
  clock at load_time_scale: loading is waiting, not work the benchmark measures).

A participant that exited holds nothing. Programs' own waits (time.sleep, asyncio's timers) name no horizon: they
look at the clock again until it reads their end (host_time.py).

The state is shared memory (clock_memory.py) under `.sim/clock/`, with `lock`: a reading takes it shared, a change
exclusive and re-anchors, so modelled time never jumps back. The wrappers, being shell, cannot map it: each writes
an empty `procs/<pid>` and appends its pid to `holds`, whose size a reading compares with what was taken in.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import shlex
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .clock_memory import FREE, HOLD, WAIT, ClockMemory, Header, Participant

CLOCK_DIR = "clock"  # under the world's .sim directory
COARSE_TICK_S = 0.01  # how far a file's modification time may lag this machine's clock (the kernel's coarse tick)
CHECK_EVERY_S = 0.005  # how often a reading looks for participants that exited, while the clock stands
WAIT_LEAST_S, WAIT_MOST_S = 0.0005, 0.05  # a blocking wait's looks at the clock, in this machine's seconds

# This machine's clocks, taken before a program's host clock (host_time.py) replaces the time module's functions.
_wall = time.time
_real_monotonic = time.monotonic
this_machine_monotonic = _real_monotonic  # for deadlines meant in this machine's seconds, in any process
this_machine_sleep = time.sleep  # for waits meant in this machine's seconds, in any process

_memories: dict[Path, ClockMemory] = {}  # one per world and process: its lock is one open file
_memories_lock = threading.Lock()
process_world: WorldClock | None = None  # the world whose clock this process's own time is (host_time.install)
process_boot = 0.0  # and its monotonic clock's origin there (the host's boot, epoch seconds)


def hold_line(sim_dir: str) -> str:
    """The shell line a wrapper script runs before its interpreter starts: hold the clock for this process ($$,
    which the exec keeps)."""
    procs = shlex.quote(f"{sim_dir}/{CLOCK_DIR}/procs/")
    holds = shlex.quote(f"{sim_dir}/{CLOCK_DIR}/holds")
    return f"{{ : > {procs}$$ && echo $$ >> {holds}; }} 2>/dev/null || true"


def share_clock(sim_dir: str | Path, with_sim_dir: str | Path) -> None:
    """Make the world whose `.sim` directory is `sim_dir` keep the clock of the world at `with_sim_dir`: the nodes of
    one cluster read one time, as NTP keeps a real cluster's, and a node's program holding the clock (a rank starting
    up) holds it for every node. Done before anything runs on that world."""
    mine = Path(sim_dir) / CLOCK_DIR
    shutil.rmtree(mine, ignore_errors=True)
    mine.symlink_to((Path(with_sim_dir) / CLOCK_DIR).resolve(), target_is_directory=True)
    with _memories_lock:
        _memories.pop(mine, None)


def _memory(directory: Path) -> ClockMemory:
    with _memories_lock:
        memory = _memories.get(directory)
        if memory is None:
            memory = _memories[directory] = ClockMemory(directory)
        return memory


def _after_fork() -> None:
    for memory in _memories.values():
        memory.forget()


os.register_at_fork(after_in_child=_after_fork)


class WorldClock:
    """The clock of the world whose `.sim` directory is `sim_dir`."""

    def __init__(self, sim_dir: str | Path) -> None:
        self.dir = Path(sim_dir) / CLOCK_DIR
        self._procs = self.dir / "procs"
        self._holds = self.dir / "holds"
        self.memory = _memory(self.dir)
        self._next_check = 0.0  # this machine's monotonic time of the next look for exited participants

    # ------------------------------------------------------------------ creation
    @classmethod
    def create(cls, sim_dir: str | Path, *, rate: float, start: float | None = None) -> WorldClock:
        """A new clock at `start` (default: now), running at `rate` (the world's time_scale)."""
        directory = Path(sim_dir) / CLOCK_DIR
        (directory / "procs").mkdir(parents=True, exist_ok=True)
        (directory / "holds").touch()
        now = _wall()
        header = Header(
            model=start if start is not None else now,
            wall=now,
            rate=float(rate),
            base_rate=float(rate),
            horizon=math.inf,
            holds_seen=0,
            participants_hw=0,
        )
        with _memories_lock:
            _memories.pop(directory, None)
        ClockMemory.create(directory, header)
        return cls(sim_dir)

    def exists(self) -> bool:
        return self.memory.exists()

    # ------------------------------------------------------------------ reading
    def now(self) -> float:
        """The modelled host's time, in epoch seconds."""
        memory = self.memory
        # Under the shared lock, the wall time first: no change can come between it and the state read after it,
        # so the reading is the clock's at that moment however long this reader is held up.
        with memory.locked(shared=True):
            at_wall = _wall()
            header = memory.header()
            settle = self._holds_size() != header.holds_seen or self._check_due(header, at_wall)
        if settle:
            with memory.locked():
                header = self._change(_wall(), lambda header: None, force_settle=True)
                at_wall = _wall()
        return _reading(header, at_wall)

    @property
    def rate(self) -> float:
        """Modelled seconds per wall second while the clock runs."""
        return self.memory.header().rate

    # ------------------------------------------------------------------ whole processes
    def hold(self, pid: int | None = None) -> None:
        """Stop the clock while `pid` (default: this process) computes."""
        self._set(pid or os.getpid(), HOLD)

    def wait_for(self, horizon: float, *, rate: float | None = None, pid: int | None = None) -> None:
        """`pid` (default: this process) waits for modelled time `horizon` (math.inf: for nothing in particular),
        asking for `rate` while it does; releases its hold if it had one."""
        self._set(pid or os.getpid(), WAIT, horizon=horizon, rate=rate)

    def release(self, pid: int | None = None) -> None:
        """`pid` (default: this process) no longer takes part: the clock runs without it."""
        self._remove(pid or os.getpid())

    def wait_until(self, target: float, *, pid: int | None = None) -> None:
        """Block until the clock reads `target`, holding it from passing `target` meanwhile (the host's `sleep`);
        `pid` (default: this process) takes no part afterwards. `target` math.inf: until this process is stopped."""
        self.wait_for(target, pid=pid)
        try:
            if math.isinf(target):
                threading.Event().wait()
            while (now := self.now()) < target:
                this_machine_sleep(min(max((target - now) / max(self.rate, 1e-9), WAIT_LEAST_S), WAIT_MOST_S))
        finally:
            self.release(pid)

    async def sleep_until(self, target: float, *, rate: float | None = None, poll_s: float = 0.002) -> None:
        """Wait (asyncio) until the clock reads `target`, holding it from passing `target` meanwhile."""
        self.wait_for(target, rate=rate)
        while True:
            now = self.now()
            if now >= target:
                return
            if process_world is not None:
                # asyncio's own clock is this world's (its time: seconds since the host booted). A wait past
                # `target` would wait for a time this very wait keeps the clock from reaching, so the timer is set
                # at `target` itself, not at a later reading plus what was left.
                loop = asyncio.get_running_loop()
                await until(loop, min(target, now + for_wall_seconds(0.5)) - process_boot)
            else:
                await asyncio.sleep(min(max((target - now) / max(self.rate, 1e-9), poll_s), 0.5))

    # ------------------------------------------------------------------ internals
    def _set(self, pid: int, kind: int, *, horizon: float = math.inf, rate: float | None = None) -> None:
        def change(header: Header) -> None:
            existing = self.memory.find_participant(pid, header)
            p = Participant(
                slot=existing.slot if existing else -1,
                pid=pid,
                kind=kind,
                horizon=horizon if kind == WAIT else math.inf,
                rate=float(rate) if rate is not None and kind == WAIT else math.nan,
                since=_wall(),
            )
            self.memory.write_participant(p, header)

        self._locked_change(change)

    def _remove(self, pid: int) -> None:
        def change(header: Header) -> None:
            existing = self.memory.find_participant(pid, header)
            if existing is not None:
                self.memory.free_participant(existing.slot)

        self._locked_change(change)

    def _locked_change(self, change: Callable[[Header], None]) -> Header:
        with self.memory.locked():
            return self._change(_wall(), change)

    def _change(self, at_wall: float, change: Callable[[Header], None], *, force_settle: bool = False) -> Header:
        """Under the exclusive lock: settle what is due, apply `change` to the tables, and re-anchor at `at_wall`
        so that the modelled time reached under the old state runs on (or stands) under the new one."""
        memory = self.memory
        header = memory.header()
        old = dataclasses.replace(header)
        freeze_at = None
        if force_settle or self._holds_size() != header.holds_seen or self._check_due(header, at_wall):
            freeze_at = self._settle(header, old, at_wall)
        change(header)
        model = _reading(old, freeze_at if freeze_at is not None else at_wall)
        parts = memory.participants(header)
        held = any(p.kind == HOLD for p in parts)
        waiting = [p for p in parts if p.kind == WAIT]
        asked = [p.rate for p in waiting if not math.isnan(p.rate)]
        header.model = model
        header.wall = math.nan if held else at_wall
        header.rate = max(asked) if asked else header.base_rate
        header.horizon = min((p.horizon for p in waiting), default=math.inf)
        memory.write_header(header)
        return header

    def _settle(self, header: Header, old: Header, at_wall: float) -> float | None:
        """Take in the wrappers' new holds and drop participants that exited: the wall time the clock stopped at,
        when new holds stopped it before now."""
        memory = self.memory
        self._next_check = _real_monotonic() + CHECK_EVERY_S
        freeze_at = None
        size = self._holds_size()
        if size != header.holds_seen:
            header.holds_seen = size
            fresh = self._fresh_holds()
            for pid, since in fresh:
                if process_alive(pid):
                    p = memory.find_participant(pid, header)
                    slot = p.slot if p else -1
                    memory.write_participant(Participant(slot, pid, HOLD, math.inf, math.nan, since), header)
            if fresh and not old.held:
                # The clock stopped when the first of these holds was written (not when it was noticed). A file's
                # time is the kernel's coarse clock, up to a tick behind: taken a tick later, no reading goes back.
                first = min(since for _, since in fresh)
                freeze_at = min(max(first + COARSE_TICK_S, old.wall), at_wall)
        for p in memory.participants(header):
            if not process_alive(p.pid):
                memory.free_participant(p.slot)
        return freeze_at

    def _fresh_holds(self) -> list[tuple[int, float]]:
        """The holds the wrappers wrote since the last look: (pid, when), their files removed."""
        fresh = []
        try:
            names = os.listdir(self._procs)
        except FileNotFoundError:
            return []
        for name in names:
            if not name.isdigit():
                continue
            path = self._procs / name
            try:
                since = path.stat().st_mtime
                path.unlink()
            except FileNotFoundError:
                continue
            fresh.append((int(name), since))
        return fresh

    def _holds_size(self) -> int:
        return self.memory.holds_size()

    def _check_due(self, header: Header, at_wall: float) -> bool:
        """Whether to look for exited participants now: only while the clock stands (held, or at a horizon), and
        at most every CHECK_EVERY_S."""
        if not (header.held or _reading(header, at_wall) >= header.horizon):
            return False
        return _real_monotonic() >= self._next_check


async def until(loop: asyncio.AbstractEventLoop, when: float) -> None:
    """Sleep until the loop's clock reads `when`. Not asyncio.sleep(when - now): it reads the clock again, and on
    a world's clock, which runs on meanwhile, the wait would end that much after `when`, past a horizon set there."""
    if when <= loop.time():
        return
    woken: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not woken.done():
            woken.set_result(None)

    handle = loop.call_at(when, wake)
    try:
        await woken
    finally:
        handle.cancel()


async def wall_sleep(seconds: float) -> None:
    """Sleep `seconds` of this machine's time in an asyncio task, whatever this process's clock does meanwhile (the
    world's clock may stand for as long as this very process keeps it standing)."""
    await asyncio.get_running_loop().run_in_executor(None, this_machine_sleep, seconds)


def for_wall_seconds(seconds: float) -> float:
    """How long a wait on this process's own clock (time.sleep, asyncio) must be to last `seconds` of this machine's
    time: the same, unless the process runs on a world's clock (then that many of its seconds at its rate now)."""
    return seconds * process_world.rate if process_world is not None else seconds


def _reading(header: Header, at_wall: float) -> float:
    """The modelled time at wall time `at_wall`: held, or run on at its rate up to the nearest horizon (never back
    past the anchor)."""
    if header.held:
        return header.model
    run_on = header.model + header.rate * max(at_wall - header.wall, 0.0)
    return min(run_on, max(header.horizon, header.model))


def process_alive(pid: int) -> bool:
    """Whether the process exists and has not exited (a zombie waiting to be reaped counts as exited)."""
    state = _state(f"/proc/{pid}/stat")
    return state is not None and state != b"Z"


def _state(path: str) -> bytes | None:
    try:
        with open(path, "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[-1].split()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return fields[0] if fields else None


__all__ = [
    "CLOCK_DIR",
    "FREE",
    "WorldClock",
    "for_wall_seconds",
    "hold_line",
    "process_alive",
    "share_clock",
    "this_machine_monotonic",
    "wall_sleep",
]
