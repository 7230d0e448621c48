"""A sim host's programs read the world's clock (sim/host/host_time.py), as a program on a real host reads that
host's, and wait on it; the simulator's own commands do not (they hold it while they run).

The assertions are about what the clocks read and what the waits ask the kernel for (recorded by stand-ins put in
place before the patch), never about how fast this machine is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from specops.sim.host.commands.python import HOST_SITE, program_environment
from specops.sim.host.host_time import HOST_TIME_VARIABLE, HostClock, variable_value
from specops.sim.host.wrappers import wrapper_script
from specops.sim.world.clock import WorldClock
from specops.sim.world.layout import WorldLayout

MODEL_EPOCH = 1_000_000_000.0  # 2001: far from this machine's clock, so a reading says which clock it came from


BOOT = MODEL_EPOCH - 100.0  # the host booted 100 modelled seconds before the world's clock started


@pytest.fixture
def world_dir(tmp_path: Path) -> Path:
    """A world's clock at MODEL_EPOCH, running 1000 modelled seconds a second."""
    sim_dir = tmp_path / ".sim"
    WorldClock.create(sim_dir, rate=1000.0, start=MODEL_EPOCH)
    return sim_dir


def test_the_host_clock_is_the_worlds_read_live(world_dir: Path) -> None:
    clock = HostClock(variable_value(str(world_dir), BOOT))
    world = WorldClock(world_dir)
    world.hold()  # the clock stands: every reading is the same
    try:
        now = clock.time()
        assert now == world.now() and MODEL_EPOCH <= now < MODEL_EPOCH + 1e6
        assert clock.monotonic() == pytest.approx(now - BOOT)  # seconds since the host booted
        assert clock.time_ns() == pytest.approx(now * 1e9, abs=1e3)
    finally:
        world.release()


def test_a_value_that_is_not_a_host_clock_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        HostClock("8.0 0 0 0 0")
    with pytest.raises(ValueError):
        HostClock(variable_value(str(tmp_path / "no-world"), BOOT))


def test_a_thread_spinning_on_a_clock_its_own_horizon_stops_lets_go(world_dir: Path) -> None:
    """A loop waiting for the time to change without waiting (sleeps below asyncio's clock resolution fire at once)
    would be held up forever by the horizon its last wait left: it lets go after enough readings at one value."""
    clock = HostClock(variable_value(str(world_dir), BOOT))
    clock.wait(0.001, lambda real: None)  # a timed wait: its horizon stays until the thread waits again
    stopped_at = clock.time()
    readings = [clock.time() for _ in range(5000)]
    assert readings[-1] > stopped_at  # the clock moved on


