"""`specops sim up`: the world as a user starts it, driven through the CLI."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

SPECOPS = [sys.executable, "-m", "specops.cli.main"]


@pytest.fixture
def running_world():
    proc = subprocess.Popen(
        [*SPECOPS, "sim", "up", "seed-ct200", "--fault", "full_disk:free_gib=2", "--time-scale", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        pytest.fail(f"sim up printed nothing: {proc.stderr.read()}")
    try:
        yield proc, json.loads(line)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)


def sim_exec(host: str, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run([*SPECOPS, "sim", "exec", host, "--", *command], capture_output=True, text=True, timeout=60)


@pytest.mark.timeout(120)
def test_sim_up_prints_a_host_that_other_commands_accept(running_world):
    proc, info = running_world
    assert info["hub_url"].startswith("http://127.0.0.1:")
    assert info["faults"] == ["full_disk"]
    root = Path(info["root"])
    assert root.is_dir()
    # The host is named as a host is, not by this machine's scratch path.
    assert info["host"] == "sim:" + root.name.removeprefix("specops-sim-") and "/" not in info["host"]

    smi = sim_exec(info["host"], "nvidia-smi", "--query-gpu=name", "--format=csv,noheader")
    assert smi.returncode == 0, smi.stderr
    assert smi.stdout.splitlines() == ["NVIDIA RTX PRO 6000 Blackwell Server Edition"] * 8

    df = sim_exec(info["host"], "df", "-B1", "--output=size,avail", "/")
    size, avail = map(int, df.stdout.splitlines()[1].split())
    assert size == 1000 * 2**30
    assert avail == 2 * 2**30  # the full_disk fault left 2 GiB

    # The real huggingface_hub client on the host reaches the Hub emulator.
    listing = sim_exec(
        info["host"],
        "python3",
        "-c",
        "from huggingface_hub import HfApi; "
        "info = HfApi().model_info('SubSir/Kimi-K2.6-DFlash-tmp-long', files_metadata=True); "
        "print(sum(s.size for s in info.siblings))",
    )
    assert listing.returncode == 0, listing.stderr
    assert int(listing.stdout) > 8 * 10**9

    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 0
    assert not root.exists(), "a world made in a temporary directory is removed on exit"


def test_sim_up_refuses_an_unknown_profile_and_bad_faults():
    done = subprocess.run([*SPECOPS, "sim", "up", "no-such-host"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "seed-ct200" in done.stderr
    done = subprocess.run(
        [*SPECOPS, "sim", "up", "seed-ct200", "--fault", "melted_gpu"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert "melted_gpu" in done.stderr


def test_sim_exec_refuses_a_host_that_is_not_a_running_world(tmp_path):
    done = sim_exec("sim:seed-ct200", "true")
    assert done.returncode == 2 and "specops sim up seed-ct200" in done.stderr
    done = sim_exec(f"sim:{tmp_path}", "true")
    assert done.returncode == 2 and "not a simulated host" in done.stderr


@pytest.mark.timeout(120)
def test_sim_up_of_a_cluster_profile_starts_every_node_and_prints_their_group():
    proc = subprocess.Popen(
        [*SPECOPS, "sim", "up", "h100x16-2node", "--fault", "full_disk:node=1", "--time-scale", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        info = json.loads(line)
        nodes = info["nodes"]
        assert info["cluster"] == "h100x16-2node" and info["host"] == ",".join(n["host"] for n in nodes)
        assert [n["faults"] for n in nodes] == [[], ["full_disk"]]
        assert sim_exec(nodes[1]["host"], "bash", "-c", "echo $HOSTNAME").stdout.strip() == "h100-b"
        roots = [Path(n["root"]) for n in nodes]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    assert proc.returncode == 0 and not any(r.exists() for r in roots)


def test_sim_up_refuses_a_fault_for_a_node_the_cluster_lacks():
    done = subprocess.run(
        [*SPECOPS, "sim", "up", "h100x16-2node", "--fault", "full_disk:node=7", "--time-scale", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "node 7 is not in the cluster" in done.stderr and len(done.stderr.splitlines()) == 1
