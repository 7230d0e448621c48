"""The router's command line: argv words, never a shell line."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .models import Policy

ROUTER_MODULE = "sglang_router.launch_router"
# TERM lets in-flight requests finish for this long (the router's default is 180 s); a benchmark stops its own
# requests first, so a stop should not wait minutes on a request nobody reads.
SHUTDOWN_GRACE_S = 10
# How often the router re-checks a worker that is not healthy yet while registering it (its default is 30 s:
# made for workers still loading; ours are up, so a worker that does not answer shows at once).
STARTUP_CHECK_INTERVAL_S = 1
# At info the router logs two lines per request; warn keeps what readiness reads (failed worker checks, the
# worker it gave up on) and leaves out the per-request lines a benchmark would pile up.
LOG_LEVEL = "warn"


def router_argv(
    *,
    python: str,
    worker_urls: Sequence[str],
    port: int,
    metrics_port: int,
    policy: Policy,
    startup_timeout_s: float,
) -> list[str]:
    """`python -m sglang_router.launch_router` on loopback with these workers: both its ports bound to 127.0.0.1
    (reached from here through the host's port forward, like the servers), its worker start-up bounded."""
    return [
        python,
        "-m",
        ROUTER_MODULE,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--prometheus-host",
        "127.0.0.1",
        "--prometheus-port",
        str(metrics_port),
        "--policy",
        policy,
        "--worker-startup-timeout-secs",
        str(max(1, math.ceil(startup_timeout_s))),
        "--worker-startup-check-interval",
        str(STARTUP_CHECK_INTERVAL_S),
        "--shutdown-grace-period-secs",
        str(SHUTDOWN_GRACE_S),
        "--log-level",
        LOG_LEVEL,
        "--worker-urls",
        *worker_urls,
    ]
