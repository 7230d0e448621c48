"""The benchmark tool: concurrency sweeps against a serving endpoint.

    result = run_benchmark(ctx, BenchmarkArgs(port=30000, levels=[1, 32, 64]))

- models.py: arguments and results (LevelResult per concurrency);
- stream_client.py: the self-contained client script run on the host (or here);
- statistics.py: raw timings to per-level figures;
- bench_serving.py: SGLang's sglang.bench_serving on the host, and its JSONL parser;
- sweep.py: the tool itself.
"""

from .bench_serving import parse_bench_serving_line
from .errors import BenchmarkClientFailed, BenchServingUnavailable, ServerNotReachable
from .models import BenchmarkArgs, BenchmarkResult, ClientLoad, LatencySummary, LevelResult
from .sweep import run_benchmark

__all__ = [
    "BenchServingUnavailable",
    "BenchmarkArgs",
    "BenchmarkClientFailed",
    "BenchmarkResult",
    "ClientLoad",
    "LatencySummary",
    "LevelResult",
    "ServerNotReachable",
    "parse_bench_serving_line",
    "run_benchmark",
]