def _run_patched(code: str, world_dir: Path, *, at_start: bool = True, script: Path | None = None) -> dict:
    """Run `code` in a fresh interpreter as a sim host's python runs a program: host_site first on PYTHONPATH and the
    world's clock in its variable (`at_start` False: in CLOCK instead, for the code to install itself); what it
    prints last, as JSON. `script`: run from that file (a spawned worker imports its target from there)."""
    variable = HOST_TIME_VARIABLE if at_start else "CLOCK"
    env = {**os.environ, "PYTHONPATH": HOST_SITE, variable: variable_value(str(world_dir), BOOT)}
    env.pop("SPECOPS_SIM_ROOT", None)  # no world tree: the disk-full guard stays out of it
    if script is not None:
        script.write_text(textwrap.dedent(code))
    argv = [sys.executable, str(script)] if script is not None else [sys.executable, "-c", textwrap.dedent(code)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_program_reads_the_hosts_time_and_its_sleeps_are_shortened_to_match(world_dir: Path) -> None:
    out = _run_patched(
        """
        import json, time
        before = time.time()
        t0, m0 = time.perf_counter(), time.monotonic()
        time.sleep(2.0)
        print(json.dumps({"before": before, "slept": time.perf_counter() - t0, "mono": time.monotonic() - m0}))
        """,
        world_dir,
    )
    assert MODEL_EPOCH <= out["before"] < MODEL_EPOCH + 1e6  # the host's epoch, not this machine's
    assert out["slept"] >= 2.0 and out["mono"] >= 2.0  # a sleep never ends early in the host's seconds


def test_waits_ask_the_kernel_for_the_real_seconds_they_stand_for(tmp_path: Path) -> None:
    world_dir = tmp_path / ".sim"
    WorldClock.create(world_dir, rate=20.0, start=MODEL_EPOCH)  # slow enough that no wait is over before it starts
    # Stand-ins recorded before the patch: what the patched sleep, selector and condition pass on.
    out = _run_patched(
        """
        import json, os, select, threading, time
        asked = {"sleep": [], "select": [], "cond": []}
        real_sleep, real_select, real_wait = time.sleep, select.select, threading.Condition.wait
        time.sleep = lambda s: (asked["sleep"].append(s), real_sleep(s))[1]
        select.select = lambda r, w, x, t=None: (asked["select"].append(t), real_select(r, w, x, t))[1]
        threading.Condition.wait = lambda self, t=None: (asked["cond"].append(t), real_wait(self, t))[1]
        from specops.sim.host import host_time
        host_time.install({host_time.HOST_TIME_VARIABLE: os.environ["CLOCK"]})
        time.sleep(4.0)
        import selectors
        with selectors.DefaultSelector() as sel:
            sel.select(3.0)
        threading.Event().wait(2.0)
        print(json.dumps(asked))
        """,
        world_dir,
        at_start=False,
    )
    # The first ask of each: the whole wait, in this machine's seconds at the clock's rate (later asks, if the first
    # ended early, are for what was left).
    assert out["sleep"][0] == pytest.approx(0.2, rel=0.25)
    assert out["select"][0] == pytest.approx(0.15, rel=0.25)  # epoll's own timeout counts milliseconds: select()
    assert out["cond"][0] == pytest.approx(0.1, rel=0.25)


def test_asyncio_runs_on_the_hosts_seconds_and_uvloop_steps_aside(world_dir: Path) -> None:
    out = _run_patched(
        """
        import asyncio, json, time

        async def main():
            loop = asyncio.get_running_loop()
            t0 = time.perf_counter()
            await asyncio.sleep(5.0)
            slept = time.perf_counter() - t0
            try:
                await asyncio.wait_for(asyncio.sleep(60.0), 3.0)
                timed_out = False
            except asyncio.TimeoutError:
                timed_out = True
            return {"slept": slept, "timed_out": timed_out, "loop_time": loop.time() - time.monotonic()}

        result = asyncio.run(main())
        try:
            import uvloop  # noqa: F401
            result["uvloop"] = True
        except ImportError:
            result["uvloop"] = False
        print(json.dumps(result))
        """,
        world_dir,
    )
    assert out["slept"] >= 5.0 and out["timed_out"] is True
    assert abs(out["loop_time"]) < 1.0  # the loop's clock is the patched monotonic clock
    assert out["uvloop"] is False


def test_a_spawned_worker_reads_the_same_clock_as_its_parent(world_dir: Path, tmp_path: Path) -> None:
    out = _run_patched(
        """
        import json, multiprocessing, time

        def report(queue):
            queue.put((time.time(), time.time() - time.monotonic()))

        if __name__ == "__main__":
            ctx = multiprocessing.get_context("spawn")
            queue = ctx.Queue()
            before = time.time()
            child = ctx.Process(target=report, args=(queue,))
            child.start()
            now, origin = queue.get(timeout=100_000)  # the host's seconds: 100 real ones
            child.join()
            print(json.dumps({"before": before, "child_now": now, "child_origin": origin, "after": time.time()}))
        """,
        world_dir,
        script=tmp_path / "spawn.py",
    )
    assert out["before"] <= out["child_now"] <= out["after"]  # one clock, read live
    assert out["child_origin"] == pytest.approx(BOOT)  # one monotonic origin: their perf_counter times subtract


def test_without_the_variable_a_process_keeps_its_own_clock() -> None:
    env = {**os.environ, "PYTHONPATH": HOST_SITE}
    env.pop(HOST_TIME_VARIABLE, None)
    env.pop("SPECOPS_SIM_ROOT", None)
    done = subprocess.run(
        [sys.executable, "-c", "import time; print(time.time())"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) > MODEL_EPOCH + 1e8  # this machine's epoch


@pytest.fixture
def world(tmp_path: Path) -> tuple[WorldLayout, dict]:
    layout = WorldLayout(tmp_path)
    WorldClock.create(layout.sim_dir, rate=8.0, start=MODEL_EPOCH)
    return layout, {"profile": {"sim": {"time_scale": 8.0}}}


def test_the_hosts_python_gives_a_program_the_worlds_clock(world) -> None:
    layout, state = world
    inherited = {"PYTHONPATH": "/elsewhere", HOST_TIME_VARIABLE: variable_value("/another/world", 0.0)}
    env = program_environment(inherited, layout, state, ["script.py"])
    clock = HostClock(env[HOST_TIME_VARIABLE])
    assert clock.world.dir == WorldClock(layout.sim_dir).dir  # this world's, never one inherited
    assert env["PYTHONPATH"].split(os.pathsep) == [HOST_SITE, "/elsewhere"]


def test_the_simulators_server_runs_on_the_worlds_clock_too(world) -> None:
    """Its decode steps are modelled seconds, and its waits for them horizons of the world's clock."""
    layout, state = world
    env = program_environment({}, layout, state, ["-m", "sglang.launch_server", "--port", "30000"])
    assert HostClock(env[HOST_TIME_VARIABLE]).world.dir == WorldClock(layout.sim_dir).dir
    assert env["PYTHONPATH"].split(os.pathsep)[0] == HOST_SITE


def test_the_sims_commands_drop_a_programs_host_clock(tmp_path: Path) -> None:
    script = wrapper_script(tmp_path, sys.executable, "date")
    assert f"unset {HOST_TIME_VARIABLE}\n" in script
    assert script.index("unset") < script.index("exec")
