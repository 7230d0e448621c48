"""A simulated host's clock: it runs only while the world's processes wait on it, so a starved one cannot stretch it.

The assertions are about what the clock reads, never about how fast this machine is: a held or clamped clock reads
the same twice whatever happens in between; a clock that runs reads more later.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from specops.sim.world.clock import WorldClock, hold_line
from specops.tools.context import ToolContext
from specops.tools.sglang import LaunchArgs, ServerConfig, StopArgs, launch_server, stop_server

from ..tools.worlds import reach, start_world

SEED_LOAD_SCALE = 4000.0  # the seed profile's quick-run load scale: a 2 s stall here would be 8000 modelled s


@pytest.fixture
def clock(tmp_path: Path) -> WorldClock:
    return WorldClock.create(tmp_path, rate=100.0, start=1_000.0)


def test_the_clock_runs_from_its_start_at_its_rate(clock: WorldClock) -> None:
    first = clock.now()
    time.sleep(0.02)
    assert 1_000.0 <= first < clock.now()


def test_a_hold_stops_the_clock_until_released(clock: WorldClock) -> None:
    clock.hold()
    held = clock.now()
    time.sleep(0.05)
    assert clock.now() == held
    clock.release()
    time.sleep(0.02)
    assert clock.now() > held


def test_a_wrapper_holds_the_clock_from_before_its_interpreter_starts_until_it_exits(
    clock: WorldClock, tmp_path: Path
) -> None:
    holder = subprocess.Popen(["sh", "-c", f"{hold_line(str(tmp_path))}; exec sleep 30"])
    try:
        deadline = time.monotonic() + 10
        while not any(p.isdigit() for p in os.listdir(clock.dir / "procs")) and time.monotonic() < deadline:
            time.sleep(0.01)
        held = clock.now()
        time.sleep(0.05)
        assert clock.now() == held
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.02)
    assert clock.now() > held  # a holder that died holds nothing


def test_the_clock_stops_at_a_horizon_until_its_process_names_the_next(clock: WorldClock) -> None:
    async def load() -> float:
        start = clock.now()
        await clock.sleep_until(start + 500, rate=SEED_LOAD_SCALE)
        return start

    start = asyncio.run(load())
    time.sleep(0.05)  # the process is "starved": it does not go on to its next event
    assert clock.now() == start + 500
    clock.wait_for(math.inf)
    time.sleep(0.02)
    assert clock.now() > start + 500


def test_a_server_stopped_mid_load_loads_in_its_modelled_time(tmp_path: Path) -> None:
    """The issue's failure, at its worst: the simulated server gets no CPU at all for a while (SIGSTOP) in the
    middle of its load. A wall-clock-times-scale clock would see 4000x that pause as silence; this one stops."""
    with start_world(time_scale=8.0, load_time_scale=SEED_LOAD_SCALE) as world, reach(world, "sim") as host:
        ctx = ToolContext.for_host(host)
        load_s = world.state.profile.serving.target.load_seconds
        target = f"{ctx.home}/models/Kimi-K2.6"
        stopper = _stop_the_loader_once(world.layout.root, pause_s=1.5)
        try:
            launched = launch_server(ctx, LaunchArgs(config=ServerConfig(model_path=target, tp=8, ep=4)))
        finally:
            paused = stopper.join()
        try:
            assert paused, "the loader was never caught mid-load"
            # 1.5 s without CPU would be 6000 modelled seconds at this scale: none of it shows.
            assert 0.95 * load_s <= launched.ready_after_s <= 1.1 * load_s
        finally:
            stop_server(ctx, StopArgs(server=launched.id))


class _Stopper:
    def __init__(self, thread: object, result: list[bool]) -> None:
        self._thread, self._result = thread, result

    def join(self) -> bool:
        self._thread.join()  # type: ignore[attr-defined]
        return bool(self._result and self._result[0])


def _stop_the_loader_once(root: Path, *, pause_s: float) -> _Stopper:
    """In the background: find the world's launch_server process once its log shows shards loading, SIGSTOP it for
    `pause_s`, SIGCONT it."""
    import threading

    result: list[bool] = []

    def run() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for log in root.rglob("sglang-*.log"):
                if "Loading safetensors checkpoint shards" in log.read_text(errors="replace"):
                    pid = _launcher_pid(root)
                    if pid is None:
                        continue
                    os.kill(pid, signal.SIGSTOP)
                    time.sleep(pause_s)
                    os.kill(pid, signal.SIGCONT)
                    result.append(True)
                    return
            time.sleep(0.002)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return _Stopper(thread, result)


def _launcher_pid(root: Path) -> int | None:
    """The process whose loading schedule the clock follows: the one whole-process participant waiting on it."""
    clock = WorldClock(root / ".sim")
    pids = [p.pid for p in clock.memory.participants()]
    return pids[0] if pids else None


def test_readings_never_go_backwards_while_a_loader_moves_its_horizon(clock: WorldClock) -> None:
    """A reader racing the loader's every step: it never sees the clock run past a horizon (and come back)."""
    import threading

    readings: list[float] = []
    done = threading.Event()

    async def load() -> None:
        start = clock.now()
        for step in range(1, 150):
            await clock.sleep_until(start + 10 * step, rate=SEED_LOAD_SCALE)
            time.sleep(0.002)  # logging what comes at this point: the clock stands at the horizon meanwhile
        clock.release()

    loader = threading.Thread(target=lambda: (asyncio.run(load()), done.set()))
    loader.start()
    while not done.is_set():
        readings.append(clock.now())
    loader.join()
    assert len(readings) > 100
    assert all(later >= earlier for earlier, later in zip(readings, readings[1:], strict=False))


def test_a_reader_held_up_while_reading_keeps_a_loader_waiting(
    clock: WorldClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader descheduled between reading the clock's files and computing its reading, while a loader names a
    horizon just ahead: the loader waits for the reading (the shared lock), so the reading is the clock's when it
    read, and the next one does not come back below it."""
    import threading

    real_anchor = clock.memory.header  # the one step a reader can be held up after
    horizon = clock.now() + 1.0  # 10 ms ahead at the clock's rate of 100
    loader = threading.Thread(target=clock.wait_for, args=(horizon,))

    def anchor_then_held_up():
        anchor = real_anchor()
        if not loader.is_alive() and loader.ident is None:
            loader.start()  # meanwhile the loader names its next event
            time.sleep(0.05)  # and this reader gets no CPU for 50 ms (5 modelled s)
        return anchor

    monkeypatch.setattr(clock.memory, "header", anchor_then_held_up)
    first = clock.now()
    loader.join()
    second = clock.now()
    assert first <= second


def test_a_loader_held_up_before_it_writes_keeps_readers_waiting(
    clock: WorldClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loader late for its next event (the clock already there) is descheduled between taking its wall time and
    writing the anchor, while a reader reads: the reader waits for it. Without the lock the reader ran the old
    anchor on past the point the loader fixed, and the next reading came back below it."""
    import threading

    real_write = clock.memory.write_header  # the step a writer can be held up before
    writing = threading.Event()

    def held_up(anchor):
        writing.set()
        time.sleep(0.05)  # 5 modelled s at the clock's rate of 100
        real_write(anchor)

    monkeypatch.setattr(clock.memory, "write_header", held_up)
    horizon = clock.now()  # reached by the time the loader names it
    loader = threading.Thread(target=clock.wait_for, args=(horizon,))
    loader.start()
    writing.wait()
    first = clock.now()
    loader.join()
    second = clock.now()
    assert first <= second
