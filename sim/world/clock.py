"""A simulated host's clock: the modelled host's time, which every process of the world and every tool reads.

A real host's clock runs at one second a second. A simulated host's runs `rate` times faster than this machine's (a
quick run loads an 8-minute checkpoint in a tenth of a second), and derived from this machine's wall clock alone it
would stretch whenever this machine is busy: a simulated server starved of CPU for two seconds would have "taken"
8,000 modelled seconds to load, and a tool waiting for it would give up. So the clock runs only while the world's
processes are waiting on it, never while one of them is doing the simulator's own work:

- a **hold**: a process computing what a real host would spend no modelled time on (Python starting the simulator,
  a server reading its arguments) stops the clock until it releases the hold or exits. Every executable on a sim
  host's PATH holds the clock from its first instruction: its wrapper script writes the hold before the
  interpreter starts (wrappers.py).
- a **horizon**: a process modelling something that takes time (a checkpoint loading) names the modelled time of
  its next event; the clock does not pass it until the process, having done what comes there, names the next. A
  starved process stops the clock at its next event instead of falling behind it.
- the **rate**: the world's time_scale, or faster while a participant asks for more (a server loading runs the
  clock at load_time_scale: loading is waiting, not work the benchmark measures).

The state lives in `.sim/clock/`: `anchor.json` ({"model": modelled epoch seconds, "wall": this machine's epoch
seconds at that point, or null while held, "rate"}) and one file per participating process in `procs/<pid>`:
empty (a hold its wrapper wrote and no one has counted yet), or JSON {"hold": true} / {"horizon": T, "rate": R}.
Every change takes `lock` and re-anchors, so modelled time never jumps; a reading takes it shared (no change
comes between its wall time and the files it reads), and exclusive only when it finds something to settle (an
uncounted hold, a participant that died).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLOCK_DIR = "clock"  # under the world's .sim directory
COARSE_TICK_S = 0.01  # how far a file's modification time may lag this machine's clock (the kernel's coarse tick)


@dataclass(frozen=True)
class Anchor:
    model: float  # modelled epoch seconds at `wall`
    wall: float | None  # this machine's epoch seconds at that point; None: the clock stands at `model` (held)
    rate: float  # modelled seconds per wall second while it runs


@dataclass(frozen=True)
class Participant:
    pid: int
    hold: bool  # computing: the clock stands still
    counted: bool  # False: a hold its wrapper script wrote, not yet taken into the anchor
    since_wall: float  # when its file was last written (an uncounted hold starts there)
    horizon: float = math.inf  # the modelled time it waits for; the clock does not pass it
    rate: float | None = None  # the rate it asks for while it waits


def hold_line(sim_dir: str) -> str:
    """The shell line a wrapper script runs before its interpreter starts: hold the clock for this process ($$,
    which the exec keeps)."""
    procs = shlex.quote(f"{sim_dir}/{CLOCK_DIR}/procs/")
    return f": > {procs}$$ 2>/dev/null || true"


class WorldClock:
    """The clock of the world whose `.sim` directory is `sim_dir`."""

    def __init__(self, sim_dir: str | Path) -> None:
        self.dir = Path(sim_dir) / CLOCK_DIR
        self._anchor_file = self.dir / "anchor.json"
        self._procs = self.dir / "procs"

    # ------------------------------------------------------------------ creation
    @classmethod
    def create(cls, sim_dir: str | Path, *, rate: float, start: float | None = None) -> WorldClock:
        """A new clock at `start` (default: now), running at `rate` (the world's time_scale)."""
        clock = cls(sim_dir)
        clock._procs.mkdir(parents=True, exist_ok=True)
        clock.dir.joinpath("base_rate").write_text(repr(float(rate)))
        now = time.time()
        clock._write_anchor(Anchor(model=start if start is not None else now, wall=now, rate=rate))
        return clock

    def exists(self) -> bool:
        return self._anchor_file.is_file()

    # ------------------------------------------------------------------ reading
    def now(self) -> float:
        """The modelled host's time, in epoch seconds."""
        # Under the shared lock, the wall time first: no change can be made between it and the files read after
        # it, so the reading is the clock's at that moment however long this reader is held up (a busy machine).
        # Without the lock, a reader that took its wall time after a writer took its own, but read the files
        # before the writer wrote them, ran the old anchor on past the point the writer fixed: past a horizon the
        # writer set below it (a loader late for its next event), and the next reading came back below it.
        with self._locked(shared=True):
            at_wall = time.time()
            parts, anchor = self._participants(), self._anchor()
        if any(not p.counted or not _alive(p.pid) for p in parts):
            with self._locked():
                anchor, parts = self._settle()
                at_wall = time.time()
        return _reading(anchor, parts, at_wall)

    # ------------------------------------------------------------------ participating
    def hold(self, pid: int | None = None) -> None:
        """Stop the clock while `pid` (default: this process) computes."""
        self._set(pid or os.getpid(), {"hold": True})

    def wait_for(self, horizon: float, *, rate: float | None = None, pid: int | None = None) -> None:
        """`pid` (default: this process) waits for modelled time `horizon` (math.inf: for nothing in particular),
        asking for `rate` while it does; releases its hold if it had one."""
        record: dict[str, float | None] = {"horizon": horizon if math.isfinite(horizon) else None, "rate": rate}
        self._set(pid or os.getpid(), record)

    def release(self, pid: int | None = None) -> None:
        """`pid` (default: this process) no longer takes part: the clock runs without it."""
        target = pid or os.getpid()
        with self._locked():
            anchor, parts = self._settle()
            self._reanchor(anchor, parts, [p for p in parts if p.pid != target], time.time())
            self._procs.joinpath(str(target)).unlink(missing_ok=True)

    async def sleep_until(self, target: float, *, rate: float | None = None, poll_s: float = 0.002) -> None:
        """Wait (asyncio) until the clock reads `target`, holding it from passing `target` meanwhile."""
        import asyncio

        self.wait_for(target, rate=rate)
        while True:
            now = self.now()
            if now >= target:
                return
            anchor = self._anchor()
            await asyncio.sleep(min(max((target - now) / max(anchor.rate, 1e-9), poll_s), 0.5))

    # ------------------------------------------------------------------ internals
    def _set(self, pid: int, record: dict[str, Any]) -> None:
        with self._locked():
            anchor, parts = self._settle()
            now_wall = time.time()
            after = [p for p in parts if p.pid != pid] + [_participant(pid, record, now_wall)]
            self._reanchor(anchor, parts, after, now_wall)
            path = self._procs / str(pid)
            tmp = path.with_name(f".{pid}.tmp")
            tmp.write_text(json.dumps(record))
            tmp.replace(path)

    def _settle(self) -> tuple[Anchor, list[Participant]]:
        """Count uncounted holds and drop participants that exited (under the lock): the anchor and the live
        participants after that. The anchor is written before the files change (see _set)."""
        parts, anchor = self._participants(), self._anchor()
        dead = [p for p in parts if not _alive(p.pid)]
        fresh = [p for p in parts if not p.counted and _alive(p.pid)]
        if not dead and not fresh:
            return anchor, parts
        now_wall = time.time()
        if fresh and anchor.wall is not None:
            # The clock stopped when the first of these holds was written (not when it was noticed). A file's time
            # is the kernel's coarse clock, up to a tick behind: taken a tick later, no reading goes backwards.
            first = min(max(min(p.since_wall for p in fresh) + COARSE_TICK_S, anchor.wall), now_wall)
            anchor = Anchor(model=_reading(anchor, parts, first), wall=None, rate=anchor.rate)
        live = [
            Participant(p.pid, p.hold, True, p.since_wall, p.horizon, p.rate) if not p.counted else p
            for p in parts
            if _alive(p.pid)
        ]
        anchor = self._reanchor(anchor, parts, live, now_wall)
        for p in fresh:
            path = self._procs / str(p.pid)
            tmp = path.with_name(f".{p.pid}.tmp")
            tmp.write_text(json.dumps({"hold": True}))
            tmp.replace(path)
        for p in dead:
            self._procs.joinpath(str(p.pid)).unlink(missing_ok=True)
        return anchor, live

    def _reanchor(self, anchor: Anchor, before: list[Participant], after: list[Participant], now_wall: float) -> Anchor:
        """The anchor once the participants changed from `before` to `after` at `now_wall`: the modelled time
        reached under the old ones, running on (or held) under the new ones."""
        model = _reading(anchor, before, now_wall)
        held = any(p.hold for p in after)
        asked = [p.rate for p in after if p.rate is not None and not p.hold]
        rate = max(asked) if asked else self._base_rate()
        new = Anchor(model=model, wall=None if held else now_wall, rate=rate)
        self._write_anchor(new)
        return new

    def _base_rate(self) -> float:
        base = self.dir / "base_rate"
        try:
            return float(base.read_text())
        except (FileNotFoundError, ValueError):
            return 1.0

    def _anchor(self) -> Anchor:
        data = json.loads(self._anchor_file.read_text())
        return Anchor(model=float(data["model"]), wall=data["wall"], rate=float(data["rate"]))

    def _write_anchor(self, anchor: Anchor) -> None:
        tmp = self._anchor_file.with_name(f".anchor.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"model": anchor.model, "wall": anchor.wall, "rate": anchor.rate}))
        tmp.replace(self._anchor_file)

    def _participants(self) -> list[Participant]:
        parts = []
        try:
            names = os.listdir(self._procs)
        except FileNotFoundError:
            return []
        for name in names:
            if not name.isdigit():
                continue
            path = self._procs / name
            try:
                text = path.read_text()
                since = path.stat().st_mtime
            except FileNotFoundError:
                continue  # released in between
            if not text.strip():
                parts.append(Participant(int(name), hold=True, counted=False, since_wall=since))
                continue
            try:
                record = json.loads(text)
            except ValueError:
                continue  # being replaced: written whole by rename, so only a foreign file reads so
            parts.append(_participant(int(name), record, since))
        return parts

    @contextmanager
    def _locked(self, *, shared: bool = False) -> Iterator[None]:
        """The clock's lock: exclusive for a change, shared for a reading (never both at once in one process: an
        exclusive request from a second open file would wait for this process's own shared lock)."""
        with open(self.dir / "lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _participant(pid: int, record: dict[str, Any], since_wall: float) -> Participant:
    if record.get("hold"):
        return Participant(pid, hold=True, counted=True, since_wall=since_wall)
    horizon = record.get("horizon")
    return Participant(
        pid,
        hold=False,
        counted=True,
        since_wall=since_wall,
        horizon=float(horizon) if horizon is not None else math.inf,
        rate=float(record["rate"]) if record.get("rate") is not None else None,
    )


def _reading(anchor: Anchor, parts: list[Participant], at_wall: float) -> float:
    """The modelled time at wall time `at_wall` under `anchor`: held, or run on at its rate up to the nearest
    horizon (never back past the anchor)."""
    if anchor.wall is None:
        return anchor.model
    run_on = anchor.model + anchor.rate * max(at_wall - anchor.wall, 0.0)
    horizons = [p.horizon for p in parts if p.counted and not p.hold]
    if horizons:
        run_on = min(run_on, max(min(horizons), anchor.model))
    return run_on


def _alive(pid: int) -> bool:
    """Whether the process exists and has not exited (a zombie waiting to be reaped counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[-1].split()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return False
    return bool(fields) and fields[0] != b"Z"
