"""The real sglang-router (the SGLang Model Gateway, from PyPI) in front of two simulated SGLang servers, over HTTP.

Two Qwen3-32B TP2 replicas on one sim:h200x8-nvlink world (ports 30000 and
30001; the simulator puts both on GPUs 0-1, so their static memory fractions
add up to less than one), the router started by start_gateway on the same host:
it becomes ready only once it lists both workers healthy, a benchmark through
its port reaches both servers, and stopping it leaves nothing running. A worker
URL nothing answers at is gateway_failed naming that worker, with no router left.
"""

from __future__ import annotations

import importlib.util
import socket
import time

import httpx
import pytest

from specops.sim.host.router_start import RouterStart
from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.context import ToolContext
from specops.tools.errors import ErrorKind
from specops.tools.gateway import (
    GatewayArgs,
    GatewayFailed,
    GatewayWorker,
    StopGatewayArgs,
    per_gpu,
    start_gateway,
    stop_gateway,
)
from specops.tools.gateway.command import router_argv
from specops.tools.hosts import PortNotListening
from specops.tools.sglang.server_http import get_text, parse_metrics

from ..needs import missing_package
from .worlds import reach, start_world, wait_until_ready

if importlib.util.find_spec("sglang_router") is None:
    missing_package("sglang-router (a dependency of specops) is not installed")
pytestmark = [pytest.mark.timeout(180), pytest.mark.serial, pytest.mark.slow]

MODEL = "/data/models/Qwen3-32B"
PORTS = (30000, 30001)
# The simulator places every server on GPUs 0..tp-1: the first leaves the second room for its weights and cache.
MEM_FRACTIONS = ("0.3", "0.6")
TP = 2


def launch(host, port: int, mem_fraction: str):
    """A simulated SGLang server (Qwen3-32B, TP2, with /metrics) started by hand, waited for until ready."""
    log = f"logs/sglang-{port}.log"
    server = host.start_detached(
        [
            "python3",
            "-m",
            "sglang.launch_server",
            "--model-path",
            MODEL,
            "--tp",
            str(TP),
            "--mem-fraction-static",
            mem_fraction,
            "--enable-metrics",
            "--port",
            str(port),
        ],
        log_path=log,
    )
    return wait_until_ready(host, server, log, timeout_s=60)


@pytest.fixture(scope="module")
def replicas():
    with start_world("h200x8-nvlink") as world, reach(world, "sim") as host:
        servers = [launch(host, port, fraction) for port, fraction in zip(PORTS, MEM_FRACTIONS, strict=True)]
        try:
            yield host, [GatewayWorker(url=f"http://127.0.0.1:{host.port_on_host(p)}", gpus=TP) for p in PORTS]
        finally:
            for server in servers:
                host.stop(server)


