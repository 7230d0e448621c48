"""The Host interface every tool runs on, and the parts all POSIX backends share.

A backend supplies run(), the file operations, forward() and close(). Starting,
watching and stopping detached processes is built here on run() with standard
POSIX commands (setsid, nohup, ps, kill, tail), so local, ssh and sim hosts
behave alike.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime

from ._shell import READ_EXPORTS, check_argv, detached_line, env_exports, leader_alive, live_group_members
from .errors import CommandFailed, RemoteFileNotFound
from .port_map import PORT_MAP_VARIABLE
from .results import CommandResult, DetachedProcess

# Helper commands (ps, kill, tail, the detached launcher) finish at once; this
# only bounds them on a host that stopped answering.
HELPER_TIMEOUT_S = 30.0
_POLL_S = 0.1


class Host(ABC):
    """A machine the agent acts on. Use as a context manager, or call close()."""

    spec: str

    # -- commands ---------------------------------------------------------------------------

    @abstractmethod
    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        idempotent: bool = False,
    ) -> CommandResult:
        """Run argv (no shell) and wait at most `timeout` seconds.

        On timeout the command's whole process group is killed and the output
        so far is kept (timed_out=True, exit_code=None). `env` is added to the
        host's environment. `idempotent=True` tells a backend that may lose its
        connection mid-command that running the command twice is harmless, so
        it may re-run it after reconnecting (see SshHost).
        """

    # -- files ------------------------------------------------------------------------------

    @abstractmethod
    def read_file(self, path: str) -> bytes:
        """The file's bytes. Raises RemoteFileNotFound."""

    @abstractmethod
    def write_file(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        """Write the whole file atomically (a temporary file renamed into place), creating parent directories."""

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    # -- ports ------------------------------------------------------------------------------

    @abstractmethod
    def forward(self, port: int) -> AbstractContextManager[tuple[str, int]]:
        """A local (address, port) that reaches 127.0.0.1:`port` on the host while the context is open.

        Raises PortNotListening when nothing accepts connections there.
        """

    def port_on_host(self, port: int) -> int:
        """The loopback port a program running ON the host connects to for `port`.

        The port itself on a real host; a simulated host keeps virtual ports
        (many share one machine) and maps them to the real ones.
        """
        return port

    def port_map_dir(self) -> str:
        """Where this host maps its ports to the loopback ports serving them ("" where a port is itself): its
        environment's SPECOPS_PORT_MAP (port_map.py), asked once."""
        cached: str | None = getattr(self, "_port_map_seen", None)
        if cached is None:
            cached = self._environment_variable(PORT_MAP_VARIABLE)
            self._port_map_seen = cached
        return cached

    def _environment_variable(self, name: str) -> str:
        done = self.run(["sh", "-c", f'printf %s "${{{name}:-}}"'], timeout=HELPER_TIMEOUT_S, idempotent=True)
        return done.stdout.strip() if done.ok else ""

    # -- clock ------------------------------------------------------------------------------

    def clock(self) -> float:
        """The host's time in epoch seconds, read off the host (`date +%s.%N`): the clock its logs are stamped
        with, and the one every duration on the host is measured in."""
        done = self.run(["date", "+%s.%N"], timeout=HELPER_TIMEOUT_S, idempotent=True)
        try:
            return float(done.stdout.strip())
        except ValueError:
            raise CommandFailed(done, f"could not read the clock of {self.spec} (date +%s.%N)") from None

    def time_of_stamp(self, stamp: str) -> float:
        """The epoch seconds of a local-time stamp as the host's programs write it (`2026-12-07 14:40:01`, SGLang's
        log lines), read by the host's own `date -d`: its time zone is the host's, not this machine's."""
        done = self.run(["date", "-d", stamp, "+%s"], timeout=HELPER_TIMEOUT_S, idempotent=True)
        try:
            return float(done.stdout.strip())
        except ValueError:
            raise CommandFailed(done, f"{self.spec} could not read the time stamp {stamp!r} (date -d)") from None

    def start_time(self, proc: DetachedProcess) -> float:
        """The host's time when `proc` started, as its launch line read it (what a start-up is timed from); the
        host's time now where that reading is missing (a `date` without %N)."""
        return proc.started_on_host if proc.started_on_host is not None else self.clock()

    def sleep(self, seconds: float) -> None:
        """Wait `seconds` of the host's time, on the host's clock (its own `sleep`): a wait measured here would
        stand for another length of time on a host whose clock runs at another pace."""
        done = self.run(["sleep", f"{max(seconds, 0.0):.3f}"], timeout=seconds + HELPER_TIMEOUT_S, idempotent=True)
        if not done.ok:
            raise CommandFailed(done, f"could not wait on the clock of {self.spec} (sleep {seconds:.3f})")

    # -- lifetime ---------------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None:
        """Release connections. Detached processes keep running."""

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"

    # -- detached processes -----------------------------------------------------------------

    def start_detached(
        self,
        argv: Sequence[str],
        *,
        log_path: str,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> DetachedProcess:
        """Start argv in a new session under nohup, stdout and stderr appended to log_path.

        It survives the connection (and this Host) closing; stop() ends it.
        The log's directory is created. Never re-run after a dropped
        connection: a second copy of a server is not harmless.
        """
        words = check_argv(argv)
        exports = env_exports(env)
        line = (READ_EXPORTS if exports else "") + detached_line(words, log_path=log_path, cwd=cwd)
        result = self.run(["sh", "-c", line], timeout=HELPER_TIMEOUT_S, stdin=exports or None)
        fields = result.stdout.split()
        if not result.ok or not fields or not fields[0].isdigit():
            raise CommandFailed(result, f"could not start {words[0]} detached")
        pid = int(fields[0])
        return DetachedProcess(
            pid=pid,
            pgid=pid,
            log_path=log_path,
            argv=words,
            started_at=datetime.now(UTC),
            host=self.spec,
            started_on_host=_seconds(fields[1]) if len(fields) > 1 else None,
        )

    def _process_table(self) -> str:
        return (
            self.run(["ps", "-A", "-o", "pid=,pgid=,stat="], timeout=HELPER_TIMEOUT_S, idempotent=True).check().stdout
        )

    def is_running(self, proc: DetachedProcess) -> bool:
        """Whether the process is alive (not a zombie) and still leads its group."""
        return leader_alive(self._process_table(), proc.pid, proc.pgid)

    def stop(self, proc: DetachedProcess, *, grace_s: float = 10) -> None:
        """TERM the process group, wait up to grace_s for it to exit, then KILL what is left."""
        for signal_name, wait_s in (("TERM", grace_s), ("KILL", 5.0)):
            if not live_group_members(self._process_table(), proc.pgid):
                return
            # kill fails when the group vanished in between: that is success here.
            self.run(["kill", f"-{signal_name}", "--", f"-{proc.pgid}"], timeout=HELPER_TIMEOUT_S, idempotent=True)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if not live_group_members(self._process_table(), proc.pgid):
                    return
                time.sleep(_POLL_S)
        raise CommandFailed(
            self.run(["ps", "-o", "pid,stat,args", "-g", str(proc.pgid)], timeout=HELPER_TIMEOUT_S, idempotent=True),
            f"process group {proc.pgid} survived SIGKILL",
        )

    def tail(self, log_path: str, lines: int = 50) -> str:
        """The last `lines` lines of a log. Raises RemoteFileNotFound."""
        result = self.run(["tail", "-n", str(int(lines)), "--", log_path], timeout=HELPER_TIMEOUT_S, idempotent=True)
        if result.ok:
            return result.stdout
        if not self.exists(log_path):
            raise RemoteFileNotFound(
                f"log {log_path} does not exist on {self.spec}: check the path start_detached was given",
                host=self.spec,
                path=log_path,
            )
        raise CommandFailed(result, f"could not read {log_path}")


def _seconds(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
