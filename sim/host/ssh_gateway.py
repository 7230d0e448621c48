"""A real OpenSSH sshd on loopback: a host that SSH clients reach for real.

`running_sshd(directory)` starts `sshd -D -e -f <config>` on a free loopback
port with its own host key, client key and known_hosts, as the current user
(root in CI). Given a simulated world, every session on it runs through
`ssh_session` (a forced command), so an SSH client lands on the sim host: its
environment, its home, its faults (`ssh_drop`). The SSH host tests use it
bare; `specops sim up --ssh` uses it with a world.
"""

from __future__ import annotations

import getpass
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..world.clock import hold_line
from ..world.layout import WorldLayout

SSHD = Path("/usr/sbin/sshd")
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
SFTP_SERVER = next(
    (
        p
        for p in ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server")
        if Path(p).is_file()
    ),
    "/usr/lib/openssh/sftp-server",
)
_START_TIMEOUT_S = 10.0


class SshdMissing(RuntimeError):
    """OpenSSH's server is not installed on this machine."""


def sshd_available() -> bool:
    return SSHD.is_file() and Path(SSH_KEYGEN).is_file()


def keygen(path: Path) -> Path:
    """A new ed25519 key pair at path (private) and path.pub; returns the private key's path."""
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class SshServer:
    directory: Path
    port: int
    process: subprocess.Popen[bytes]
    client_key: Path
    host_key: Path
    known_hosts: Path
    user: str

    @property
    def url(self) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}"

    @property
    def known_hosts_line(self) -> str:
        key_type, key_b64 = self.host_key.with_suffix(".pub").read_text().split()[:2]
        return f"[127.0.0.1]:{self.port} {key_type} {key_b64}\n"

    def options(self, **overrides: Any) -> dict[str, Any]:
        """Host options that reach this server with the right key and a known_hosts that knows it."""
        return {
            "key_filename": str(self.client_key),
            "known_hosts": str(self.known_hosts),
            "allow_agent": False,
            "look_for_keys": False,
            **overrides,
        }

    def session_pids(self) -> list[int]:
        """The sshd processes serving connections now (children of the listener, and theirs)."""
        return _sshd_descendants(self.process.pid)

    def drop_connections(self) -> list[int]:
        """SIGKILL every sshd process serving a connection: clients see the connection drop.

        The commands those sessions started are left alone (they run in their own
        sessions), so a caller can check who cleans them up.
        """
        pids = self.session_pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return pids


def _sshd_descendants(listener: int) -> list[int]:
    """The sshd processes below the listener `listener` (one per connection, and their privilege-separated ones)."""
    children: dict[int, list[int]] = {}
    comm: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        pid = int(entry.name)
        comm[pid] = name
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(listener, []))
    while todo:
        pid = todo.pop()
        if comm.get(pid, "").startswith("sshd"):
            found.append(pid)
            todo.extend(children.get(pid, []))
    return found


def kill_sshd(directory: Path, world_root: Path | None = None) -> None:
    """SIGKILL the sshd whose files are in `directory` (its pid file), every connection it serves and, given the
    world it serves, the session wrappers of those connections, from any process: a machine that loses power stops
    listening and drops its connections at once (world/hardware.py)."""
    try:
        listener = int((directory / "sshd.pid").read_text().split()[0])
        with open(f"/proc/{listener}/stat") as stat:
            alive = stat.read().split("(", 1)[1].startswith("sshd")  # not a pid file left behind, its number reused
    except (OSError, ValueError, IndexError):
        listener, alive = 0, False
    sessions = _sshd_descendants(listener) if alive else []
    wrappers = _session_wrappers(world_root) if world_root is not None else []
    for pid in [*([listener] if alive else []), *sessions, *wrappers]:  # the listener first: no new connection
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _session_wrappers(world_root: Path) -> list[int]:
    """The forced commands (ssh_session) running for the world at `world_root`, by their command line."""
    wanted = ["-m", "specops.sim.host.ssh_session", str(world_root)]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if argv[1:4] == wanted:
            found.append(int(entry.name))
    return found


def restart_sshd(server: SshServer) -> None:
    """Start the server's sshd again as it was (its config: the same port, host key and client keys), as a machine
    back from a reboot starts its sshd; waits until it listens."""
    if server.process.poll() is None:
        return
    config = server.directory / "sshd_config"
    with open(server.directory / "sshd.log", "ab") as log:
        server.process = subprocess.Popen(
            [str(SSHD), "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT
        )
    _wait_listening(server)


def _wait_listening(server: SshServer) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    log_path = server.directory / "sshd.log"
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"sshd exited {server.process.returncode}: {log_path.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                stop_sshd(server)
                raise RuntimeError(f"sshd did not listen on {server.port}: {log_path.read_text()}") from None
            time.sleep(0.05)


def _config(directory: Path, port: int, host_key: Path, authorized_keys: Path, world_root: Path | None) -> str:
    lines = [
        f"ListenAddress 127.0.0.1:{port}",
        f"HostKey {host_key}",
        f"PidFile {directory / 'sshd.pid'}",
        f"AuthorizedKeysFile {authorized_keys}",
        "StrictModes no",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "UseDNS no",
        "PrintMotd no",
        "AllowTcpForwarding yes",
        "MaxSessions 50",
        "MaxStartups 50",
        "LoginGraceTime 20",
        "LogLevel VERBOSE",
    ]
    if world_root is None:
        lines.append("Subsystem sftp internal-sftp")
    else:
        # A forced command also wraps subsystems; the session wrapper starts this sftp server itself.
        session = shlex.join([sys.executable, "-m", "specops.sim.host.ssh_session", str(world_root), SFTP_SERVER])
        # The session's Python start-up is the simulator's work, not the host's: the world's clock is held from the
        # shell's first line until the session runs the client's command (ssh_session gives the hold back).
        hold = hold_line(str(WorldLayout(world_root).sim_dir))
        lines += [f"Subsystem sftp {SFTP_SERVER}", f"ForceCommand {hold}; exec {session}"]
    return "\n".join(lines + [""])


@contextmanager
def running_sshd(directory: Path, *, world_root: Path | None = None) -> Iterator[SshServer]:
    """An sshd on a free loopback port, stopped (and its sessions dropped) on exit."""
    server = start_sshd(directory, world_root=world_root)
    try:
        yield server
    finally:
        stop_sshd(server)


def start_sshd(directory: Path, *, world_root: Path | None = None) -> SshServer:
    if not sshd_available():
        raise SshdMissing(f"OpenSSH server not installed ({SSHD}, {SSH_KEYGEN}): apt-get install openssh-server")
    directory.mkdir(parents=True, exist_ok=True)
    host_key = keygen(directory / "ssh_host_ed25519_key")
    client_key = keygen(directory / "client_key")
    authorized_keys = directory / "authorized_keys"
    authorized_keys.write_text(client_key.with_suffix(".pub").read_text())
    # sshd refuses to start without its privilege-separation directory; a fresh install may lack it.
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    port = free_port()
    config = directory / "sshd_config"
    config.write_text(_config(directory, port, host_key, authorized_keys, world_root))
    log_path = directory / "sshd.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    server = SshServer(
        directory=directory,
        port=port,
        process=process,
        client_key=client_key,
        host_key=host_key,
        known_hosts=directory / "known_hosts",
        user=getpass.getuser(),
    )
    server.known_hosts.write_text(server.known_hosts_line)
    _wait_listening(server)
    return server


def stop_sshd(server: SshServer) -> None:
    server.drop_connections()
    server.process.terminate()
    try:
        server.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
