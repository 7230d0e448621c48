"""Replicas behind SGLang's Model Gateway (the `sglang-router` package): start it, benchmark through it, stop it.

    gateway = start_gateway(ctx, GatewayArgs(workers=[worker_for(ctx.host, s) for s in servers], port=30100))
    result = run_benchmark(ctx, BenchmarkArgs(port=gateway.port, levels=[64], api="sglang"))
    per_gpu(result.levels[0].output_tok_s, gateway.workers)   # total tok/s over the workers' GPUs
    stop_gateway(ctx, StopGatewayArgs(gateway=gateway.id))

- models.py: arguments and results (GatewayWorker: a server's URL and GPUs);
- command.py: the router's argv; router_log.py: what its log says; workers.py: its GET /workers;
- host_ports.py: the ports it binds (a simulated host's virtual ports claimed for it);
- launch.py: start_gateway; stop.py: stop_gateway; handles.py: the run's gateways (g1, ...);
- per_gpu.py: throughput per GPU.

What this relies on, checked against sglang-router 0.3.2 from PyPI (the wheel's
`sglang_router/launch_router.py`, `router_args.py`, `python -m
sglang_router.launch_router --help`, and runs of it in front of simulated
SGLang servers in tests/tools/test_gateway_sim.py), and the Model Gateway docs
(https://docs.sglang.io/advanced_features/sgl_model_gateway.html; the endpoint
table of docs/reference/api/extensions.md in github.com/lightseekorg/smg):

- It is a Rust extension (`sglang_router_rs.abi3.so`, CPU only) behind a Python
  launcher: `python -m sglang_router.launch_router --worker-urls URL ... --host H
  --port P --policy {random,round_robin,cache_aware,power_of_two,manual}`
  (default cache_aware); console scripts `smg`/`sglang-router launch` do the same.
  Defaults to beware: --host 0.0.0.0, --port 30000 (SGLang's own default), a
  Prometheus exporter on 0.0.0.0:29000 (--prometheus-host/--prometheus-port),
  --worker-startup-timeout-secs 1800 with a check every 30 s, and 180 s of
  graceful shutdown on TERM (--shutdown-grace-period-secs).
- It serves at once: "Router ready | workers: []" is logged and GET /health and
  /liveness answer 200 "OK" before any worker is registered. Workers are
  registered by a background job (a health check of each, retried with backoff
  within --worker-startup-timeout-secs); meanwhile /readiness is 503 {"status":"not ready","reason":
  "insufficient healthy workers"} and /health_generate 503. So readiness here is
  GET /workers listing every worker with "is_healthy": true (/readiness says
  {"status":"ready","healthy_workers":N,"total_workers":N}). There is no
  /list_workers in 0.3.2 (404).
- A worker that does not answer: a WARN line per failed check, `Step failed ...
  Both HTTP and gRPC health checks failed for <url>: ... will_retry=true`, and
  after the start-up timeout `Failed job: type=AddWorker, worker=<url>,
  error=...`; the router keeps running without it (it does not exit).
- A port taken: the launcher logs `Error starting router: Address already in use
  (os error 98)` and exits 1 with a traceback (`RuntimeError: ...`, or
  `pyo3_runtime.PanicException: failed to install Prometheus metrics exporter:
  ...` for the metrics port).
- Proxied to the workers: POST /generate (input_ids or text), /v1/completions
  and /v1/chat/completions, GET /v1/models and /get_model_info (a worker's),
  POST /flush_cache (every worker: {"workers_flushed": N}). Its own:
  /get_server_info (router facts, not SGLang's server_args), /get_loads,
  /workers. /server_info and /metrics are 404 on its port: its metrics (smg_*
  series: smg_worker_selection_total, smg_worker_health,
  smg_worker_requests_active, ...) are on the Prometheus port.
- Its /v1/completions takes `prompt` as text only: token ids (`[1, 2, 3]` or
  `[[...]]`) are refused with 422 "data did not match any variant of untagged
  enum StringOrArray". So the benchmark drives it with the sglang API (/generate
  with input_ids; `api="auto"` picks it, since /get_server_info answers), finds
  no server_args (version, speculative settings) through it and samples no
  SGLang metrics: read those from each worker.
- It logs with ANSI colours even to a file, at info two lines per request
  (--log-level warn keeps the failures and drops those).
"""

from .errors import GatewayFailed, GatewayNotInstalled
from .handles import GatewayHandles, gateway_handles
from .launch import start_gateway
from .models import (
    GatewayArgs,
    GatewayStopResult,
    GatewayWorker,
    GatewayWorkerState,
    Policy,
    RunningGateway,
    StopGatewayArgs,
)
from .per_gpu import per_gpu
from .stop import stop_gateway
from .workers import worker_for

__all__ = [
    "GatewayArgs",
    "GatewayFailed",
    "GatewayHandles",
    "GatewayNotInstalled",
    "GatewayStopResult",
    "GatewayWorker",
    "GatewayWorkerState",
    "Policy",
    "RunningGateway",
    "StopGatewayArgs",
    "gateway_handles",
    "per_gpu",
    "start_gateway",
    "stop_gateway",
    "worker_for",
]
