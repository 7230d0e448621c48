"""Test support: whole jobs (a `specops run`, a playbook run, an eval) and the processes tests start.

A whole job's time is this machine's speed times its load (four test workers, whatever else runs): no test bounds
it in seconds. `job_timeout()` is a limit that only catches a hang (HANG_S a job, far beyond any machine's slowest);
what a test checks of a job is its steps, never how long they took.

Every process a test starts ends with the test, pass, fail or timeout:

- `started_job` / `run_job` start a command (a `specops run`, an eval) in its own session, its environment marked
  with a value of its own (JOB_VARIABLE). When the test is done with it (a `with` block, or `run_job` returning or
  raising) the job is interrupted as Ctrl-C does (SIGINT to its group: the CLI closes the simulated world it
  started, stopping that world's servers), then its group is killed, then any process still carrying its mark:
  what it started outside its group (servers on a simulated host run in sessions of their own).
- tests/conftest.py marks every process of the suite (SUITE_VARIABLE, inherited by whatever a test starts, on
  simulated hosts too) and, when the suite ends, kills those still alive, with the processes of the simulated
  worlds they served (the product's own stop_host_processes, then the world's process table, which also holds
  what was started over SSH), and names them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from specops.sim.host.process_view import world_processes
from specops.sim.world.layout import ROOT_VARIABLE, WorldLayout, world_runs_at
from specops.sim.world.processes import pid_alive
from specops.sim.world.world import stop_host_processes

HANG_S = 900  # a job still running after this long hangs: no machine, however slow or busy, takes this long
INTERRUPT_GRACE_S = 30  # after SIGINT, how long a job has to close its world before its group is killed

# Not SPECOPS_*: tests strip those from the environments they build for a run.
SUITE_VARIABLE = "PYTEST_SPECOPS_SUITE"
JOB_VARIABLE = "PYTEST_SPECOPS_JOB"


def job_timeout(jobs: int = 1) -> pytest.MarkDecorator:
    """pytest-timeout's limit for a test running `jobs` whole jobs one after another: it only catches a hang."""
    return pytest.mark.timeout(jobs * HANG_S + 120)


def job_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (this process's by default) with the suite's mark (a test may have stripped it) and a job's own."""
    base = dict(os.environ if env is None else env)
    suite = os.environ.get(SUITE_VARIABLE)
    return base | ({SUITE_VARIABLE: suite} if suite else {}) | {JOB_VARIABLE: uuid.uuid4().hex}


@contextmanager
def started_job(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None, **popen: Any
) -> Iterator[subprocess.Popen]:
    """`argv` started in its own session (subprocess.Popen's keywords), ended with everything it started when the
    block ends, however it ends."""
    environment = job_environment(env)
    process = subprocess.Popen(list(argv), env=environment, start_new_session=True, **popen)
    try:
        yield process
    finally:
        end_job(process, environment[JOB_VARIABLE])


def run_job(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = HANG_S,
    input: str | None = None,  # noqa: A002 - subprocess.run's name
    stdout: int | None = subprocess.PIPE,
    stderr: int | None = subprocess.PIPE,
    **popen: Any,
) -> subprocess.CompletedProcess[str]:
    """subprocess.run(argv, text=True, capture_output=True) for a whole job: its own session, ended with all it
    started, a timeout that only catches a hang (subprocess.TimeoutExpired)."""
    stdin = subprocess.PIPE if input is not None else popen.pop("stdin", subprocess.DEVNULL)
    with started_job(argv, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=True, **popen) as process:
        out, err = process.communicate(input, timeout=timeout)
    return subprocess.CompletedProcess(list(argv), process.returncode, out, err)


def end_job(process: subprocess.Popen, job: str) -> list[str]:
    """Interrupt the job (SIGINT to its group), kill its group after INTERRUPT_GRACE_S, then every process still
    carrying its mark; what was killed after the job itself, as `pid command` lines."""
    if process.poll() is None:
        _signal_group(process.pid, signal.SIGINT)
        try:
            process.wait(INTERRUPT_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(process.pid, signal.SIGKILL)  # its group outlives it when a child of it is still in there
    with suppress(subprocess.TimeoutExpired):
        process.wait(10)
    return end_marked(JOB_VARIABLE, job)


def _signal_group(pgid: int, sig: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def marked(variable: str, value: str) -> dict[int, dict[str, str]]:
    """The live processes whose environment (as they were started) holds `variable=value`, this one excepted: their
    environments by pid."""
    mark = f"{variable}={value}".encode()
    found: dict[int, dict[str, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            entries = Path("/proc", name, "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if mark in entries and pid_alive(int(name)):
            found[int(name)] = dict(e.decode(errors="replace").partition("=")[::2] for e in entries if b"=" in e)
    return found


def describe(pid: int) -> str:
    try:
        command = Path("/proc", str(pid), "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = "?"
    return f"{pid} {command.strip()[:200]}"


def end_marked(variable: str, value: str, *, worlds: bool = False) -> list[str]:
    """SIGKILL every live process marked `variable=value` (again, for what a dying one started meanwhile); with
    `worlds`, first stop the simulated worlds they belong to as the product does (stop_host_processes: the servers
    and GPU holders its registries name) and kill the rest of each world's processes (those started over SSH carry
    the world's root, not the mark). What was killed, as `pid command` lines."""
    ended: list[str] = []
    for _ in range(5):
        found = marked(variable, value)
        roots = {env[ROOT_VARIABLE] for env in found.values() if env.get(ROOT_VARIABLE)} if worlds else set()
        pids = set(found).union(*(map(int, world_processes(root)) for root in roots))
        pids = {pid for pid in pids if pid != os.getpid() and pid_alive(pid)}
        if not pids:
            break
        ended.extend(describe(pid) for pid in sorted(pids))
        for root in roots:
            if world_runs_at(root):
                stop_host_processes(WorldLayout(Path(root)))
        for pid in sorted(pids):
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    return ended
