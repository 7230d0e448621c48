"""Typed failures of the benchmark tool."""

from __future__ import annotations

from ..errors import ErrorKind, ToolError


class ServerNotReachable(ToolError):
    """Nothing answers on the server's port, or the client could not talk to it."""

    kind = ErrorKind.SERVER_NOT_REACHABLE


class BenchmarkClientFailed(ToolError):
    """The benchmark client itself failed (crashed, timed out, printed no result); details carry its output."""

    kind = ErrorKind.BENCHMARK_CLIENT_FAILED


class BenchServingUnavailable(ToolError):
    """The host has no sglang.bench_serving (SGLang is not installed there, or too old)."""

    kind = ErrorKind.BENCH_SERVING_UNAVAILABLE
