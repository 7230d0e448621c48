"""The forced command of a sim host's sshd: puts every SSH session on the sim host.

sshd runs `python -m specops.sim.host.ssh_session ROOT SFTP_SERVER` for each
session, with the client's command in SSH_ORIGINAL_COMMAND, the world's clock
held from the forced command's first line (ssh_gateway.py) until this wrapper
has set the session up and gives the hold back. This wrapper gives
the session the host's environment and home, applies the `ssh_drop` fault (the
connection dies under the client, as a flaky link does), then runs the
client's command, serves sftp, or becomes a login shell. A node that is powered
off (world/hardware.py) drops every connection instead. Commands and files
name host paths: the command line and its stdin are translated in, its output
out (host_paths.py), and sftp is served by sftp_server.py with the same
translation.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn

from ..world import hardware
from ..world.clock import WorldClock
from ..world.layout import WorldLayout
from .host_paths import HostPaths


def _count_session(layout: WorldLayout) -> tuple[int, int]:
    """Count this command session; returns (commands so far, drops so far), under a lock."""
    layout.counters_dir.mkdir(parents=True, exist_ok=True)
    path = layout.counters_dir / "ssh_sessions.json"
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        text = f.read()
        counts = json.loads(text) if text else {"commands": 0, "drops": 0}
        counts["commands"] += 1
        f.seek(0)
        f.truncate()
        f.write(json.dumps(counts))
    return counts["commands"], counts["drops"]


def _record_drop(layout: WorldLayout) -> None:
    path = layout.counters_dir / "ssh_sessions.json"
    with open(path, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        counts = json.loads(f.read())
        counts["drops"] += 1
        f.seek(0)
        f.truncate()
        f.write(json.dumps(counts))


def _ssh_drop_fault(state: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in state.get("faults", []) if f.get("name") == "ssh_drop"), None)


def main(argv: list[str]) -> int:
    root, sftp_server = Path(argv[0]), argv[1]
    layout = WorldLayout(root)
    if hardware.is_down(layout):
        # A node without power answers nothing. Its sshd was killed when it went down (serving/node_faults.py); a
        # connection that still got here (the moment it went) dies with the sshd process that carries it.
        os.kill(os.getppid(), signal.SIGKILL)
        return 255
    # Plain json, not the pydantic WorldState: every SSH command pays this start-up.
    state = json.loads(layout.state_file.read_text())
    os.environ.update(state["env"])
    os.chdir(layout.home)
    command = os.environ.pop("SSH_ORIGINAL_COMMAND", "")
    paths = HostPaths.of_world(root, layout.host_home, [m["mount_point"] for m in state.get("mounts", [])])
    # Set up: from here the session is the host's (its command, its sftp, its shell) and the host's time runs on.
    WorldClock(layout.sim_dir).release()
    if command == sftp_server:
        from .sftp_server import serve  # paramiko: only sftp sessions pay for importing it

        serve(paths)
        return 0
    fault = _ssh_drop_fault(state)
    if fault is not None:
        commands, drops = _count_session(layout)
        if commands > fault["after_commands"] and drops < fault["times"]:
            _record_drop(layout)
            # The session's sshd process carries the connection: killing it drops the link.
            os.kill(os.getppid(), signal.SIGKILL)
            return 255
    shell = "/bin/sh"
    if command:
        _run_translated(shell, command, paths)
    os.execv(shell, ["-sh"])
    return 0  # not reached: execv replaced the process


def _run_translated(shell: str, command: str, paths: HostPaths) -> NoReturn:
    """Run `command` with its host paths made real, its output shown with host paths; exit with its status."""
    child = subprocess.Popen(
        [shell, "-c", paths.inward(command)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    pumps = [
        threading.Thread(target=_pump, args=(sys.stdin.buffer, child.stdin, paths.inward), daemon=True),
        threading.Thread(target=_pump, args=(child.stdout, sys.stdout.buffer, paths.outward), daemon=True),
        threading.Thread(target=_pump, args=(child.stderr, sys.stderr.buffer, paths.outward), daemon=True),
    ]
    for pump in pumps:
        pump.start()
    status = child.wait()
    for pump in pumps[1:]:  # the output ends when every process holding it has (a detached one closes it)
        pump.join()
    # Out now, without the interpreter's shutdown: the stdin pump may still be blocked reading the client's stdin,
    # holding its buffer's lock, and finalizing then aborts ("could not acquire lock for <stdin>", exit 255, seen
    # in 2 of 400 commands). Both outputs are flushed and closed by their pumps.
    os._exit(128 - status if status < 0 else status)


def _pump(source: IO[bytes], sink: IO[bytes], translate: Callable[[str], str]) -> None:
    """Copy line by line (a path is never split between two reads), translating each; close the sink at the end."""
    try:
        for line in iter(source.readline, b""):
            sink.write(translate(line.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape"))
            sink.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        try:
            sink.close()
        except OSError:
            pass


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
