"""The gateway's typed failures: it could not start, or a worker behind it never became healthy."""

from __future__ import annotations

from ..errors import ErrorKind, ToolError


class GatewayFailed(ToolError):
    """The router did not become ready with every worker healthy; `details.cause` says why.

    Causes: worker_unreachable (the router gave up on a worker: `details.worker`, `details.line`), router_exited
    (it exited before it was ready: `details.line`), port_in_use (a port it would bind is taken: found before the
    start, or the router exited on it), timeout (still not ready when the wait ended), invalid_workers (a worker
    given twice). `details.stopped` says whether a router had started and was stopped; none is left running.
    """

    kind = ErrorKind.GATEWAY_FAILED


class GatewayNotInstalled(ToolError):
    """The host's interpreter cannot import `sglang_router` (the `sglang-router` package from PyPI)."""

    kind = ErrorKind.GATEWAY_NOT_INSTALLED
