"""start_gateway: the router detached on the host, in front of the workers, waited for until every one is healthy.

The router answers /health at once, before it has a single worker: it registers
workers in the background (a health check each, retried every second until its
--worker-startup-timeout-secs). So ready means GET /workers lists every worker
given, healthy. A worker the router gives up on, or a router that exits, is
GatewayFailed naming the worker or the log line, and the router is stopped.
"""

from __future__ import annotations

import posixpath
import time
from datetime import UTC, datetime

from ..context import ToolContext
from ..errors import HostUnavailable
from ..hosts import ConnectionDropped, DetachedProcess
from .command import router_argv
from .errors import GatewayFailed, GatewayNotInstalled
from .handles import gateway_handles
from .host_ports import RouterPorts, choose_ports, claim, release
from .models import GatewayArgs, GatewayWorker, GatewayWorkerState, RunningGateway
from .router_log import exit_line, tail_lines, worker_failures
from .workers import all_healthy, normal_url, read_workers

POLL_S = 0.5
# Past its own start-up timeout the router logs the worker it gave up on: waited for this much longer.
GIVE_UP_MARGIN_S = 10.0
STOP_GRACE_S = 15.0
LOG_LINES = 400
_VERSION = "import sglang_router; print(sglang_router.__version__)"


def start_gateway(ctx: ToolContext, args: GatewayArgs) -> RunningGateway:
    """Start sglang-router on the host in front of `args.workers` and return once it lists every one healthy.

    Benchmark through it with BenchmarkArgs(port=gateway.port); stop it with stop_gateway. A worker it cannot
    reach, a port taken or a router that exits answers gateway_failed, with nothing left running.
    """
    _check_workers(args.workers)
    version = router_version(ctx, args.python)
    ports = choose_ports(ctx.host, python=args.python, port=args.port, metrics_port=args.router_metrics_port)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    log_path = posixpath.join(ctx.writable(args.log_dir), f"sglang-router-{args.port}-{stamp}.log")
    argv = router_argv(
        python=args.python,
        worker_urls=[normal_url(w.url) for w in args.workers],
        port=ports.bound_port,
        metrics_port=ports.bound_metrics_port,
        policy=args.policy,
        startup_timeout_s=args.ready_timeout_s,
    )
    try:
        proc = ctx.host.start_detached(argv, log_path=log_path)
    except ConnectionDropped as exc:
        raise HostUnavailable(
            f"the connection to {ctx.host.spec} dropped while starting the gateway; it may or may not be running",
            remedy=f"reconnect and look for a process listening on port {args.port} before starting it again",
            details={"log_path": log_path, "may_have_run": exc.may_have_run},
        ) from exc
    start = ctx.host.start_time(proc)  # its 'ready after' is the host's seconds, as a server's is
    try:
        claim(ctx.host, ports, pid=proc.pid, argv=argv)
        states, ready_at = _wait_until_ready(ctx, args, proc, ports)
    except BaseException:  # not ready, interrupted, or the host failed mid-wait: leave nothing running
        _stop(ctx, proc, ports)
        raise
    return gateway_handles(ctx).add(
        RunningGateway(
            host=ctx.host.spec,
            pid=proc.pid,
            pgid=proc.pgid,
            started_at=proc.started_at,
            argv=proc.argv,
            log_path=log_path,
            port=ports.port,
            metrics_port=ports.metrics_port,
            bound_port=ports.bound_port,
            bound_metrics_port=ports.bound_metrics_port,
            policy=args.policy,
            version=version,
            workers=states,
            ready_after_s=round(max(ready_at - start, 0.0), 2),
        )
    )


def router_version(ctx: ToolContext, python: str) -> str:
    """sglang-router's version on the host; GatewayNotInstalled when its interpreter cannot import it."""
    done = ctx.host.run([python, "-c", _VERSION], timeout=60, idempotent=True)
    if not done.ok:
        last = (done.stderr.strip().splitlines() or [f"exit {done.exit_code}"])[-1]
        raise GatewayNotInstalled(
            f"{python} on {ctx.host.spec} cannot import sglang_router: {last}",
            remedy="install the gateway on the host (`pip install sglang-router`, a CPU-only wheel), or pass the "
            "interpreter that has it",
            details={"python": python, "stderr": done.stderr[-2000:]},
        )
    return done.stdout.strip()


