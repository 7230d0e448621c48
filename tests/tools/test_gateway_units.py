"""The gateway's pure parts: its command line, what its log and its /workers say, GPUs, handles, per-GPU figures.

Log lines and bodies are sglang-router 0.3.2's own, colour codes included (captured from runs of it).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from specops.tools.context import ToolContext
from specops.tools.errors import ErrorKind
from specops.tools.gateway import (
    GatewayArgs,
    GatewayFailed,
    GatewayNotInstalled,
    GatewayWorker,
    RunningGateway,
    gateway_handles,
    per_gpu,
    start_gateway,
)
from specops.tools.gateway.command import router_argv
from specops.tools.gateway.router_log import exit_line, plain, worker_failures
from specops.tools.gateway.workers import all_healthy, listed_workers
from specops.tools.handles import RunHandles, UnknownHandle
from specops.tools.hosts import LocalHost

ESC = "\x1b"
STEP_FAILED = (
    f"{ESC}[2m2026-12-04 02:44:32{ESC}[0m {ESC}[33m WARN{ESC}[0m {ESC}[2msmg::workflow::event{ESC}[0m{ESC}[2m:{ESC}[0m "
    "src/workflow/event.rs:233: Step failed instance_id=cd41 step_id=detect_connection_mode "
    'error="Step failed: detect_connection_mode - Both HTTP and gRPC health checks failed for http://127.0.0.1:18999: '
    "HTTP: Health check failed: error sending request for url (http://127.0.0.1:18999/health), gRPC: gRPC failed "
    '(tried SGLang and vLLM): gRPC connection failed: transport error" will_retry=true'
)
FAILED_JOB = (
    f"{ESC}[2m2026-12-04 02:44:36{ESC}[0m {ESC}[33m WARN{ESC}[0m smg::core::job_queue: src/core/job_queue.rs:809: "
    "Failed job: type=AddWorker, worker=http://127.0.0.1:18999, error=Workflow failed at step detect_connection_mode: "
    "Step failed: detect_connection_mode - Both HTTP and gRPC health checks failed for http://127.0.0.1:18999: HTTP: "
    "Health check failed"
)
PORT_TAKEN = """\
Error starting router: Address already in use (os error 98)
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/sglang_router/router.py", line 319, in start
    self._router.start()
