"""A sim host's programs read the modelled host's clock (sim/host/host_time.py), as a program on a real host reads
that host's; the simulator's own server and commands do not.

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
from specops.sim.host.host_time import HOST_TIME_VARIABLE, HostClock, anchor_value
from specops.sim.host.wrappers import wrapper_script
from specops.sim.world.clock import WorldClock
from specops.sim.world.layout import WorldLayout

MODEL_EPOCH = 1_000_000_000.0  # 2001: far from this machine's clock, so a reading says which clock it came from


class FakeTime:
    """The real clocks, as a test sets them."""

    def __init__(self) -> None:
        self.wall, self.mono, self.perf, self.cpu = 1_700_000_000.0, 500.0, 800.0, 2.0

    def time(self) -> float:
        return self.wall

    def time_ns(self) -> int:
        return round(self.wall * 1e9)

    def monotonic(self) -> float:
        return self.mono

    def monotonic_ns(self) -> int:
        return round(self.mono * 1e9)

    def perf_counter(self) -> float:
        return self.perf

    def perf_counter_ns(self) -> int:
        return round(self.perf * 1e9)

    def process_time(self) -> float:
        return self.cpu

    def process_time_ns(self) -> int:
        return round(self.cpu * 1e9)

    def thread_time(self) -> float:
        return self.cpu

    def thread_time_ns(self) -> int:
        return round(self.cpu * 1e9)


def test_the_host_clock_runs_at_its_rate_from_its_anchor() -> None:
    real = FakeTime()
    value = f"8.0 {round(MODEL_EPOCH * 1e9)} {real.time_ns()} {real.monotonic_ns()} {real.perf_counter_ns()}"
    clock = HostClock(value, real=real)
    assert clock.time() == pytest.approx(MODEL_EPOCH) and clock.monotonic() == pytest.approx(500.0)
    real.wall, real.mono, real.perf, real.cpu = real.wall + 2.0, real.mono + 2.0, real.perf + 2.0, 3.0
    assert clock.time() == pytest.approx(MODEL_EPOCH + 16.0)
    assert clock.time_ns() == pytest.approx((MODEL_EPOCH + 16.0) * 1e9, abs=1e3)
    assert clock.monotonic() == pytest.approx(516.0) and clock.monotonic_ns() == pytest.approx(516e9, abs=1e3)
    assert clock.perf_counter() == pytest.approx(816.0) and clock.perf_counter_ns() == pytest.approx(816e9, abs=1e3)
    assert clock.process_time() == pytest.approx(24.0)  # CPU seconds at the host's pace: the same share of a duration
    assert clock.real_seconds(4.0) == pytest.approx(0.5) and clock.real_seconds(None) is None


def test_an_anchor_that_is_not_one_is_refused() -> None:
    with pytest.raises(ValueError):
        anchor_value(0.0, MODEL_EPOCH)
    with pytest.raises(ValueError):
        HostClock("-1 0 0 0 0")


def _run_patched(code: str, rate: float = 1000.0, *, at_start: bool = True, script: Path | None = None) -> dict:
    """Run `code` in a fresh interpreter as a sim host's python runs a program: host_site first on PYTHONPATH and an
    anchor at MODEL_EPOCH (`at_start` False: in ANCHOR instead, for the code to install itself); what it prints
    last, as JSON. `script`: run from that file (a spawned worker imports its target from there)."""
    variable = HOST_TIME_VARIABLE if at_start else "ANCHOR"
    env = {**os.environ, "PYTHONPATH": HOST_SITE, variable: anchor_value(rate, MODEL_EPOCH)}
    env.pop("SPECOPS_SIM_ROOT", None)  # no world: the disk-full guard stays out of it
    if script is not None:
        script.write_text(textwrap.dedent(code))
    argv = [sys.executable, str(script)] if script is not None else [sys.executable, "-c", textwrap.dedent(code)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_program_reads_the_hosts_time_and_its_sleeps_are_shortened_to_match() -> None:
    out = _run_patched(
        """
        import json, time
        before = time.time()
        t0, m0 = time.perf_counter(), time.monotonic()
        time.sleep(2.0)
        print(json.dumps({"before": before, "slept": time.perf_counter() - t0, "mono": time.monotonic() - m0}))
        """
    )
    assert MODEL_EPOCH <= out["before"] < MODEL_EPOCH + 1e6  # the host's epoch, not this machine's
    assert out["slept"] >= 2.0 and out["mono"] >= 2.0  # a sleep never ends early in the host's seconds


def test_waits_ask_the_kernel_for_the_real_seconds_they_stand_for() -> None:
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
        host_time.install({host_time.HOST_TIME_VARIABLE: os.environ["ANCHOR"]})
        time.sleep(4.0)
        import selectors
        with selectors.DefaultSelector() as sel:
            sel.select(3.0)
        threading.Event().wait(2.0)
        print(json.dumps(asked))
        """,
        at_start=False,
    )
    assert out["sleep"] == [pytest.approx(0.004)]
    assert out["select"] == [pytest.approx(0.003)]  # epoll's own timeout counts milliseconds: select() waits
    assert out["cond"] == [pytest.approx(0.002)]


