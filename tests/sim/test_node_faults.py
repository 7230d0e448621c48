"""Cluster faults that strike mid-job (sim/serving/node_faults.py) on a real two-node cluster (h100x16-2node), each
node reached over real SSH and through `sim:`; and crash_under_load's `times` (a transient crash).

Each node test starts its own cluster (a node fault strikes once per world), launches tp16 over both nodes as a
tool would (the host's python, detached), and runs three requests at once: rank 0 tells node 1 to strike at two.
What is asserted is what a tool would read: each rank's log, the node over SSH and `sim:`, its commands. Waits are
generous because process start-up is this machine's business; nothing is timed.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from specops.sim.faults import CrashUnderLoad
from specops.sim.host.gpu.devices import host_gpus
from specops.sim.world.cluster import SimCluster
from specops.sim.world.hardware import BOOT_ID
from specops.sim.world.ports import resolve_port
from specops.sim.world.processes import pid_alive
from specops.tools.hosts import ConnectionDropped, DetachedProcess, Host, HostError, HostUnreachable, open_host

from ..tools.sshd import require_sshd
from .serving_world import build_world, free_port, launch_args, start_server, stop_server, wait_ready

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]  # two nodes loading and serving, beside other simulations

CLUSTER = "h100x16-2node"
MODEL = "/data/models/Kimi-K2.6"
STRIKE = "node=1,at_running=2"
PORT = 30000
START_S = 120  # process start-up on a loaded machine, not the simulator's time
READY = "The server is fired up and ready to roll!"
SIGQUIT = "Received sigquit from a child process. It usually means the child failed."
REMOTE_ERROR = (
    "Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a "
    "network error, NCCL version "
)
NCCL_REMOTE = "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."
TERMINATE = "terminate called after throwing an instance of 'c10::DistBackendError'"


@dataclass
class Running:
    cluster: SimCluster
    sim: list[Host]  # each node through `sim:`
    ssh: list[Host]  # each node over SSH, connected before the fault
    ranks: list[DetachedProcess]

    def log(self, node: int) -> str:
        """The rank's log as it is on the node's disk (read beside the host: a node that is down answers nothing)."""
        return (self.cluster.worlds[node].layout.home / f"rank{node}.log").read_text()


def _launch(host: Host, node: int, dist_port: int) -> DetachedProcess:
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, "--tp", "16", "--trust-remote-code"]
    argv += ["--nnodes", "2", "--node-rank", str(node), "--dist-init-addr", f"127.0.0.1:{dist_port}"]
    argv += ["--port", str(PORT), "--dist-timeout", "6000"]
    return host.start_detached(argv, log_path=f"/root/rank{node}.log")


def _wait_log(running: Running, node: int, text: str, timeout: float = START_S) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = running.log(node)
        if text in log:
            return log
        time.sleep(0.1)
    raise AssertionError(f"no {text!r} in rank {node}'s log in {timeout}s:\n{running.log(node)[-3000:]}")


@contextmanager
def _serving(fault: str) -> Iterator[Running]:
    """The cluster with `fault`, tp16 up over both nodes (rank 0 ready, rank 1 following)."""
    require_sshd()
    with ExitStack() as stack:
        cluster = stack.enter_context(
            SimCluster.start(CLUSTER, faults=[fault], time_scale=2.0, load_time_scale=100.0, ssh=True)
        )
        sim = [stack.enter_context(open_host(w.host_spec)) for w in cluster.worlds]
        ssh = []
        for w in cluster.worlds:
            assert w.ssh is not None
            ssh.append(stack.enter_context(open_host(w.ssh.url, **w.ssh.options(connect_attempts=2))))
        dist_port = free_port()
        running = Running(cluster, sim, ssh, [_launch(sim[i], i, dist_port) for i in range(2)])
        _wait_log(running, 0, READY)
        _wait_log(running, 1, "Dummy health check server started")
        yield running  # the cluster's close stops whatever still runs on its nodes


def _load(running: Running) -> None:
    """Three long requests at once on rank 0 (the fault strikes at two): each ends when the server dies."""
    base = f"http://127.0.0.1:{resolve_port(running.cluster.worlds[0].layout, PORT)}"

    async def one(session: aiohttp.ClientSession, i: int) -> None:
        body = {"text": f"Write a long story {i}", "sampling_params": {"max_new_tokens": 30000, "ignore_eos": True}}
        async with session.post(f"{base}/generate", json=body) as response:
            await response.read()

    async def together() -> list[BaseException | None]:
        timeout = aiohttp.ClientTimeout(total=START_S)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            return await asyncio.gather(*(one(session, i) for i in range(3)), return_exceptions=True)

    results = asyncio.run(together())
    assert all(isinstance(r, aiohttp.ClientError) for r in results), results


def _rank_zero_names_node_1(running: Running, last_error: str) -> str:
    log = _wait_log(running, 0, SIGQUIT)
    assert "[rank0]:[E" in log and REMOTE_ERROR in log and NCCL_REMOTE in log and TERMINATE in log
    assert f"Last error:\n{last_error}" in log
    return log


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 30
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_node_dies_kills_its_processes_silently_drops_ssh_and_rank_0_names_it() -> None:
    with _serving(f"node_dies:{STRIKE}") as running:
        bystander = running.sim[1].start_detached(["sleep", "infinity"], log_path="/root/sleep.log")
        _load(running)
        log0 = _rank_zero_names_node_1(running, "socketProgress: Connection closed by remote peer 127.0.0.1<")
        assert re.search(r"Connection closed by remote peer 127\.0\.0\.1<\d+> \(node_rank 1, ranks 8-15\)", log0)
        log1 = running.log(1)
        assert SIGQUIT not in log1 and "Traceback" not in log1 and "NCCL" not in log1  # no last words
        assert _gone(running.ranks[1].pid) and _gone(bystander.pid)  # every process of the node, SIGKILLed
        with pytest.raises(ConnectionDropped):  # the connection made before: dropped, and no new one answered
            running.ssh[1].run(["true"], timeout=20)
        ssh = running.cluster.worlds[1].ssh
        assert ssh is not None
        with pytest.raises(HostUnreachable, match="Unable to connect to port"):  # refused
            open_host(ssh.url, **ssh.options(connect_attempts=1)).run(["true"], timeout=20)
        with pytest.raises(HostUnreachable, match="powered off"):
            running.sim[1].run(["true"], timeout=20)
        with pytest.raises(HostUnreachable):
            running.sim[1].read_file("/root/rank1.log")
        assert running.ssh[0].run(["true"], timeout=20).ok  # rank 0's node is up


def test_node_reboots_comes_back_at_its_address_with_a_new_boot_id_and_no_server() -> None:
    with _serving(f"node_reboots:down_s=4,{STRIKE}") as running:
        boot_before = running.ssh[1].read_file(BOOT_ID)
        running.ssh[1].write_file("/root/kept.txt", b"as it was\n")
        _load(running)
        _rank_zero_names_node_1(running, "socketProgress: Connection closed by remote peer 127.0.0.1<")
        assert SIGQUIT not in running.log(1)
        assert _gone(running.ranks[1].pid)
        ssh = running.cluster.worlds[1].ssh
        assert ssh is not None
        deadline = time.monotonic() + 90
        while True:  # back after 4 of its seconds, however busy this machine is
            try:
                with open_host(ssh.url, **ssh.options(connect_attempts=1)) as host:
                    boot_after = host.read_file(BOOT_ID)
                    kept = host.read_file("/root/kept.txt")
                break
            except HostError:
                assert time.monotonic() < deadline, "the node never came back"
                time.sleep(0.2)
        assert boot_after != boot_before  # rebooted: a new boot id
        assert kept == b"as it was\n"  # its files as they were, its sshd on the same port with the same key
        assert running.sim[1].read_file(BOOT_ID) == boot_after  # and `sim:` answers again
        assert not _listening(running, 1)  # no SGLang came back with it


def _listening(running: Running, node: int) -> bool:
    try:
        resolve_port(running.cluster.worlds[node].layout, PORT)
    except Exception:
        return False
    return True


def test_network_partition_both_sides_report_the_ib_error_naming_the_other_and_stay_reachable() -> None:
    with _serving(f"network_partition:{STRIKE}") as running:
        _load(running)
        ib = (
            r"NET/IB : Got completion from peer 127\.0\.0\.1<\d+> with status=12 opcode=0 len=0 vendor err 129 "
            r"\(Recv\) localGid ::ffff:127\.0\.0\.1 remoteGids::ffff:127\.0\.0\.1 hca mlx5_0 "
        )
        log0 = _rank_zero_names_node_1(running, "NET/IB : Got completion from peer 127.0.0.1<")
        assert re.search(ib + r"\(node_rank 1, ranks 8-15\)", log0)
        log1 = _wait_log(running, 1, SIGQUIT)
        assert "[rank8]:[E" in log1 and REMOTE_ERROR in log1 and NCCL_REMOTE in log1 and TERMINATE in log1
        assert re.search(r"Last error:\n" + ib + r"\(node_rank 0, ranks 0-7\)", log1)
        assert "socketProgress" not in log0 + log1
        for hosts in (running.ssh, running.sim):  # both nodes up and answering
            assert [h.run(["true"], timeout=20).ok for h in hosts] == [True, True]


def test_gpu_lost_logs_xid_79_fails_nvidia_smi_on_it_and_the_next_launch_on_it() -> None:
    with _serving(f"gpu_lost:gpu=3,{STRIKE}") as running:
        _load(running)
        _rank_zero_names_node_1(running, "socketProgress: Connection closed by remote peer 127.0.0.1<")
        log1 = _wait_log(running, 1, SIGQUIT)
        assert "Scheduler hit an exception: Traceback (most recent call last):" in log1
        assert (
            "RuntimeError: CUDA error: unspecified launch failure\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        ) in log1
        bus = host_gpus(running.cluster.worlds[1].state.profile, [])[3].bus_id[4:]  # 0000:XX:00.0, as NVML says
        node = running.ssh[1]
        kernel = node.run(["dmesg"], timeout=20)
        assert kernel.ok
        xid = (
            re.escape(f"NVRM: Xid (PCI:{bus.lower()[:-2]}): 79, pid=")
            + r"\d+"
            + re.escape(", name=python3, GPU has fallen off the bus.")
        )
        assert re.search(r"^\[ *\d+\.\d{6}\] " + xid + "$", kernel.stdout, re.M), kernel.stdout
        assert f"] NVRM: GPU {bus.lower()}: GPU has fallen off the bus.\n" in kernel.stdout
        assert "NVRM: Xid" in node.run(["dmesg", "-T"], timeout=20).stdout
        lost = f"Unable to determine the device handle for GPU {bus}: Unknown Error"
        query = node.run(["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"], timeout=20)
        assert query.exit_code == 15 and lost in query.stdout
        assert [line.split(",")[0] for line in query.stdout.splitlines()[1:]] == ["0", "1", "2", "4", "5", "6", "7"]
        listing = node.run(["nvidia-smi", "-L"], timeout=20)
        assert listing.exit_code == 15 and lost in listing.stdout and "GPU 3:" not in listing.stdout
        table = node.run(["nvidia-smi"], timeout=20)
        assert table.exit_code == 15 and lost in table.stdout
        assert running.ssh[0].run(["nvidia-smi", "-L"], timeout=20).exit_code == 0  # node 0's GPUs are fine
        again = node.run(["sh", "-c", f"{_line(1)} 2>&1"], timeout=START_S)
        assert again.exit_code != 0
        assert "torch.AcceleratorError: CUDA error: unspecified launch failure" in again.stdout


def _line(node: int) -> str:
    return (
        f"python3 -m sglang.launch_server --model-path {MODEL} --tp 16 --trust-remote-code --nnodes 2 "
        f"--node-rank {node} --dist-init-addr 127.0.0.1:{free_port()} --port {PORT}"
    )


async def _generate(base: str, prompt: str, max_new_tokens: int) -> dict:
    body = {"text": prompt, "sampling_params": {"max_new_tokens": max_new_tokens, "ignore_eos": True}}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        async with session.post(f"{base}/generate", json=body) as response:
            return (await response.json())["meta_info"]


def test_crash_under_load_with_times_crashes_the_first_server_only(tmp_path: Path) -> None:
    layout = build_world(tmp_path / "w", faults=[CrashUnderLoad(at_running=4, times=1)])
    args = launch_args(layout, "--ep", "4", "--port", "30000", "--watchdog-timeout", "30", dflash=True)

    async def four_at_once(base: str, tokens: int) -> list:
        return await asyncio.gather(
            *(_generate(base, f"Write a poem {i}", tokens) for i in range(4)), return_exceptions=True
        )

    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    first = start_server(layout, args, first_log)
    try:
        wait_ready(first, first_log, timeout=START_S)
        results = asyncio.run(four_at_once(f"http://127.0.0.1:{resolve_port(layout, 30000)}", 4000))
        assert all(isinstance(r, Exception) for r in results)
        assert first.wait(timeout=60) != 0
        assert "Watchdog caught collective operation timeout" in first_log.read_text()
    finally:
        stop_server(first)
    second = start_server(layout, args, second_log)  # a fresh server at the same load: the crash was transient
    try:
        wait_ready(second, second_log, timeout=START_S)
        results = asyncio.run(four_at_once(f"http://127.0.0.1:{resolve_port(layout, 30000)}", 64))
        assert [r["completion_tokens"] for r in results] == [64] * 4, results
        assert second.poll() is None and "Watchdog" not in second_log.read_text()
    finally:
        stop_server(second)
