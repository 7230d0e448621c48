"""The local host: real subprocesses, process groups, files and a real TCP server."""

from __future__ import annotations

import os
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from specops.tools.hosts import CommandFailed, LocalHost, PortNotListening, RemoteFileNotFound, open_host

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def host() -> Iterator[LocalHost]:
    with open_host("local") as h:
        assert isinstance(h, LocalHost)
        yield h


def test_run_reports_exit_code_and_both_streams(host):
    result = host.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.ok and not result.timed_out and result.host == "local"
    with pytest.raises(CommandFailed, match="exited 3: err"):
        result.check()


def test_arguments_are_passed_literally_with_cwd_env_and_stdin(host, tmp_path):
    tricky = ["a b", "$(touch pwned)", "x;y", "'q'"]
    result = host.run(["printf", "%s\\n", *tricky], timeout=10, cwd=str(tmp_path))
    assert result.stdout.splitlines() == tricky
    assert not (tmp_path / "pwned").exists()
    result = host.run(
        ["sh", "-c", 'pwd; echo "$GREETING"; cat'],
        timeout=10,
        cwd=str(tmp_path),
        env={"GREETING": "hi there"},
        stdin="from stdin",
    )
    assert result.stdout == f"{tmp_path}\nhi there\nfrom stdin"


def test_missing_program_and_signals_read_like_a_shell(host):
    assert host.run(["no-such-program-xyz"], timeout=10).exit_code == 127
    assert host.run(["sh", "-c", "kill -TERM $$"], timeout=10).exit_code == 128 + 15


def test_timeout_kills_the_whole_tree_and_keeps_partial_output(host, tmp_path):
    marker = tmp_path / "late"
    script = f"(sleep 0.8; touch {marker}) & echo started; echo oops >&2; sleep 30"
    result = host.run(["sh", "-c", script], timeout=0.5)
    assert result.timed_out and result.exit_code is None
    assert (result.stdout, result.stderr) == ("started\n", "oops\n")
    assert 0.5 <= result.duration_s < 3
    time.sleep(1.0)
    assert not marker.exists(), "the background child outlived the timeout"


def test_detached_process_outlives_its_host_and_stops(tmp_path):
    log = tmp_path / "logs" / "ticker.log"
    with LocalHost() as first:
        proc = first.start_detached(
            ["sh", "-c", "echo ready; while :; do echo tick; sleep 0.1; done"], log_path=str(log), cwd=str(tmp_path)
        )
    with LocalHost() as second:
        assert second.is_running(proc)
        deadline = time.monotonic() + 5
        while "tick" not in second.tail(str(log), lines=3) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert second.tail(str(log), lines=100).splitlines()[0] == "ready"
        second.stop(proc, grace_s=2)
        assert not second.is_running(proc)


def test_stop_kills_a_group_that_ignores_term(host, tmp_path):
    proc = host.start_detached(
        ["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"], log_path=str(tmp_path / "stubborn.log")
    )
    assert host.is_running(proc)
    started = time.monotonic()
    host.stop(proc, grace_s=0.5)
    assert not host.is_running(proc)
    assert time.monotonic() - started < 4


def test_tail_of_a_missing_log_is_a_typed_error(host, tmp_path):
    with pytest.raises(RemoteFileNotFound):
        host.tail(str(tmp_path / "nope.log"))


def test_files_round_trip_with_mode_and_missing_file(host, tmp_path):
    path = tmp_path / "a" / "b" / "c.bin"
    host.write_file(str(path), b"\x00\x01data", mode=0o640)
    assert host.read_file(str(path)) == b"\x00\x01data"
    assert host.exists(str(path)) and (path.stat().st_mode & 0o777) == 0o640
    host.write_file(str(path), b"again")
    assert path.read_bytes() == b"again" and (path.stat().st_mode & 0o777) == 0o640, "rewrite keeps the mode"
    assert list(path.parent.iterdir()) == [path], "no temporary file left behind"
    with pytest.raises(RemoteFileNotFound) as missing:
        host.read_file(str(tmp_path / "missing"))
    assert isinstance(missing.value, FileNotFoundError)
    assert not host.exists(str(tmp_path / "missing"))


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(b"echo:" + self.request.recv(100))


def test_forward_reaches_a_local_server_and_refuses_a_closed_port(host):
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        try:
            with host.forward(port) as address:
                with socket.create_connection(address, timeout=5) as conn:
                    conn.sendall(b"ping")
                    assert conn.recv(100) == b"echo:ping"
        finally:
            server.shutdown()
    with pytest.raises(PortNotListening, match=f"port {port}"):
        with host.forward(port):
            pass


def test_a_given_environment_and_directory_are_what_commands_and_paths_see(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    with LocalHost(env={"HOME": str(home), "MARK": "given"}, cwd=work) as host:
        result = host.run(
            ["sh", "-c", 'pwd; echo "$HOME $MARK $EXTRA"'], timeout=10, env={"EXTRA": "added", "MARK": "call"}
        )
        assert result.stdout == f"{work}\n{home} call added\n", "the call's env wins over the host's"
        host.write_file("~/notes/a.txt", b"in the home")
        host.write_file("rel.txt", b"in the directory")
        assert (home / "notes" / "a.txt").read_bytes() == b"in the home"
        assert (work / "rel.txt").read_bytes() == b"in the directory"
        assert host.exists("rel.txt") and host.read_file("~/notes/a.txt") == b"in the home"
        assert host.run(["cat", "rel.txt"], timeout=10).stdout == "in the directory"
        assert host.run(["pwd"], timeout=10, cwd="~/notes").stdout == f"{home / 'notes'}\n"
        with pytest.raises(ValueError, match="not a shell identifier"):
            LocalHost(env={"BAD NAME": "x"})


def test_an_environment_with_a_port_map_maps_its_ports_through_it(tmp_path):
    from specops.sim.world.layout import WorldLayout
    from specops.sim.world.ports import PortEntry, write_entry

    layout = WorldLayout(tmp_path / "world")
    host = LocalHost(env={"SPECOPS_PORT_MAP": str(layout.ports_dir)})  # as a simulated world's environment has
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        real = server.server_address[1]
        try:
            write_entry(layout, 30000, PortEntry(pid=os.getpid(), real_port=real, owner="test"))
            assert host.port_on_host(30000) == real
            with host.forward(30000) as address:
                assert address == ("127.0.0.1", real)
                with socket.create_connection(address, timeout=5) as conn:
                    conn.sendall(b"ping")
                    assert conn.recv(100) == b"echo:ping"
        finally:
            server.shutdown()
    # A port no process of the world holds is not listening, whatever this machine has on that number.
    assert host.port_on_host(30001) == 30001
    with pytest.raises(PortNotListening, match="nothing listens on port 30001 of local"):
        with host.forward(30001):
            pass