def test_asyncio_runs_on_the_hosts_seconds_and_uvloop_steps_aside() -> None:
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
        """
    )
    assert out["slept"] >= 5.0 and out["timed_out"] is True
    assert abs(out["loop_time"]) < 1.0  # the loop's clock is the patched monotonic clock
    assert out["uvloop"] is False


def test_a_spawned_worker_reads_the_same_clock_as_its_parent(tmp_path: Path) -> None:
    out = _run_patched(
        """
        import json, multiprocessing, time
        from specops.sim.host import host_time

        def anchor():
            c = host_time._installed
            return None if c is None else [c.rate, c.model_ns, c.wall_ns, c.mono_ns, c.perf_ns]

        def report(queue):
            queue.put((time.time(), anchor()))

        if __name__ == "__main__":
            ctx = multiprocessing.get_context("spawn")
            queue = ctx.Queue()
            child = ctx.Process(target=report, args=(queue,))
            child.start()
            now, theirs = queue.get(timeout=100_000)  # the host's seconds: 100 real ones
            child.join()
            print(json.dumps({"child_now": now, "child": theirs, "parent": anchor()}))
        """,
        script=tmp_path / "spawn.py",
    )
    assert MODEL_EPOCH <= out["child_now"] < MODEL_EPOCH + 1e6
    assert out["child"] == out["parent"] is not None  # one anchor: their perf_counter times subtract directly


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


def test_the_hosts_python_gives_a_program_the_host_clock_anchored_at_the_worlds_clock(world) -> None:
    layout, state = world
    inherited = {"PYTHONPATH": "/elsewhere", HOST_TIME_VARIABLE: anchor_value(2.0, 0.0)}
    before = WorldClock(layout.sim_dir).now()
    env = program_environment(inherited, layout, state, ["script.py"])
    after = WorldClock(layout.sim_dir).now()
    clock = HostClock(env[HOST_TIME_VARIABLE])
    assert clock.rate == 8.0 and before <= clock.model_ns / 1e9 <= after  # anchored anew, never inherited
    assert env["PYTHONPATH"].split(os.pathsep) == [HOST_SITE, "/elsewhere"]


def test_the_simulators_server_gets_no_host_clock(world) -> None:
    layout, state = world
    inherited = {HOST_TIME_VARIABLE: anchor_value(8.0, MODEL_EPOCH)}
    env = program_environment(inherited, layout, state, ["-m", "sglang.launch_server", "--port", "30000"])
    assert HOST_TIME_VARIABLE not in env and env["PYTHONPATH"].split(os.pathsep)[0] == HOST_SITE


def test_the_sims_commands_drop_a_programs_host_clock(tmp_path: Path) -> None:
    script = wrapper_script(tmp_path, sys.executable, "date")
    assert f"unset {HOST_TIME_VARIABLE}\n" in script
    assert script.index("unset") < script.index("exec")