def _check_workers(workers: list[GatewayWorker]) -> None:
    urls = [normal_url(w.url) for w in workers]
    repeated = sorted({u for u in urls if urls.count(u) > 1})
    if repeated:
        raise GatewayFailed(
            f"a worker is given twice: {', '.join(repeated)}",
            remedy="give each server once; its GPUs are counted once",
            details={"cause": "invalid_workers", "workers": repeated, "stopped": False},
        )


def _wait_until_ready(
    ctx: ToolContext, args: GatewayArgs, proc: DetachedProcess, ports: RouterPorts
) -> tuple[list[GatewayWorkerState], float]:
    """Every worker's state once all are healthy, and the host's time when the poll that found them so began (the
    router logs no line of its own for it; the poll's own commands take their time after that)."""
    host = ctx.host
    wanted = {normal_url(w.url) for w in args.workers}
    # The router times its own start-up timeout on the clock it runs on: this deadline is on the same one.
    deadline = time.monotonic() + args.ready_timeout_s + GIVE_UP_MARGIN_S
    while True:
        looked_at = host.clock()
        log = host.tail(proc.log_path, LOG_LINES)
        failures = {u: f for u, f in worker_failures(log).items() if u in wanted}
        given_up = [f for f in failures.values() if f.final]
        if given_up:
            raise _worker_failed(args, proc, log, given_up[0].url, given_up[0].line, gave_up=True)
        if not host.is_running(proc):
            raise _router_exited(args, proc, host.tail(proc.log_path, LOG_LINES))
        states = read_workers(host, ports.port, args.workers)
        if states is not None and all_healthy(states, args.workers):
            order = {normal_url(w.url): i for i, w in enumerate(args.workers)}
            return sorted(states, key=lambda s: order[s.url]), looked_at
        if time.monotonic() > deadline:
            if failures:
                first = next(iter(failures.values()))
                raise _worker_failed(args, proc, log, first.url, first.line, gave_up=False)
            raise GatewayFailed(
                f"the gateway on port {args.port} still did not list every worker healthy after "
                f"{args.ready_timeout_s:.0f} s (listed: {_listed(states)}); stopped",
                remedy="check that every worker answers GET /health from the gateway's host; start again with a "
                "longer ready_timeout_s if they are still loading",
                details=_details(args, proc, log, cause="timeout"),
            )
        host.sleep(POLL_S)


def _listed(states: list[GatewayWorkerState] | None) -> str:
    if not states:
        return "none"
    return ", ".join(f"{s.url} ({'healthy' if s.healthy else 'unhealthy'})" for s in states)


def _worker_failed(
    args: GatewayArgs, proc: DetachedProcess, log: str, url: str, line: str, *, gave_up: bool
) -> GatewayFailed:
    how = "gave up on" if gave_up else "could not reach"
    return GatewayFailed(
        f"the gateway {how} worker {url} within {args.ready_timeout_s:.0f} s: {line[:400]}; stopped",
        remedy=f"check that the server behind {url} is up (server_status) and reachable from the gateway's host "
        "(the URL as that host sees it: 127.0.0.1 and the host's own port for a server on the same host); then "
        "start the gateway again",
        details={**_details(args, proc, log, cause="worker_unreachable"), "worker": url, "line": line},
    )


def _router_exited(args: GatewayArgs, proc: DetachedProcess, log: str) -> GatewayFailed:
    line = exit_line(log)
    port_taken = line is not None and "Address already in use" in line
    cause = "port_in_use" if port_taken else "router_exited"
    return GatewayFailed(
        f"the gateway exited before it was ready: {line or 'no error line in its log'}",
        remedy="choose other ports (port, metrics_port): one is taken"
        if port_taken
        else "read the log tail; check the router's version and arguments, then start it again",
        details={**_details(args, proc, log, cause=cause), "line": line},
    )


def _details(args: GatewayArgs, proc: DetachedProcess, log: str, *, cause: str) -> dict[str, object]:
    return {
        "cause": cause,
        "port": args.port,
        "pid": proc.pid,
        "log_path": proc.log_path,
        "log_tail": tail_lines(log),
        "workers": [w.url for w in args.workers],
        "stopped": True,
    }


def _stop(ctx: ToolContext, proc: DetachedProcess, ports: RouterPorts) -> None:
    try:
        ctx.host.stop(proc, grace_s=STOP_GRACE_S)
    finally:
        release(ctx.host, ports, pid=proc.pid)
