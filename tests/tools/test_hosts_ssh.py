"""The SSH host against a real OpenSSH sshd on loopback (tests/tools/sshd.py).

The server runs on this machine, so the tests look at its processes and files
directly to check what happened "remotely".
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
import structlog.testing

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

from ..needs import missing
from .sshd import SshServer, free_port, keygen, sshd  # noqa: F401  (sshd is a fixture)

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


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
    with pytest.raises(HostKeyUnknown, match="`accept_unknown_host_key: true`") as refused:
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


# -- ~/.ssh/config: UserKnownHostsFile, StrictHostKeyChecking ---------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of its own (~/.ssh/config, ~/.ssh/known_hosts as ssh reads them), and no inventory."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SPECOPS_INVENTORY", raising=False)
    return home


def _key_only(sshd: SshServer, **more) -> dict:
    """sshd's client key, and nothing said about host keys: ~/.ssh/config and its defaults decide."""
    return {"key_filename": str(sshd.client_key), "allow_agent": False, "look_for_keys": False, **more}


def _other_key_line(sshd: SshServer, tmp_path: Path) -> str:
    other = keygen(tmp_path / "other_host_key").with_suffix(".pub").read_text().split()
    return f"[127.0.0.1]:{sshd.port} {other[0]} {other[1]}\n"


def test_the_unknown_host_error_says_how_to_trust_it_in_one_line_and_following_it_works(sshd, home, tmp_path):
    keyscan = shutil.which("ssh-keyscan")
    if keyscan is None:
        missing(
            "ssh-keyscan (openssh-client) is not installed",
            "run `bash tests/run.sh` as root (it installs openssh-client), or apt-get install openssh-client",
        )
    with pytest.raises(HostKeyUnknown) as refused:
        open_host(sshd.url, **_key_only(sshd))
    message = str(refused.value)
    assert "\n" not in message
    assert f"[127.0.0.1]:{sshd.port} (ssh-ed25519 {refused.value.fingerprint}) is not in ~/.ssh/known_hosts" in message
    assert f"`ssh-keyscan -p {sshd.port} 127.0.0.1 >> ~/.ssh/known_hosts`" in message
    assert "`StrictHostKeyChecking accept-new` under `Host 127.0.0.1` in ~/.ssh/config" in message
    assert f"`accept_unknown_host_key: true` in an entry with `url: {sshd.url}` in the specops inventory" in message
    assert "accept_unknown_host_key=True" not in message  # what a user writes, not a Python argument
    # Doing what it says (as the user's shell would, ~ being HOME) trusts the key.
    with open(home / ".ssh" / "known_hosts", "ab") as known:
        subprocess.run(
            [keyscan, "-p", str(sshd.port), "127.0.0.1"], stdout=known, stderr=subprocess.DEVNULL, check=True
        )
    with open_host(sshd.url, **_key_only(sshd)) as h:
        assert h.run(["true"], timeout=10).ok
    # A host named in the inventory is told by its entry's name, in the file it is in.
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(f"gpu-a:\n  url: {sshd.url}\n  known_hosts: {tmp_path / 'empty_known_hosts'}\n")
    with pytest.raises(HostKeyUnknown) as refused:
        open_host("gpu-a", inventory=inventory, **_key_only(sshd))
    assert "`accept_unknown_host_key: true` in the `gpu-a:` entry of the specops inventory" in str(refused.value)


def test_the_inventory_remedy_works_for_a_host_given_by_its_url(sshd, home, tmp_path):
    """The unknown-key message offers an inventory entry with the URL; written as it says, the URL connects."""
    with pytest.raises(HostKeyUnknown) as refused:
        open_host(sshd.url, **_key_only(sshd))
    assert f"`accept_unknown_host_key: true` in an entry with `url: {sshd.url}`" in str(refused.value)
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(f"gpu-a:\n  url: {sshd.url}\n  accept_unknown_host_key: true\n")
    with open_host(sshd.url, inventory=inventory, **_key_only(sshd)) as h:
        assert h.run(["true"], timeout=10).ok
    assert (home / ".ssh" / "known_hosts").read_text() == sshd.known_hosts_line  # recorded, as accept-new does


def test_accept_new_in_ssh_config_records_a_new_key_then_connects(sshd, home):
    (home / ".ssh" / "config").write_text("Host 127.0.0.1\n  StrictHostKeyChecking accept-new\n")
    with open_host(sshd.url, **_key_only(sshd)) as h:
        assert h.run(["true"], timeout=10).ok
    known = home / ".ssh" / "known_hosts"
    assert known.read_text() == sshd.known_hosts_line and known.stat().st_mode & 0o777 == 0o600
    # Recorded: known now even where unknown keys are refused.
    (home / ".ssh" / "config").write_text("Host 127.0.0.1\n  StrictHostKeyChecking yes\n")
    with open_host(sshd.url, **_key_only(sshd)) as h:
        assert h.run(["true"], timeout=10).ok
    assert known.read_text() == sshd.known_hosts_line
    # The host's own options win over the config: an inventory's `accept_unknown_host_key: false` refuses.
    (home / ".ssh" / "config").write_text("Host 127.0.0.1\n  StrictHostKeyChecking accept-new\n")
    known.unlink()
    with pytest.raises(HostKeyUnknown, match=r"\(accept_unknown_host_key: false\)"):
        open_host(sshd.url, **_key_only(sshd, accept_unknown_host_key=False))
    assert not known.exists()


