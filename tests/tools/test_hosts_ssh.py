"""The SSH host against a real OpenSSH sshd on loopback (tests/tools/sshd.py).

The server runs on this machine, so the tests look at its processes and files
directly to check what happened "remotely".
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.tools.hosts import (
    ConnectionDropped,
    HostAuthFailed,
    HostKeyMismatch,
    HostKeyUnknown,
    HostUnreachable,
    PortNotListening,
    RemoteFileNotFound,
    open_host,
)
from specops.tools.hosts.ssh import SshHost

from .sshd import SshServer, free_port, keygen, sshd  # noqa: F401  (sshd is a fixture)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def host(sshd: SshServer) -> Iterator[SshHost]:
    with open_host(sshd.url, **sshd.options()) as h:
        assert isinstance(h, SshHost)
        yield h


def processes_matching(text: str) -> list[str]:
    """Command lines of live processes containing `text` (this machine is the 'remote' side)."""
    out = subprocess.run(["ps", "-A", "-o", "stat=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if text in line and not line.lstrip().startswith("Z")]


def wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# -- commands ----------------------------------------------------------------------------------


def test_run_reports_exit_code_streams_and_quotes_every_argument(host, tmp_path):
    result = host.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (result.exit_code, result.stdout, result.stderr, result.timed_out) == (3, "out\n", "err\n", False)
    tricky = ["a b", f"$(touch {tmp_path}/pwned)", "x;y", "'q'", '"dq"', "*"]
    result = host.run(["printf", "%s\\n", *tricky], timeout=10)
    assert result.stdout.splitlines() == tricky
    assert not (tmp_path / "pwned").exists()


def test_run_with_cwd_env_and_stdin(host, tmp_path):
    result = host.run(
        ["sh", "-c", 'pwd; echo "$GREETING"; cat'],
        timeout=10,
        cwd=str(tmp_path),
        env={"GREETING": "a 'b' $c"},
        stdin="in",
    )
    assert result.stdout == f"{tmp_path}\na 'b' $c\nin"
    assert host.run(["no-such-program-xyz"], timeout=10).exit_code == 127
    assert host.run(["sh", "-c", "kill -TERM $$"], timeout=10).exit_code == 128 + 15
    with pytest.raises(ValueError):
        host.run(["true"], timeout=10, env={"BAD NAME": "x"})


def test_timeout_kills_the_remote_process_tree_and_keeps_partial_output(host, tmp_path):
    marker, tag = tmp_path / "late", f"{time.time() % 1000 + 31:.3f}"
    script = f"(sleep 1.5; touch {marker}) & echo started; sleep {tag}"
    result = host.run(["sh", "-c", script], timeout=0.5)
    assert result.timed_out and result.exit_code is None
    assert result.stdout == "started\n" and result.stderr == ""
    assert wait_for(lambda: not processes_matching(f"sleep {tag}"), 3), "the remote command survived its timeout"
    time.sleep(max(0.0, 1.7 - result.duration_s))
    assert not marker.exists(), "a child of the remote command survived its timeout"


# -- files -------------------------------------------------------------------------------------


def test_files_over_sftp(host, tmp_path):
    path = tmp_path / "deep" / "er" / "f.bin"
    data = os.urandom(300_000)
    host.write_file(str(path), data, mode=0o600)
    assert path.read_bytes() == data and (path.stat().st_mode & 0o777) == 0o600
    assert host.read_file(str(path)) == data and host.exists(str(path))
    host.write_file(str(path), b"small")
    assert host.read_file(str(path)) == b"small" and (path.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["f.bin"]
    assert not host.exists(str(tmp_path / "missing"))
    with pytest.raises(RemoteFileNotFound) as missing:
        host.read_file(str(tmp_path / "missing"))
    assert isinstance(missing.value, FileNotFoundError) and missing.value.path == str(tmp_path / "missing")


# -- detached processes and ports --------------------------------------------------------------


def test_detached_process_survives_the_connection_closing(sshd, tmp_path):
    log = tmp_path / "logs" / "ticker.log"
    with open_host(sshd.url, **sshd.options()) as first:
        proc = first.start_detached(
            ["sh", "-c", "echo ready; while :; do echo tick; sleep 0.1; done"], log_path=str(log)
        )
    ticks_at_close = log.read_text().count("tick")
    with open_host(sshd.url, **sshd.options()) as second:
        assert second.is_running(proc)
        assert wait_for(lambda: log.read_text().count("tick") > ticks_at_close + 2), "it stopped with the connection"
        assert second.tail(str(log), lines=1000).splitlines()[0] == "ready"
        second.stop(proc, grace_s=2)
        assert not second.is_running(proc)
        with pytest.raises(RemoteFileNotFound):
            second.tail(str(tmp_path / "never.log"))


def test_forward_reaches_an_http_server_on_the_host(host, tmp_path):
    (tmp_path / "hello.txt").write_text("hello over ssh")
    port = free_port()
    server = host.start_detached(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)],
        log_path=str(tmp_path / "http.log"),
    )
    try:
        assert wait_for(lambda: _listening(port), 10), host.tail(server.log_path)
        with host.forward(port) as (address, local_port):
            assert local_port != port
            urls = [f"http://{address}:{local_port}/hello.txt"] * 4
            bodies: list[bytes] = []
            threads = [
                threading.Thread(target=lambda u=u: bodies.append(urllib.request.urlopen(u, timeout=10).read()))
                for u in urls
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(15)
            assert bodies == [b"hello over ssh"] * 4
    finally:
        host.stop(server, grace_s=2)
    with pytest.raises(PortNotListening, match=str(port)):
        with host.forward(port):
            pass


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


# -- connecting --------------------------------------------------------------------------------


def test_unknown_host_key_is_refused_unless_accepted_then_recorded(sshd, tmp_path):
    known = tmp_path / "ssh" / "known_hosts"
    with pytest.raises(HostKeyUnknown, match="accept_unknown_host_key=True") as refused:
        open_host(sshd.url, **sshd.options(known_hosts=str(known)))
    assert refused.value.fingerprint.startswith("SHA256:") and not known.exists()
    with open_host(sshd.url, **sshd.options(known_hosts=str(known), accept_unknown_host_key=True)) as h:
        assert h.run(["true"], timeout=10).ok
    assert known.read_text() == sshd.known_hosts_line
    with open_host(sshd.url, **sshd.options(known_hosts=str(known))) as h:
        assert h.run(["true"], timeout=10).ok


def test_changed_host_key_is_refused(sshd, tmp_path):
    other = keygen(tmp_path / "other_host_key").with_suffix(".pub").read_text().split()
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} {other[0]} {other[1]}\n")
    with pytest.raises(HostKeyMismatch, match="ssh-keygen -R"):
        open_host(sshd.url, **sshd.options(known_hosts=str(known), accept_unknown_host_key=True))


def test_wrong_key_is_an_auth_failure(sshd, tmp_path):
    stranger = keygen(tmp_path / "stranger")
    with pytest.raises(HostAuthFailed, match="authorized_keys"):
        open_host(sshd.url, **sshd.options(key_filename=str(stranger)))


def test_nothing_listening_is_unreachable_at_once(sshd):
    started = time.monotonic()
    with pytest.raises(HostUnreachable, match="Check the address and port"):
        open_host(f"ssh://root@127.0.0.1:{free_port()}", **sshd.options())
    assert time.monotonic() - started < 2


def test_inventory_and_ssh_config_names_reach_the_server(sshd, tmp_path):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(
        f"gpu-a:\n  url: {sshd.url}\n  key_filename: {sshd.client_key}\n  known_hosts: {sshd.known_hosts}\n"
        "  allow_agent: false\n  look_for_keys: false\n"
    )
    with open_host("gpu-a", inventory=inventory) as h:
        assert h.spec == "gpu-a" and h.run(["true"], timeout=10).ok
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host gpu-b\n  HostName 127.0.0.1\n  User {sshd.user}\n  Port {sshd.port}\n  IdentityFile {sshd.client_key}\n"
    )
    with open_host(
        "gpu-b", ssh_config=config, known_hosts=str(sshd.known_hosts), allow_agent=False, look_for_keys=False
    ) as h:
        assert h.run(["true"], timeout=10).ok


# -- dropped connections -----------------------------------------------------------------------


def _drop_when(path: Path, sshd: SshServer) -> threading.Thread:
    def drop() -> None:
        if wait_for(path.exists, 10):
            sshd.drop_connections()

    thread = threading.Thread(target=drop, daemon=True)
    thread.start()
    return thread


def test_a_drop_mid_command_raises_kills_the_command_and_reconnects(sshd, tmp_path):
    tag = f"{time.time() % 1000 + 41:.3f}"
    started, finished = tmp_path / "started", tmp_path / "finished"
    with open_host(sshd.url, **sshd.options()) as h:
        dropper = _drop_when(started, sshd)
        with pytest.raises(ConnectionDropped, match="idempotent=True") as dropped:
            h.run(["sh", "-c", f"echo begun; touch {started}; sleep {tag}; touch {finished}"], timeout=20)
        dropper.join(5)
        assert dropped.value.may_have_run
        assert dropped.value.partial is not None and dropped.value.partial.stdout == "begun\n"
        assert not processes_matching(f"sleep {tag}"), "the interrupted command was left running"
        assert not finished.exists()
        # The host reconnected: it serves the next command.
        assert h.run(["echo", "back"], timeout=10).stdout == "back\n"


def test_a_drop_mid_command_reruns_an_idempotent_command(sshd, tmp_path):
    tag = f"{time.time() % 1000 + 51:.3f}"
    runs, started = tmp_path / "runs", tmp_path / "started"
    # The first run blocks until the drop; the re-run finds one line in `runs` and finishes.
    script = f"echo run >> {runs}; if [ $(wc -l < {runs}) -eq 1 ]; then touch {started}; sleep {tag}; fi; echo done"
    with open_host(sshd.url, **sshd.options()) as h:
        dropper = _drop_when(started, sshd)
        result = h.run(["sh", "-c", script], timeout=20, idempotent=True)
        dropper.join(5)
    assert result.ok and result.stdout == "done\n"
    assert runs.read_text() == "run\nrun\n"
    assert not processes_matching(f"sleep {tag}")


def test_an_idle_drop_is_repaired_before_the_next_command_and_file_operation(sshd, tmp_path):
    (tmp_path / "f").write_bytes(b"kept")
    with open_host(sshd.url, **sshd.options()) as h:
        assert h.read_file(str(tmp_path / "f")) == b"kept"
        assert sshd.drop_connections()
        assert h.run(["echo", "ok"], timeout=10).stdout == "ok\n"
        assert sshd.drop_connections()
        assert h.read_file(str(tmp_path / "f")) == b"kept"


# -- keepalive and connect timeouts ------------------------------------------------------------


def test_keepalive_is_set_on_the_transport_and_sent_while_idle(sshd, caplog):
    with open_host(sshd.url, **sshd.options()) as default:
        transport = default._transport()  # noqa: SLF001 -- the live paramiko transport under the host
        # paramiko keeps the interval on the packetizer only (no public getter).
        assert transport.packetizer._Packetizer__keepalive_interval == 15 == default.options.keepalive_s  # noqa: SLF001
    caplog.set_level(logging.DEBUG, logger="paramiko.transport")
    with open_host(sshd.url, **sshd.options(keepalive_s=1)) as host:
        transport = host._transport()  # noqa: SLF001
        assert transport.packetizer._Packetizer__keepalive_interval == 1  # noqa: SLF001
        caplog.clear()
        time.sleep(2.5)  # idle: the transport itself must speak up
        sent = [r for r in caplog.records if 'Sending global request "keepalive@lag.net"' in r.getMessage()]
        assert len(sent) >= 1, [r.getMessage() for r in caplog.records]
        assert transport.is_active() and host.run(["true"], timeout=10).ok


@pytest.fixture
def silent_listener() -> Iterator[tuple[socket.socket, int]]:
    """A port that takes one TCP connection into its backlog and never accepts it nor says a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    try:
        yield listener, listener.getsockname()[1]
    finally:
        listener.close()


def test_a_server_that_never_sends_the_banner_is_unreachable_within_the_timeout(sshd, silent_listener):
    _, port = silent_listener
    started = time.monotonic()
    with pytest.raises(HostUnreachable, match=f"cannot reach SSH on .*:{port}"):
        open_host(f"ssh://root@127.0.0.1:{port}", **sshd.options(connect_timeout_s=1, auth_timeout_s=1))
    assert 0.9 < time.monotonic() - started < 5, "the banner timeout, not a hang and not at once"


def test_a_blackholed_port_is_unreachable_within_the_connect_timeout(sshd, silent_listener):
    _, port = silent_listener
    # The backlog holds one connection: with it taken, the kernel drops further SYNs, as a firewall that
    # blackholes the port does, so TCP's connect itself never completes.
    first = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        started = time.monotonic()
        with pytest.raises(HostUnreachable, match=r"connect timeout 1\.5 s"):
            open_host(f"ssh://root@127.0.0.1:{port}", **sshd.options(connect_timeout_s=1.5, auth_timeout_s=30))
        assert 1.4 < time.monotonic() - started < 5
    finally:
        first.close()
