"""The machine this process runs on, as a Host: subprocesses in their own process groups.

`LocalHost(env=..., cwd=...)` runs every command with `env` on top of this
process's environment and from `cwd` (relative paths resolve there, `~` to the
HOME that `env` sets): the local host as a login shell with that environment
would see it. An environment with a port map (SPECOPS_PORT_MAP, port_map.py:
a simulated host's) has virtual ports: forward() and port_on_host() look them
up there, as SshHost does.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ._shell import check_argv, check_env
from .base import Host
from .errors import PortNotListening, RemoteFileNotFound
from .port_map import PORT_MAP_VARIABLE, read_entry
from .results import CommandResult

# After a kill, how long to wait for the pipes to close. A process that left
# the group (its own setsid) may hold them open: we stop waiting for it.
_DRAIN_AFTER_KILL_S = 2.0


def _drain(pipe: io.BufferedIOBase, into: bytearray) -> None:
    """`pipe`: a Popen's stdout or stderr, buffered (Popen's default bufsize), so read1 returns what is there."""
    for chunk in iter(lambda: pipe.read1(65536), b""):
        into.extend(chunk)


def _exit_code(returncode: int) -> int:
    # The shell's convention, which remote hosts report too: 128+N for signal N.
    return 128 - returncode if returncode < 0 else returncode


class LocalHost(Host):
    def __init__(
        self, spec: str = "local", *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None
    ) -> None:
        """`env`: variables every command gets on top of this process's environment (a command's own
        `env` still wins); `cwd`: where commands start and relative paths resolve (default: here)."""
        self.spec = spec
        self._base_env: dict[str, str] = check_env(env)
        self._base_cwd: Path | None = None if cwd is None else Path(cwd).expanduser()

    # Sim hosts change these two: the world's environment and home.
    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return {**os.environ, **self._base_env, **check_env(env)}

    def _path(self, path: str) -> Path:
        home = self._base_env.get("HOME")
        if home is not None and (path == "~" or path.startswith("~/")):
            p = Path(home + path[1:])
        else:
            p = Path(path).expanduser()
        return self._base_cwd / p if self._base_cwd is not None and not p.is_absolute() else p

    def _cwd(self, cwd: str | None) -> str | None:
        if cwd is None:
            return None if self._base_cwd is None else str(self._base_cwd)
        return str(self._path(cwd))

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
        words = check_argv(argv)
        started = time.monotonic()

        def result(exit_code: int | None, out: bytes, err: bytes, timed_out: bool = False) -> CommandResult:
            return CommandResult(
                argv=words,
                exit_code=exit_code,
                stdout=out.decode("utf-8", "replace"),
                stderr=err.decode("utf-8", "replace"),
                duration_s=time.monotonic() - started,
                timed_out=timed_out,
                host=self.spec,
            )

        run_cwd = self._cwd(cwd)
        try:
            proc = subprocess.Popen(
                words,
                cwd=run_cwd,
                env=self._environment(env),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            # What a shell would say, so callers see the same thing on every host.
            if run_cwd is not None and exc.filename == run_cwd:
                return result(1, b"", f"cd: {run_cwd}: No such file or directory\n".encode())
            return result(127, b"", f"{words[0]}: command not found\n".encode())
        except PermissionError:
            return result(126, b"", f"{words[0]}: Permission denied\n".encode())

        out, err = bytearray(), bytearray()
        readers = [
            threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
            threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
        ]
        for reader in readers:
            reader.start()
        if stdin is not None:
            threading.Thread(target=self._feed, args=(proc.stdin, stdin.encode()), daemon=True).start()

        deadline = started + timeout
        timed_out = False
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            # The command is done when its output ends too (like a remote channel).
            for reader in readers:
                reader.join(max(0.0, deadline - time.monotonic()))
            timed_out = any(r.is_alive() for r in readers)
        except subprocess.TimeoutExpired:
            timed_out = True
        if timed_out:
            self._kill_group(proc.pid)
            proc.wait()
            for reader in readers:
                reader.join(_DRAIN_AFTER_KILL_S)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None and not any(r.is_alive() for r in readers):
                pipe.close()
        if timed_out:
            return result(None, bytes(out), bytes(err), timed_out=True)
        return result(_exit_code(proc.returncode), bytes(out), bytes(err))

    @staticmethod
    def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
        if pipe is None:
            return
        try:
            pipe.write(data)
        except BrokenPipeError:
            pass  # the command stopped reading: its exit status tells the story
        finally:
            try:
                pipe.close()
            except BrokenPipeError:
                pass

    @staticmethod
    def _kill_group(pgid: int) -> None:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    # -- files ------------------------------------------------------------------------------

    def read_file(self, path: str) -> bytes:
        real = self._path(path)
        try:
            return real.read_bytes()
        except FileNotFoundError:
            raise RemoteFileNotFound(f"{real} does not exist on {self.spec}", host=self.spec, path=str(real)) from None

    def write_file(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        real = self._path(path)
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if mode is not None:
                os.chmod(tmp, mode)
            elif real.exists():
                os.chmod(tmp, real.stat().st_mode & 0o7777)
            else:
                # mkstemp makes 0600; a new file gets what the umask allows, as with open().
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, real)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def exists(self, path: str) -> bool:
        return self._path(path).exists()

    def clock(self) -> float:
        # This machine's clock, unless commands run with a PATH of their own, whose `date` tells the time.
        return super().clock() if "PATH" in self._base_env else time.time()

    def sleep(self, seconds: float) -> None:
        # This machine's wait, unless commands run with a PATH of their own, whose `sleep` waits on their clock.
        if "PATH" in self._base_env:
            super().sleep(seconds)
        else:
            time.sleep(max(seconds, 0.0))

    # -- ports ------------------------------------------------------------------------------

    def port_map_dir(self) -> str:
        return self._environment(None).get(PORT_MAP_VARIABLE, "")

    def _listening_port(self, port: int) -> int:
        """The real loopback port that serves `port` on this host: the port itself, or what its port map says."""
        map_dir = self.port_map_dir()
        if not map_dir:
            return port
        entry = read_entry(map_dir, port)
        if entry is None or entry.real_port is None:
            raise PortNotListening(
                f"nothing listens on port {port} of {self.spec}: is the server up? check its log",
                host=self.spec,
                port=port,
            )
        return entry.real_port

    def port_on_host(self, port: int) -> int:
        try:
            return self._listening_port(port)
        except PortNotListening:
            return port

    @contextmanager
    def forward(self, port: int) -> Iterator[tuple[str, int]]:
        real_port = self._listening_port(port)
        try:
            socket.create_connection(("127.0.0.1", real_port), timeout=2).close()
        except OSError as exc:
            raise PortNotListening(
                f"nothing accepts connections on port {port} of {self.spec} ({exc.strerror or exc}): "
                "is the server up? check its log",
                host=self.spec,
                port=port,
            ) from None
        yield ("127.0.0.1", real_port)

    def close(self) -> None:
        """Nothing to release: every command is its own subprocess."""