def test_strict_host_key_checking_yes_refuses_an_unknown_key_and_says_so(sshd, home):
    (home / ".ssh" / "config").write_text("Host 127.0.0.1\n  StrictHostKeyChecking yes\n")
    with pytest.raises(HostKeyUnknown, match=r"\(StrictHostKeyChecking yes in ~/\.ssh/config\)"):
        open_host(sshd.url, **_key_only(sshd))
    assert not (home / ".ssh" / "known_hosts").exists()


@pytest.mark.parametrize("setting", ["accept-new", "no", "off"])
def test_a_changed_key_is_refused_even_with_accept_new_or_no(sshd, home, tmp_path, setting):
    (home / ".ssh" / "config").write_text(f"Host 127.0.0.1\n  StrictHostKeyChecking {setting}\n")
    known = home / ".ssh" / "known_hosts"
    known.write_text(_other_key_line(sshd, tmp_path))
    before = known.read_text()
    with structlog.testing.capture_logs() as logs, pytest.raises(HostKeyMismatch) as refused:
        open_host(sshd.url, **_key_only(sshd))
    message = str(refused.value)
    assert "\n" not in message and f"`ssh-keygen -R '[127.0.0.1]:{sshd.port}' -f ~/.ssh/known_hosts`" in message
    assert known.read_text() == before, "a changed key must never be recorded"
    assert not [e for e in logs if e["event"] == "ssh.host_key_recorded"]
    # `no` would let OpenSSH connect: the refusal says that specops does not.
    assert ("lets specops trust new keys, never changed ones" in message) == (setting != "accept-new")


def test_strict_host_key_checking_no_accepts_a_new_key_with_a_warning(sshd, home):
    (home / ".ssh" / "config").write_text("Host 127.0.0.1\n  StrictHostKeyChecking no\n")
    with structlog.testing.capture_logs() as logs, open_host(sshd.url, **_key_only(sshd)) as h:
        assert h.run(["true"], timeout=10).ok
    assert (home / ".ssh" / "known_hosts").read_text() == sshd.known_hosts_line
    warned = [e for e in logs if e["event"] == "ssh.strict_host_key_checking_no"]
    assert len(warned) == 1 and "taken as accept-new" in warned[0]["note"] and warned[0]["log_level"] == "warning"
    assert [e["file"] for e in logs if e["event"] == "ssh.host_key_recorded"] == [str(home / ".ssh" / "known_hosts")]


def test_user_known_hosts_file_from_ssh_config_is_used(sshd, home, tmp_path):
    elsewhere = tmp_path / "keys dir"
    elsewhere.mkdir()
    (elsewhere / "second").write_text(sshd.known_hosts_line)
    config = home / ".ssh" / "config"
    # Two files, the first missing: the key is found in the second; ~/.ssh/known_hosts is not read.
    config.write_text(f'Host 127.0.0.1\n  UserKnownHostsFile ~/first "{elsewhere / "second"}"\n')
    (home / ".ssh" / "known_hosts").write_text(_other_key_line(sshd, tmp_path))
    with open_host(sshd.url, **_key_only(sshd)) as h:
        assert h.run(["true"], timeout=10).ok
    # Without it, ~/.ssh/known_hosts (a different key) is what counts.
    config.write_text("")
    with pytest.raises(HostKeyMismatch):
        open_host(sshd.url, **_key_only(sshd))
    # A Host alias: looked up by its name; new keys go to the first file, hashed where HashKnownHosts says so.
    config.write_text(
        f"Host gpu-c\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.client_key}\n  UserKnownHostsFile %d/kh-%n-%p ~/unused\n"
        "  StrictHostKeyChecking accept-new\n  HashKnownHosts yes\n"
    )
    with open_host("gpu-c", allow_agent=False, look_for_keys=False) as h:
        assert h.run(["true"], timeout=10).ok
    recorded = (home / f"kh-gpu-c-{sshd.port}").read_text()
    assert recorded.startswith("|1|") and recorded.split()[1:] == sshd.known_hosts_line.split()[1:]
    assert not (home / "unused").exists()
    config.write_text(config.read_text().replace("accept-new", "yes"))
    with open_host("gpu-c", allow_agent=False, look_for_keys=False) as h:  # the hashed entry is found
        assert h.run(["true"], timeout=10).ok


def test_identity_file_from_ssh_config_is_offered_to_an_ssh_url(sshd, home):
    (home / ".ssh" / "config").write_text(f"Host 127.0.0.1\n  IdentityFile {sshd.client_key}\n")
    with open_host(sshd.url, known_hosts=str(sshd.known_hosts), allow_agent=False, look_for_keys=False) as h:
        assert h.run(["true"], timeout=10).ok


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
