"""Whether a world is quiet: none of its programs has work in hand and no byte is on its way to a world server or
back.

A simulated server models a decode step as modelled time; what its clients then do with the step's tokens (read
them, time them, send the next request) is this machine's work, which a real host's idle CPUs would do at once.
So after each step the server keeps the world's clock standing at the step's end (its horizon) until the world is
quiet, and only then names the next step's end (sim/serving/pacing.py). Quiet is read from the kernel, as `ps` and
`ss` would show it, so no program has to report anything on its own hot path:

- every thread of every program the host's `python` runs (each registers at start, host_time.py), but the world's
  servers, is asleep: not runnable and not in an uninterruptible wait. A thread that is woken by a chunk turns runnable in the writer's own
  system call, so a step's readers are never missed between the write and their first instruction;
- every TCP connection to a port the world's registry maps (its servers', a gateway's) has empty queues both
  ways.

One look costs a directory listing per program and a read of /proc/net/tcp: a fraction of a millisecond, once or
twice a decode step, where counting every send and receive under the clock's lock cost a second a step at 128
streams.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .processes import pid_alive

PROGRAMS_DIR = "programs"  # under the clock's directory: one empty file per program, named by its pid
_NET_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
_ESTABLISHED = "01"
_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def register_program(clock_dir: Path, pid: int) -> None:
    """Count process `pid` among the world's programs (its threads must be asleep for the world to be quiet)."""
    programs = clock_dir / PROGRAMS_DIR
    try:
        programs.mkdir(exist_ok=True)
        (programs / str(pid)).touch()
    except OSError:
        pass  # a world being torn down: nothing waits on it any more


class Quiescence:
    """Looks, for one world, at whether anything is in hand. `self_pid`'s own threads are not looked at (the server
    asking is busy asking), nor the servers' (world_ports)."""

    def __init__(self, clock_dir: Path, ports_dir: Path, *, self_pid: int | None = None) -> None:
        self.programs = clock_dir / PROGRAMS_DIR
        self.ports_dir = ports_dir
        self.self_pid = os.getpid() if self_pid is None else self_pid
        self.servers: set[int] = set()  # the processes serving the world's ports, as world_ports() last read them

    def world_ports(self) -> set[int]:
        """The real loopback ports the world's servers listen on (the host's port registry, world/ports.py). Their
        processes are not looked at (busy_program): a server at work is writing to, or reading from, those ports,
        which shows there, or settling a step of its own (two replicas behind a gateway must not wait for each
        other's settling)."""
        ports: set[int] = set()
        self.servers = set()
        try:
            names = os.listdir(self.ports_dir)
        except FileNotFoundError:
            return ports
        for name in names:
            if not name.endswith(".json") or name.startswith("."):
                continue
            try:
                entry = json.loads((self.ports_dir / name).read_text())
            except (OSError, ValueError):
                continue
            if isinstance(entry.get("real_port"), int):
                ports.add(entry["real_port"])
            if isinstance(entry.get("pid"), int):
                self.servers.add(entry["pid"])
        return ports

    def busy_program(self) -> int | None:
        """A program with a thread at work (its pid), or None."""
        try:
            names = os.listdir(self.programs)
        except FileNotFoundError:
            return None
        for name in names:
            if not name.isdigit() or int(name) == self.self_pid or int(name) in self.servers:
                continue
            pid = int(name)
            if not pid_alive(pid):
                (self.programs / name).unlink(missing_ok=True)
                continue
            if _at_work(pid):
                return pid
        return None

    @staticmethod
    def bytes_on_their_way(ports: set[int]) -> bool:
        """Whether a connection to or from one of `ports` has bytes queued (unread, or unsent)."""
        for table in _NET_TABLES:
            try:
                with open(table) as f:
                    lines = f.read().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                if "00000000:00000000" in line:
                    continue
                fields = line.split()
                if len(fields) < 5 or fields[3] != _ESTABLISHED:
                    continue
                local = int(fields[1].rsplit(":", 1)[1], 16)
                remote = int(fields[2].rsplit(":", 1)[1], 16)
                if local in ports or remote in ports:
                    return True
        return False

    def quiet(self, ports: set[int]) -> bool:
        # The threads first: while one is at work, the connections need no look.
        return self.busy_program() is None and not self.bytes_on_their_way(ports)


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process `pid` has used (all its threads, user and system), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return None
    # After the command's closing parenthesis: state is field 3 of stat(5), utime 14 and stime 15.
    return (int(fields[11]) + int(fields[12])) / _TICKS_PER_S


def _at_work(pid: int) -> bool:
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if fields and fields[0] in (b"R", b"D"):
            return True
    return False
