"""Typed failures of the benchmark tool."""

from __future__ import annotations

from ..errors import ToolError


class ServerNotReachable(ToolError):
    """Nothing answers on the server's port, or the client could not talk to it."""

    kind = "server_not_reachable"


class BenchmarkClientFailed(ToolError):
    """The benchmark client itself failed (crashed, timed out, printed no result); details carry its output."""

    kind = "benchmark_client_failed"


class BenchServingUnavailable(ToolError):
    """The host has no sglang.bench_serving (SGLang is not installed there, or too old)."""

    kind = "bench_serving_unavailable"
