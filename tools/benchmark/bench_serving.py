"""SGLang's own `sglang.bench_serving`, run on the host, and the parser of the JSON lines it appends.

Where SGLang is installed, its benchmark is the reference the community quotes;
running it through this tool gives figures comparable with theirs. One run per
concurrency level (`--max-concurrency C --request-rate inf`, fixed lengths with
`--random-range-ratio 1.0`), each appending one JSON line to an output file
under the host's home, which is read back and parsed here.

What the JSON line carries (SGLang's field names): duration, completed,
total_input_tokens, total_output_tokens, request_throughput, output_throughput,
mean/median/std/p99 of e2e_latency_ms, ttft_ms and tpot_ms, mean/median/std/p95/p99
of itl_ms, concurrency (sum of latencies / duration), accept_length (DP rank 0's
avg_spec_accept_length), max_concurrency, server_info. It has no p90 and no
per-chunk gap: those are None here. Its ITL is per token on the native backend.

On a simulated host, bench_serving times requests with the host's own clock,
which runs `time_scale` times faster than the host it models: its durations and
latencies are multiplied and its rates divided by that scale here, as the
built-in client's are (the result's time_scale says so).
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..context import ToolContext
from ..simulated import simulated_scales
from .errors import BenchmarkClientFailed, BenchServingUnavailable
from .models import BenchmarkArgs, BenchmarkResult, LatencySummary, LevelResult

MODULES = ("sglang.bench_serving", "sglang.benchmark.serving")  # old path, newer tree
OUTPUT_DIR = ".cache/specops/bench"
_FIND_MODULE = (
    "import importlib.util, sys\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        found = importlib.util.find_spec(name)\n"
    "    except ImportError:\n"
    "        found = None\n"
    "    if found is not None:\n"
    "        print(name)\n"
    "        break\n"
)


class BenchServingLineError(ValueError):
    """A line that is not a bench_serving result."""


def _latency(line: dict[str, Any], metric: str, time_scale: float = 1.0) -> LatencySummary:
    def get(stat: str) -> float | None:
        value = line.get(f"{stat}_{metric}")
        return float(value) * time_scale if isinstance(value, (int, float)) else None

    return LatencySummary(
        samples=int(line.get("completed") or 0), mean_ms=get("mean"), p50_ms=get("median"), p90_ms=None, p99_ms=get("p99")
    )


def parse_bench_serving_line(text: str, *, time_scale: float = 1.0) -> LevelResult:
    """One JSON line of `--output-file` as a LevelResult.

    `time_scale` > 1 (a simulated host's fast clock) turns its times into the modelled host's:
    durations and latencies multiply, rates divide; counts and concurrency stay.
    """
    try:
        line = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchServingLineError(f"not JSON: {exc}") from None
    missing = [k for k in ("duration", "completed", "total_output_tokens", "output_throughput") if k not in line]
    if not isinstance(line, dict) or missing:
        raise BenchServingLineError(f"not a bench_serving result (missing {missing})")
    concurrency = line.get("max_concurrency")
    completed = int(line["completed"])
    failed = int(line.get("num_prompts", completed) or completed) - completed
    accept = line.get("accept_length")
    return LevelResult(
        concurrency=int(concurrency) if concurrency is not None else completed,
        achieved_concurrency=float(line.get("concurrency") or 0.0),
        requests_completed=completed,
        requests_failed=max(failed, 0),
        errors=[],
        duration_s=float(line["duration"]) * time_scale,
        total_input_tokens=int(line.get("total_input_tokens") or 0),
        total_output_tokens=int(line["total_output_tokens"]),
        output_tok_s=float(line["output_throughput"]) / time_scale,
        output_tok_s_overall=float(line["output_throughput"]) / time_scale,
        request_rate_per_s=float(line.get("request_throughput") or 0.0) / time_scale,
        ttft=_latency(line, "ttft_ms", time_scale),
        tpot=_latency(line, "tpot_ms", time_scale),
        itl_per_token=_latency(line, "itl_ms", time_scale),
        inter_chunk_gap=None,
        e2e=_latency(line, "e2e_latency_ms", time_scale),
        tokens_per_chunk=None,
        accept_length=float(accept) if isinstance(accept, (int, float)) else None,
        cache_flushed=None,
        client=None,
    )


def bench_serving_argv(module: str, args: BenchmarkArgs, concurrency: int, output_file: str) -> list[str]:
    argv = [
        "python3", "-m", module,
        "--backend", "sglang",
        "--host", "127.0.0.1",
        "--port", str(args.port),
        "--dataset-name", "random",
        "--random-input-len", str(args.input_len),
        "--random-output-len", str(args.output_len),
        "--random-range-ratio", "1.0",
        "--num-prompts", str(args.requests_at(concurrency)),
        "--max-concurrency", str(concurrency),
        "--request-rate", "inf",
        "--warmup-requests", str(args.warmup_requests),
        "--seed", str(args.seed),
        "--output-file", output_file,
    ]
    if args.flush_cache:
        argv.append("--flush-cache")
    if not args.ignore_eos:
        argv.append("--disable-ignore-eos")
    if args.model:
        argv += ["--model", args.model]
    return argv


def find_bench_serving(ctx: ToolContext) -> str:
    done = ctx.host.run(["python3", "-c", _FIND_MODULE, *MODULES], timeout=60, idempotent=True)
    module = done.stdout.strip()
    if not done.ok or module not in MODULES:
        raise BenchServingUnavailable(
            f"{ctx.host.spec} has no sglang.bench_serving (python3 finds neither {' nor '.join(MODULES)})",
            remedy="use the built-in client (client='host'), or install SGLang on the host",
            details={"stderr": done.stderr[-1000:]},
        )
    return module


def run_bench_serving(ctx: ToolContext, args: BenchmarkArgs) -> BenchmarkResult:
    if args.prompts != "random":
        raise BenchServingUnavailable(
            "this tool runs sglang.bench_serving on its random dataset only",
            remedy="use prompts='random', or client='host' for the shipped prompt sets",
        )
    module = find_bench_serving(ctx)
    output_file = f"{ctx.home.rstrip('/')}/{OUTPUT_DIR}/bench_serving-{time.strftime('%Y%m%dT%H%M%S')}.jsonl"
    ctx.host.run(["mkdir", "-p", output_file.rsplit("/", 1)[0]], timeout=30).check()
    scale = simulated_scales(ctx.host).time_scale
    levels: list[LevelResult] = []
    server_info: dict[str, Any] = {}
    for concurrency in args.levels:
        done = ctx.host.run(bench_serving_argv(module, args, concurrency, output_file), timeout=args.timeout_s)
        if not done.ok:
            raise BenchmarkClientFailed(
                f"{module} failed at concurrency {concurrency} (exit {done.exit_code})",
                remedy="read its output in details; check the server is up and the flags suit the installed SGLang",
                details={"stdout_tail": done.stdout[-2000:], "stderr_tail": done.stderr[-2000:]},
            )
        lines = [ln for ln in ctx.host.read_file(output_file).decode().splitlines() if ln.strip()]
        levels.append(parse_bench_serving_line(lines[-1], time_scale=scale))
        info = json.loads(lines[-1]).get("server_info")
        server_info = info if isinstance(info, dict) else server_info
    best = max(levels, key=lambda level: level.output_tok_s)
    return BenchmarkResult(
        host=ctx.host.spec,
        port=args.port,
        client="bench_serving",
        api=f"{module} --backend sglang",
        model=args.model or server_info.get("served_model_name"),
        server_version=server_info.get("version"),
        speculative_algorithm=server_info.get("speculative_algorithm"),
        prompts=f"{module} random dataset, {args.input_len} input tokens (range ratio 1.0)",
        input_len=args.input_len,
        output_len=args.output_len,
        ignore_eos=args.ignore_eos,
        warmup_requests=args.warmup_requests,
        levels=levels,
        best_output_tok_s=best.output_tok_s,
        best_at_concurrency=best.concurrency,
        method=(
            f"SGLang's {module} on the host, one run per level (--max-concurrency C, --request-rate inf, "
            f"--num-prompts per level, --random-range-ratio 1.0); figures as it reports them: output_throughput = "
            "output tokens / duration, concurrency = sum of latencies / duration, ITL per token (native backend), "
            "accept_length from DP rank 0 only; no p90 and no per-chunk gaps."
            + (
                f" Simulated host running {scale:g}x faster than the host it models: measured times were multiplied "
                f"and rates divided by {scale:g}, so the figures are the modelled host's."
                if scale != 1.0
                else ""
            )
        ),
        warnings=[],
        time_scale=scale,
    )
