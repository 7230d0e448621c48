"""The forced command of a sim host's sshd: puts every SSH session on the sim host.

sshd runs `python -m specops.sim.host.ssh_session ROOT SFTP_SERVER` for each
session, with the client's command in SSH_ORIGINAL_COMMAND. This wrapper gives
the session the host's environment and home, applies the `ssh_drop` fault (the
connection dies under the client, as a flaky link does), then becomes the
client's command, the sftp server, or a login shell.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
from pathlib import Path

from ..world.layout import WorldLayout


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


def _ssh_drop_fault(state: dict) -> dict | None:
    return next((f for f in state.get("faults", []) if f.get("name") == "ssh_drop"), None)


def main(argv: list[str]) -> int:
    root, sftp_server = Path(argv[0]), argv[1]
    layout = WorldLayout(root)
    # Plain json, not the pydantic WorldState: every SSH command pays this start-up.
    state = json.loads(layout.state_file.read_text())
    os.environ.update(state["env"])
    os.chdir(layout.home)
    command = os.environ.pop("SSH_ORIGINAL_COMMAND", "")
    if command == sftp_server:
        os.execv(sftp_server, [sftp_server])
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
        os.execv(shell, [shell, "-c", command])
    os.execv(shell, ["-sh"])
    return 0  # not reached: execv replaced the process


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