def requests_served(host, port: int) -> float:
    """sglang:num_requests_total of the server on `port`: the requests it finished."""
    return sum(parse_metrics(get_text(host, port, "/metrics")).get("sglang:num_requests_total", []))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int, within_s: float = 30.0) -> None:
    """Wait until a program of this machine's answers HTTP on `port`."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/workers", timeout=1.0)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def alive(host, pid: int) -> bool:
    """Whether `pid` is a live process of the host (a zombie nobody reaped yet is not)."""
    stat = host.run(["ps", "-o", "stat=", "-p", str(pid)], timeout=30).stdout.strip()
    return bool(stat) and not stat.startswith("Z")


def test_the_gateway_lists_both_workers_and_a_benchmark_through_it_reaches_both(replicas):
    host, workers = replicas
    ctx = ToolContext.for_host(host)
    gateway = start_gateway(ctx, GatewayArgs(workers=workers, port=30100, policy="round_robin"))
    try:
        assert gateway.id == "g1" and gateway.version == "0.3.2" and gateway.policy == "round_robin"
        assert [(w.url, w.healthy, w.model) for w in gateway.workers] == [(w.url, True, MODEL) for w in workers]
        assert gateway.gpus == 2 * TP
        assert alive(host, gateway.pid)  # it runs, as a process of the host
        before = [requests_served(host, p) for p in PORTS]
        result = run_benchmark(
            ctx,
            BenchmarkArgs(port=gateway.port, levels=[4], input_len=64, output_len=32, rounds=3, api="sglang"),
        )
        after = [requests_served(host, p) for p in PORTS]
    finally:
        stopped = stop_gateway(ctx, StopGatewayArgs(gateway=gateway.id))
    (level,) = result.levels
    assert result.api == "sglang" and level.requests_completed == 12 and level.requests_failed == 0
    assert level.total_output_tokens == 32 * 12
    # Round robin: the warm-up and the twelve requests split between the two servers.
    served = [a - b for a, b in zip(after, before, strict=True)]
    assert all(n >= 5 for n in served) and sum(served) >= 12, served
    assert per_gpu(level.output_tok_s, gateway.workers) == pytest.approx(level.output_tok_s / 4)
    assert stopped.gateway == "g1" and stopped.was_running and stopped.port_free
    assert not host.is_running(gateway.process) and not alive(host, gateway.pid)
    with pytest.raises(PortNotListening):  # the simulated host's port is free again
        with host.forward(gateway.port):
            pass


def test_a_worker_nothing_answers_at_is_gateway_failed_naming_it_and_no_router_is_left(replicas):
    host, workers = replicas
    ctx = ToolContext.for_host(host)
    dead = GatewayWorker(url="http://127.0.0.1:9", gpus=TP)  # discard: nothing listens on loopback
    with pytest.raises(GatewayFailed) as failed:
        start_gateway(ctx, GatewayArgs(workers=[workers[0], dead], port=30200, ready_timeout_s=3))
    error = failed.value
    assert error.kind == ErrorKind.GATEWAY_FAILED and error.details["cause"] == "worker_unreachable"
    assert error.details["worker"] == dead.url and dead.url in error.what and error.details["stopped"] is True
    assert "health" in error.details["line"].lower()
    assert not alive(host, error.details["pid"])
    with pytest.raises(PortNotListening):
        with host.forward(30200):
            pass


def test_a_port_a_server_holds_is_refused_before_anything_starts(replicas):
    host, workers = replicas
    ctx = ToolContext.for_host(host)
    with pytest.raises(GatewayFailed) as failed:
        start_gateway(ctx, GatewayArgs(workers=workers, port=PORTS[0]))
    assert failed.value.details["cause"] == "port_in_use" and failed.value.details["stopped"] is False


def test_the_host_s_time_stands_while_the_router_registers_its_workers(replicas):
    # sglang-router's start-up is this machine's work (a real program, on this machine's clock), like a server's
    # Python start-up: the host's time stands until it lists its workers (sim/host/router_start.py).
    host, workers = replicas
    dead = "http://127.0.0.1:9"  # nothing answers: the router keeps trying it for its 30 s start-up timeout
    port, metrics_port = free_port(), free_port()  # the router is a program of this machine's, on its loopback
    argv = router_argv(
        python="python3",
        worker_urls=[workers[0].url, dead],
        port=port,
        metrics_port=metrics_port,
        policy="round_robin",
        startup_timeout_s=30,
    )
    assert RouterStart.from_argv(argv[1:]) == RouterStart(
        port=port, workers=(workers[0].url, dead), startup_timeout_s=30
    )
    router = host.start_detached(argv, log_path="logs/router-held.log")
    try:
        answers(port)  # started: its wrapper's hold is in place
        first = host.clock()
        time.sleep(1.0)
        assert host.clock() == first  # held: a second of this machine's time is none of the host's
    finally:
        host.stop(router)
    first = host.clock()
    time.sleep(0.5)
    assert host.clock() > first  # the router gone, the host's time runs on
