"""The sim host: a world.json written here (no host builder needed), real commands, a real port registry."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from specops.sim.host.sim_host import SimHost
from specops.sim.profiles import load_profile
from specops.sim.world.layout import WorldLayout
from specops.sim.world.ports import PortEntry, write_entry
from specops.sim.world.state import WorldState
from specops.tools.hosts import HostNotRunning, PortNotListening, open_host

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


@pytest.fixture
def world(tmp_path: Path) -> WorldState:
    layout = WorldLayout(tmp_path / "host")
    layout.home.mkdir(parents=True)
    layout.bin_dir.mkdir(parents=True)
    smi = layout.bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'simulated nvidia-smi'\n")
    smi.chmod(0o755)
    state = WorldState(
        root=str(layout.root),
        profile=load_profile("seed-ct200"),
        hub_url="http://127.0.0.1:9",
        python=sys.executable,
        real_hf="hf",
        created_at=datetime.now(UTC),
        mounts=[],
        env={"PATH": f"{layout.bin_dir}:{os.environ['PATH']}", "HOME": str(layout.home), "SIM_MARK": "from-world"},
    )
    state.save()
    return state


@pytest.fixture
def host(world: WorldState) -> Iterator[SimHost]:
    with open_host(f"sim:{world.root}") as h:
        assert isinstance(h, SimHost)
        yield h


def test_commands_run_with_the_world_environment_and_home(host, world):
    result = host.run(["sh", "-c", 'pwd; echo "$SIM_MARK $EXTRA"; nvidia-smi'], timeout=10, env={"EXTRA": "added"})
    assert result.stdout == "/root\nfrom-world added\nsimulated nvidia-smi\n"  # the host's home, as it names it
    assert host.run(["nvidia-smi"], timeout=10).stdout == "simulated nvidia-smi\n", "PATH from world.json finds it"
    assert host.spec == f"sim:{world.root}"
    sub = world.layout.home / "work"
    sub.mkdir()
    assert host.run(["pwd"], timeout=10, cwd="work").stdout == "/root/work\n"
    assert host.run(["pwd"], timeout=10, cwd="/root/work").stdout == "/root/work\n"


def test_paths_are_the_hosts_relative_ones_under_its_home(host, world, tmp_path):
    host.write_file("notes/a.txt", b"in home")
    assert (world.layout.home / "notes" / "a.txt").read_bytes() == b"in home"
    assert host.read_file("notes/a.txt") == b"in home" and host.exists("~/notes/a.txt")
    assert host.read_file("/root/notes/a.txt") == b"in home"
    # A text file names host paths inside the host and out; the file on this machine names the real ones.
    host.write_file("/root/notes/where.txt", b"model at /root/models/x\n")
    assert (world.layout.home / "notes" / "where.txt").read_text() == f"model at {world.layout.home}/models/x\n"
    assert host.read_file("~/notes/where.txt") == b"model at /root/models/x\n"
    assert host.run(["cat", "/root/notes/where.txt"], timeout=10).stdout == "model at /root/models/x\n"
    # What the host does not own is this machine's, as a container's host shares /tmp.
    outside = tmp_path / "real.txt"
    host.write_file(str(outside), b"real")
    assert outside.read_bytes() == b"real"


def test_detached_processes_run_in_the_world(host, world):
    before = host.clock()
    proc = host.start_detached(["sh", "-c", 'echo "$SIM_MARK"; pwd; exec sleep 30'], log_path="logs/server.log")
    after = host.clock()
    # Started at a moment of the host's clock (what a start-up is timed from), between the two readings.
    assert proc.started_on_host is not None and before <= proc.started_on_host <= after
    try:
        log = world.layout.home / "logs" / "server.log"
        assert host.is_running(proc)
        deadline = 50
        while log.read_text().count("\n") < 2 and deadline:
            deadline -= 1
            threading.Event().wait(0.05)
        assert host.tail("logs/server.log") == "from-world\n/root\n"
    finally:
        host.stop(proc, grace_s=2)
    assert not host.is_running(proc)


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"served on the real port"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_forward_resolves_the_port_registry_to_the_real_port(host, world):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        real_port = server.server_address[1]
        write_entry(
            world.layout, 30000, PortEntry(pid=os.getpid(), real_port=real_port, owner="test", command="test server")
        )
        with host.forward(30000) as (address, port):
            assert port == real_port
            assert urllib.request.urlopen(f"http://{address}:{port}/", timeout=5).read() == b"served on the real port"
        with pytest.raises(PortNotListening, match="port 30001"):
            with host.forward(30001):
                pass
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(PortNotListening, match="port 30000"):
        with host.forward(30000):
            pass  # the entry's process is alive but nothing listens on its real port any more


def test_a_stale_registry_entry_does_not_count(host, world):
    gone = subprocess.Popen(["true"])
    gone.wait()
    write_entry(world.layout, 30002, PortEntry(pid=gone.pid, real_port=1, owner="dead", command="true"))
    with pytest.raises(PortNotListening):
        with host.forward(30002):
            pass


def test_sim_specs_that_name_no_running_world(tmp_path):
    with pytest.raises(HostNotRunning, match="specops sim up seed-ct200"):
        open_host("sim:seed-ct200")
    with pytest.raises(HostNotRunning, match="no simulated world"):
        open_host(f"sim:{tmp_path}")
