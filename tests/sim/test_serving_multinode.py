"""One server over two simulated nodes (--nnodes 2), and --base-gpu-id on one: SGLang 0.5.23's multi-node launch.

Each test builds two sim worlds (one per node) and runs `python -m sglang.launch_server` in each as a real process;
the rendezvous is a real TCP connection on loopback at a free port (sim/serving/multinode.py). Waits are generous
because process start-up is this machine's business; what is asserted is what the simulator computes.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.sim.faults import OldSglang
from specops.sim.host.commands import ROOT_VARIABLE
from specops.sim.host.commands.nvidia_smi import run as nvidia_smi
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import Profile
from specops.sim.world.layout import WorldLayout
from specops.sim.world.ports import resolve_port

from .serving_world import build_world, launch_args, run_launch, start_server, stop_server, wait_ready

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

START_S = 90  # a process's start-up on a loaded test machine, not the simulator's time
LONG_TIMEOUT = "6000"  # modelled seconds: 60 s of wall time at the worlds' load time scale (100)
PORT = 30000  # each node's own --port (virtual: the worlds are separate hosts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_args(layout: WorldLayout, rank: int, dist_port: int, *extra: str) -> list[str]:
    flags = ["--tp", "16", "--nnodes", "2", "--node-rank", str(rank), "--dist-init-addr", f"127.0.0.1:{dist_port}"]
    return launch_args(layout, *flags, "--port", str(PORT), *extra)


def wait_for(text: str, log: Path, proc: subprocess.Popen, timeout: float = START_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return
        if proc.poll() is not None:
            raise AssertionError(f"exited {proc.returncode} before {text!r}:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"no {text!r} in {timeout}s:\n{log.read_text()[-3000:]}")


def status(url: str, body: dict | None = None) -> int:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def nodes(tmp_path: Path) -> tuple[WorldLayout, WorldLayout]:
    return build_world(tmp_path / "node0"), build_world(tmp_path / "node1")


@pytest.fixture
def two_nodes(nodes, tmp_path: Path) -> Iterator[tuple[subprocess.Popen, subprocess.Popen, Path, Path]]:
    """Rank 0 and rank 1 started together and up (rank 0 ready, rank 1 serving its health check)."""
    dist_port = free_port()
    logs = tmp_path / "rank0.log", tmp_path / "rank1.log"
    procs = [
        start_server(layout, node_args(layout, rank, dist_port, "--dist-timeout", LONG_TIMEOUT), logs[rank])
        for rank, layout in enumerate(nodes)
    ]
    try:
        wait_ready(procs[0], logs[0], timeout=START_S)
        wait_for("Dummy health check server started", logs[1], procs[1])
        yield procs[0], procs[1], logs[0], logs[1]
    finally:
        for proc in procs:
            stop_server(proc)


def test_rank_0_serves_the_api_and_rank_1_only_the_health_check(nodes, two_nodes) -> None:
    rank0, rank1, log0, log1 = two_nodes
    base0 = f"http://127.0.0.1:{resolve_port(nodes[0], PORT)}"
    body = {"model": "default", "prompt": "The capital city of France is", "max_tokens": 8, "temperature": 0}
    with urllib.request.urlopen(
        urllib.request.Request(
            f"{base0}/v1/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        ),
        timeout=30,
    ) as response:
        assert response.status == 200
        assert json.loads(response.read())["usage"]["completion_tokens"] == 8

    base1 = f"http://127.0.0.1:{resolve_port(nodes[1], PORT)}"
    assert [status(f"{base1}{path}") for path in ("/health", "/health_generate", "/ping")] == [200, 200, 200]
    assert status(f"{base1}/v1/models") == 404
    assert status(f"{base1}/v1/completions", body) in (404, 405)

    zero, one = log0.read_text(), log1.read_text()
    assert "All 2 nodes joined the torch.distributed rendezvous at 127.0.0.1:" in zero
    assert "node_rank 1 joined the rendezvous (ranks 8-15, SGLang 0.5.23)." in zero
    assert "TP8] Joined the torch.distributed rendezvous at 127.0.0.1:" in one
    assert "as node_rank 1 (ranks 8-15)." in one
    assert "The server is fired up" not in one and "Uvicorn running" not in one


def test_each_node_holds_its_share_on_its_own_gpus(nodes, two_nodes, monkeypatch, capsys) -> None:
    monkeypatch.setenv(ROOT_VARIABLE, str(nodes[1].root))
    assert nvidia_smi(["--query-gpu=memory.used", "--format=csv,noheader,nounits"]) == 0
    used = [int(line) for line in capsys.readouterr().out.split()]
    assert len(used) == 8 and min(used) > 30 * 1024  # 553.8 GiB of weights over 16 ranks, on all 8 GPUs
    assert "Load weight end. type=KimiK25ForConditionalGeneration, dtype=torch.bfloat16, avail mem=60.48 GB, " in (
        two_nodes[3].read_text()
    )


def test_sigterm_on_rank_1_only_warns_and_stopping_rank_0_ends_both(two_nodes) -> None:
    rank0, rank1, _, log1 = two_nodes
    rank1.send_signal(signal.SIGTERM)
    wait_for("SIGTERM received on node_rank 1; waiting for the rank-0 ShutdownReq broadcast", log1, rank1)
    assert rank1.poll() is None
    assert stop_server(rank0) == 0
    assert rank1.wait(timeout=30) == 0
    assert log1.read_text().count("terminated with 0") == 8  # its eight schedulers


def test_a_rank_dying_after_ready_takes_rank_0_down(two_nodes) -> None:
    rank0, rank1, log0, _ = two_nodes
    rank1.kill()
    assert rank0.wait(timeout=30) != 0
    text = log0.read_text()
    assert "NCCL error: remote process exited or there was a network error" in text
    assert (
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
        in text
    )
    assert "(node_rank 1, ranks 8-15)" in text
    assert "Received sigquit from a child process. It usually means the child failed." in text


def test_a_missing_rank_fails_rank_0_after_the_dist_timeout(nodes) -> None:
    done = run_launch(nodes[0], node_args(nodes[0], 0, free_port(), "--dist-timeout", "60"), timeout=START_S)
    assert done.returncode == 1
    assert (
        "torch.distributed.DistStoreError: Timed out after 61 seconds waiting for clients. 8/16 clients joined."
        in done.stderr
    )
    assert "Load weight begin" not in done.stderr  # it never got past the rendezvous


def test_a_rank_that_cannot_reach_rank_0_times_out_as_torch_client(nodes) -> None:
    port = free_port()
    done = run_launch(nodes[1], node_args(nodes[1], 1, port, "--dist-timeout", "60"), timeout=START_S)
    assert done.returncode == 1
    assert (
        "torch.distributed.DistNetworkError: The client socket has timed out after 60000ms while trying to connect "
        f"to (127.0.0.1, {port})." in done.stderr
    )


def test_a_node_of_another_sglang_release_is_refused(tmp_path: Path) -> None:
    node0 = build_world(tmp_path / "node0")
    node1 = build_world(tmp_path / "node1", faults=[OldSglang(version="0.5.11")])
    dist_port = free_port()
    log0 = tmp_path / "rank0.log"
    rank0 = start_server(node0, node_args(node0, 0, dist_port, "--dist-timeout", LONG_TIMEOUT), log0)
    try:
        wait_for("Init torch distributed begin.", log0, rank0)
        done = run_launch(node1, node_args(node1, 1, dist_port, "--dist-timeout", LONG_TIMEOUT), timeout=START_S)
        refusal = (
            "RuntimeError: SGLang version mismatch across nodes: node_rank 1 runs 0.5.11, node_rank 0 runs 0.5.23."
        )
        assert done.returncode == 1 and refusal in done.stderr
        wait_for(refusal, log0, rank0)
        assert rank0.poll() is None  # still waiting for a node that can join
    finally:
        stop_server(rank0)


def light_profile() -> Profile:
    """seed-ct200 with a target light enough for four of its GPUs (120 GiB of weights)."""
    profile = load_profile("seed-ct200")
    target = profile.serving.target.model_copy(update={"weights_gib": 120.0})
    return profile.model_copy(update={"serving": profile.serving.model_copy(update={"target": target})})


def test_base_gpu_id_places_a_server_on_the_last_gpus(tmp_path: Path, monkeypatch, capsys) -> None:
    layout = build_world(tmp_path / "host", profile=light_profile())
    log = tmp_path / "server.log"
    proc = start_server(layout, launch_args(layout, "--tp", "4", "--base-gpu-id", "4"), log)
    try:
        wait_ready(proc, log, timeout=START_S)
        monkeypatch.setenv(ROOT_VARIABLE, str(layout.root))
        assert nvidia_smi(["--query-gpu=memory.used", "--format=csv,noheader,nounits"]) == 0
        used = [int(line) for line in capsys.readouterr().out.split()]
        assert used[:4] == [0, 0, 0, 0] and min(used[4:]) > 0
    finally:
        stop_server(proc)


def test_gpus_past_the_last_one_are_an_invalid_device_ordinal(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "host")
    done = run_launch(layout, launch_args(layout, "--tp", "4", "--base-gpu-id", "6"), timeout=START_S)
    assert done.returncode == 1
    assert "torch.AcceleratorError: CUDA error: invalid device ordinal" in done.stderr
    assert "set_device(get_device().gpu_id)" in done.stderr


def test_tp_16_on_one_node_of_8_gpus_fails_the_same_way(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "host")
    done = run_launch(layout, launch_args(layout, "--tp", "16"), timeout=START_S)
    assert done.returncode == 1
    assert "torch.AcceleratorError: CUDA error: invalid device ordinal" in done.stderr


def test_tp_not_divisible_by_the_nodes_is_refused(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "host")
    done = run_launch(layout, launch_args(layout, "--nnodes", "3"), timeout=START_S)
    assert done.returncode == 1
    assert "AssertionError: tp_size must be divisible by number of nodes" in done.stderr