RuntimeError: Address already in use (os error 98)
"""
WORKERS = {
    "workers": [
        {
            "id": "d065",
            "url": "http://127.0.0.1:42533",
            "model_id": "/data/models/Qwen3-32B",
            "worker_type": "regular",
            "is_healthy": True,
            "metadata": {"tp_size": "2", "dp_size": "1"},
        },
        {"id": "d9db", "url": "http://127.0.0.1:42015/", "model_id": "/data/models/Qwen3-32B", "is_healthy": False},
        {"id": "other", "url": "http://10.0.0.9:30000", "is_healthy": True},
    ],
    "total": 3,
    "stats": {"prefill_count": 0, "decode_count": 0, "regular_count": 3},
}


def test_the_router_binds_loopback_only_with_its_workers_last_and_its_waits_bounded():
    argv = router_argv(
        python="python3",
        worker_urls=["http://127.0.0.1:1", "http://127.0.0.1:2"],
        port=30100,
        metrics_port=30101,
        policy="round_robin",
        startup_timeout_s=2.5,
    )
    assert argv[:3] == ["python3", "-m", "sglang_router.launch_router"]
    flags = dict(zip(argv[3:-3:2], argv[4:-2:2], strict=True))
    assert flags == {
        "--host": "127.0.0.1",
        "--port": "30100",
        "--prometheus-host": "127.0.0.1",
        "--prometheus-port": "30101",
        "--policy": "round_robin",
        "--worker-startup-timeout-secs": "3",
        "--worker-startup-check-interval": "1",
        "--shutdown-grace-period-secs": "10",
        "--log-level": "warn",
    }
    assert argv[-3:] == ["--worker-urls", "http://127.0.0.1:1", "http://127.0.0.1:2"]


def test_the_log_names_the_worker_the_router_retries_then_the_one_it_gave_up_on():
    retrying = worker_failures(STEP_FAILED)
    assert list(retrying) == ["http://127.0.0.1:18999"]
    failure = retrying["http://127.0.0.1:18999"]
    assert not failure.final and failure.line.startswith("Step failed: detect_connection_mode - Both HTTP and gRPC")
    given_up = worker_failures("\n".join([STEP_FAILED, FAILED_JOB, STEP_FAILED]))["http://127.0.0.1:18999"]
    assert given_up.final and given_up.line.startswith("Failed job: type=AddWorker, worker=http://127.0.0.1:18999,")
    assert ESC not in given_up.line and ESC not in plain(STEP_FAILED)


def test_why_the_router_exited_is_its_launchers_last_error_line():
    assert exit_line(PORT_TAKEN) == "RuntimeError: Address already in use (os error 98)"
    panic = (
        'pyo3_runtime.PanicException: failed to install Prometheus metrics exporter: FailedToCreateHTTPListener("x")'
    )
    assert exit_line(f"{STEP_FAILED}\nTraceback (most recent call last):\n{panic}\n") == panic
    assert exit_line(STEP_FAILED) is None


def test_only_our_workers_are_read_from_the_routers_list_and_ready_means_all_of_them_healthy():
    ours = [GatewayWorker(url="http://127.0.0.1:42533", gpus=2), GatewayWorker(url="http://127.0.0.1:42015", gpus=4)]
    states = listed_workers(WORKERS, ours)
    assert [(s.url, s.healthy, s.model, s.gpus) for s in states] == [
        ("http://127.0.0.1:42533", True, "/data/models/Qwen3-32B", 2),
        ("http://127.0.0.1:42015", False, "/data/models/Qwen3-32B", 4),
    ]
    assert not all_healthy(states, ours) and all_healthy(states, ours[:1]) and not all_healthy(None, ours)
    assert listed_workers({"workers": [], "total": 0}, ours) == [] and listed_workers("OK", ours) == []


def test_per_gpu_divides_the_total_by_every_gpu_behind_the_gateway():
    replicas = [
        GatewayWorker(url="http://127.0.0.1:30000", gpus=2),
        GatewayWorker(url="http://127.0.0.1:30001", gpus=2),
    ]
    assert per_gpu(1000.0, replicas) == 250.0
    assert per_gpu(1000.0, [GatewayWorker(url="http://127.0.0.1:30000", gpus=8)]) == 125.0

    @dataclass
    class Holder:
        gpus: int

    with pytest.raises(ValueError, match="no GPUs"):
        per_gpu(1000.0, [Holder(0)])
    with pytest.raises(ValueError, match="no GPUs"):
        per_gpu(1000.0, [])


@pytest.mark.parametrize(
    "url",
    ["127.0.0.1:30000", "http://127.0.0.1", "http://h:1/generate", "http://u:p@h:1", "http://h:1;rm -rf", "ftp://h:1"],
)
def test_a_worker_url_is_scheme_host_and_port_only(url):
    with pytest.raises(ValidationError):
        GatewayWorker(url=url, gpus=1)


def test_worker_urls_that_are_fine():
    for url in ("http://127.0.0.1:30000", "https://gpu-2.lan:8443", "http://[::1]:30000"):
        assert GatewayWorker(url=url, gpus=1).url == url


def test_the_metrics_port_defaults_to_the_next_port():
    worker = GatewayWorker(url="http://127.0.0.1:30000", gpus=1)
    assert GatewayArgs(workers=[worker], port=8000).router_metrics_port == 8001
    assert GatewayArgs(workers=[worker], port=8000, metrics_port=9000).router_metrics_port == 9000
    with pytest.raises(ValidationError):
        GatewayArgs(workers=[])


def _gateway(pid: int) -> RunningGateway:
    return RunningGateway(
        host="sim:/x",
        pid=pid,
        pgid=pid,
        started_at=datetime.now(UTC),
        argv=["python3"],
        log_path="/x.log",
        port=30100,
        metrics_port=30101,
        bound_port=30100,
        bound_metrics_port=30101,
        policy="cache_aware",
        version="0.3.2",
        workers=[],
        ready_after_s=0.5,
    )


def _ctx(handles: RunHandles) -> ToolContext:
    return ToolContext(host=None, home="/root", allowed_roots=("/root",), handles=handles)  # type: ignore[arg-type]


def test_each_run_numbers_its_own_gateways_and_an_unknown_id_names_those_it_has():
    run, other = RunHandles(), RunHandles()
    gateways = gateway_handles(_ctx(run))
    assert gateway_handles(_ctx(run)) is gateways and gateway_handles(_ctx(other)) is not gateways
    assert [gateways.add(_gateway(pid)).id for pid in (10, 11)] == ["g1", "g2"]
    assert gateway_handles(_ctx(other)).add(_gateway(12)).id == "g1"
    gateways.mark_stopped("g1")
    assert [g.id for g in gateways.running()] == ["g2"] and gateways.get("g1").pid == 10
    with pytest.raises(UnknownHandle, match="its gateways: g1, g2"):
        gateways.get("g3")


def test_a_worker_given_twice_is_refused_before_anything_runs():
    worker = GatewayWorker(url="http://127.0.0.1:30000", gpus=1)
    same = GatewayWorker(url="http://127.0.0.1:30000", gpus=2)
    with pytest.raises(GatewayFailed) as failed:
        start_gateway(_ctx(RunHandles()), GatewayArgs(workers=[worker, same]))  # no host: nothing may run
    assert failed.value.kind == ErrorKind.GATEWAY_FAILED and failed.value.details["cause"] == "invalid_workers"


def test_an_interpreter_without_the_router_is_gateway_not_installed_and_nothing_starts(tmp_path):
    ctx = ToolContext(host=LocalHost(), home=str(tmp_path), allowed_roots=(str(tmp_path),))
    worker = GatewayWorker(url="http://127.0.0.1:30000", gpus=1)
    with pytest.raises(GatewayNotInstalled) as failed:
        start_gateway(ctx, GatewayArgs(workers=[worker], python="/nonexistent/python3"))
    assert failed.value.kind == ErrorKind.GATEWAY_NOT_INSTALLED and "pip install sglang-router" in failed.value.remedy
    assert "command not found" in failed.value.what and not list(tmp_path.iterdir())  # not even a log
