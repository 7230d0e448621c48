"""Test support: `specops ARGS` as a user runs it in a terminal, with stdout piped (`specops run ... > out`).

stderr is a pty of 40x160, so the live view draws there as it would for a user; the pty's buffer is small, so a
thread reads it while the command runs. The command is a job (tests/jobs.py): its own session, ended with all it
started when it returns or times out, the timeout one that only catches a hang.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading

from ..jobs import HANG_S, started_job

SPECOPS = [sys.executable, "-m", "specops.cli.main"]


def run_on_a_terminal(
    args: list[str], env: dict[str, str] | None = None, timeout: float = HANG_S
) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal showed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    terminal: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the command closed its end
                return
            if not chunk:
                return
            terminal.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    try:
        with started_job(
            [*SPECOPS, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env if env is not None else {**os.environ, "TERM": "xterm"},
        ) as process:
            os.close(slave)
            slave = -1
            reader.start()
            stdout, _ = process.communicate(timeout=timeout)
    finally:  # the job has ended (tests/jobs.py), and with it the terminal's other end
        if slave >= 0:
            os.close(slave)
        if reader.is_alive():
            reader.join(10)
        os.close(master)
    return process.returncode, stdout.decode(errors="replace"), b"".join(terminal).decode(errors="replace")
