"""SGLang's own serving benchmark, run on the host, and the parser of the JSON lines it appends.

Where SGLang is installed, its benchmark is the reference the community quotes;
running it through this tool gives figures comparable with theirs. One run per
concurrency level (`--max-concurrency C --request-rate inf`, fixed lengths with
`--random-range-ratio 1.0`), each appending one JSON line to an output file
under the host's home, which is read back and parsed here.

The module is the installed release's (specops.sglang_releases): `sglang.bench_serving`
up to 0.5.11, `sglang.benchmark.serving` from 0.5.23 (where the old name is a
deprecated shim); the other is the fallback when the release's is missing. The
dataset is `random-ids`: `random` samples its token ids from ShareGPT, which
SGLang downloads from the Hub unless `--dataset-path` names a local copy, so an
offline host fails there; random ids fetch nothing.

What the JSON line carries (SGLang's field names): duration, completed,
total_input_tokens, total_output_tokens, request_throughput, output_throughput,
mean/median/std/p99 of e2e_latency_ms, ttft_ms, tpot_ms and itl_ms, p90 of e2e and
p95 of ITL (0.5.23: p90 and p95 of all four), concurrency (sum of latencies /
duration), accept_length (DP rank 0's avg_spec_accept_length: the server's
running average, kept as accept_length_lifetime), max_concurrency, server_info.
It has no num_prompts: failures are the prompts this tool sent minus completed.
It has no per-chunk gap. Its ITL is per token on the native backend.

The level's own acceptance comes from the Prometheus counters
`sglang:generation_tokens_total` / `sglang:spec_verify_calls_total` (0.5.23, with
--enable-metrics), read before and after each run: their difference covers that
run alone, its warm-up requests included.

bench_serving times requests with the host's own clock: its figures are the
host's, taken as it reports them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx

from specops.sglang_releases import facts
from specops.sglang_releases.facts import ReleaseFacts

from ..context import ToolContext
from ..hosts import HostError, PortNotListening
from ..sglang.server_http import get_text, health_status, parse_metrics
from .errors import BenchmarkClientFailed, BenchServingUnavailable
from .models import BenchmarkArgs, BenchmarkResult, LatencySummary, LevelResult, ServerFailure

MODULES = ("sglang.benchmark.serving", "sglang.bench_serving")  # every name a modelled release uses
DATASET = "random-ids"  # random token ids: nothing to download (`random` fetches ShareGPT from the Hub)
OUTPUT_DIR = ".cache/specops/bench"
COUNTERS = ("sglang:generation_tokens_total", "sglang:spec_verify_calls_total")
# Prints the installed SGLang's version (first line), then each of argv's modules that python finds.
_FIND_MODULE = (
    "import importlib.util, sys\n"
    "version = ''\n"
    "try:\n"
    "    from importlib.metadata import version as dist_version\n"
    "    version = dist_version('sglang')\n"
    "except Exception:\n"
    "    try:\n"
    "        from sglang.version import __version__ as version\n"
    "    except Exception:\n"
    "        version = ''\n"
    "print(version)\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        found = importlib.util.find_spec(name)\n"
    "    except ImportError:\n"
    "        found = None\n"
    "    if found is not None:\n"
    "        print(name)\n"
)


class BenchServingLineError(ValueError):
    """A line that is not a bench_serving result."""


def _latency(line: dict[str, Any], metric: str) -> LatencySummary:
    def get(stat: str) -> float | None:
        value = line.get(f"{stat}_{metric}")
        return float(value) if isinstance(value, (int, float)) else None

    return LatencySummary(
        samples=int(line.get("completed") or 0),
        mean_ms=get("mean"),
        p50_ms=get("median"),
        p90_ms=get("p90"),
        p95_ms=get("p95"),
        p99_ms=get("p99"),
    )


def parse_bench_serving_line(
    text: str, *, prompts_sent: int | None = None, acceptance: tuple[float, int] | None = None
) -> LevelResult:
    """One JSON line of `--output-file` as a LevelResult, its figures as bench_serving reported them.

    `prompts_sent` (the run's --num-prompts) gives the failures: the line itself has no prompt count.
    `acceptance` is the run's (accept length, verify steps) from counter differences, if known.
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
    sent = prompts_sent if prompts_sent is not None else line.get("num_prompts")
    failed = max(int(sent) - completed, 0) if isinstance(sent, int) else 0
    lifetime = line.get("accept_length")
    return LevelResult(
        concurrency=int(concurrency) if concurrency is not None else completed,
        achieved_concurrency=float(line.get("concurrency") or 0.0),
        requests_completed=completed,
        requests_failed=failed,
        errors=[f"{failed} of {sent} prompts did not complete (bench_serving reports no reason)"] if failed else [],
        duration_s=float(line["duration"]),
        total_input_tokens=int(line.get("total_input_tokens") or 0),
        total_output_tokens=int(line["total_output_tokens"]),
        output_tok_s=float(line["output_throughput"]),
        output_tok_s_overall=float(line["output_throughput"]),
        request_rate_per_s=float(line.get("request_throughput") or 0.0),
        ttft=_latency(line, "ttft_ms"),
        tpot=_latency(line, "tpot_ms"),
        itl_per_token=_latency(line, "itl_ms"),
        inter_chunk_gap=None,
        e2e=_latency(line, "e2e_latency_ms"),
        tokens_per_chunk=None,
        accept_length=acceptance[0] if acceptance else None,
        accept_length_source="metrics_counters" if acceptance else None,
        accept_verify_steps=acceptance[1] if acceptance else None,
        accept_length_lifetime=float(lifetime) if isinstance(lifetime, (int, float)) else None,
        cache_flushed=None,
        client=None,
    )


def bench_serving_argv(
    module: str, args: BenchmarkArgs, concurrency: int, output_file: str, release: ReleaseFacts | None = None
) -> list[str]:
    """The command line of one level; flags the release's bench_serving lacks are left out."""
    argv = [
        "python3",
        "-m",
        module,
        "--backend",
        "sglang",
        "--host",
        "127.0.0.1",
        "--port",
        str(args.port),
        "--dataset-name",
        DATASET,
        "--random-input-len",
        str(args.input_len),
        "--random-output-len",
        str(args.output_len),
        "--random-range-ratio",
        "1.0",
        "--num-prompts",
        str(args.requests_at(concurrency)),
        "--max-concurrency",
        str(concurrency),
        "--request-rate",
        "inf",
        "--warmup-requests",
        str(args.warmup_requests),
        "--seed",
        str(args.seed),
        "--tokenize-prompt",  # token ids, not their text: exact input lengths, as our own client sends
        "--output-file",
        output_file,
    ]
    if args.flush_cache:
        argv.append("--flush-cache")
    if not args.ignore_eos:
        argv.append("--disable-ignore-eos")
    if args.model:
        argv += ["--model", args.model]
    if release is None:
        return argv
    known = {name for flag in release.bench_serving.flags for name in flag.names}
    kept = argv[:3]
    i = 3
    while i < len(argv):
        takes_value = i + 1 < len(argv) and not argv[i + 1].startswith("--")
        if argv[i] in known:
            kept += argv[i : i + 1 + takes_value]
        i += 1 + takes_value
    return kept


def find_bench_serving(ctx: ToolContext) -> tuple[str, ReleaseFacts | None]:
    """(module to run, the installed release's facts): the release's module when python finds it, else another."""
    done = ctx.host.run(["python3", "-c", _FIND_MODULE, *MODULES], timeout=60, idempotent=True)
    lines = [ln.strip() for ln in done.stdout.splitlines()]
    version, found = (lines[0], lines[1:]) if lines else ("", [])
    try:
        release = facts.for_version(version) if version else None
    except ValueError:
        release = None
    wanted = release.bench_serving.module if release is not None else None
    module = wanted if wanted in found else next((m for m in found if m in MODULES), None)
    if not done.ok or module is None:
        raise BenchServingUnavailable(
            f"{ctx.host.spec} has no SGLang serving benchmark (python3 finds neither {' nor '.join(MODULES)})",
            remedy="use the built-in client (client='host'), or install SGLang on the host",
            details={"stderr": done.stderr[-1000:], "sglang_version": version or None},
        )
    if release is not None and DATASET not in release.bench_serving.dataset_names:
        raise BenchServingUnavailable(
            f"SGLang {version}'s bench_serving has no {DATASET} dataset, and its `random` downloads ShareGPT",
            remedy="use the built-in client (client='host')",
        )
    return module, release


def _counters(ctx: ToolContext, port: int) -> dict[str, float] | None:
    """The finished-request counters of /metrics, summed over label sets; None where the server has none."""
    try:
        metrics = parse_metrics(get_text(ctx.host, port, "/metrics"))
    except (httpx.HTTPError, PortNotListening, HostError, ValueError):
        return None
    if not all(metrics.get(name) for name in COUNTERS):
        return None
    return {name: sum(metrics[name]) for name in COUNTERS}


def _run_acceptance(before: dict[str, float] | None, after: dict[str, float] | None) -> tuple[float, int] | None:
    if not before or not after:
        return None
    tokens = after[COUNTERS[0]] - before[COUNTERS[0]]
    steps = after[COUNTERS[1]] - before[COUNTERS[1]]
    return (tokens / steps, int(steps)) if steps > 0 and tokens > 0 else None


def _no_level(concurrency: int, sent: int | None, why: str) -> LevelResult:
    """A level whose run gave no result line (the server went away under it)."""
    empty = LatencySummary(samples=0, mean_ms=None, p50_ms=None, p90_ms=None, p99_ms=None)
    return LevelResult(
        concurrency=concurrency,
        achieved_concurrency=0.0,
        requests_completed=0,
        requests_failed=sent or 0,
        errors=[why],
        duration_s=0.0,
        total_input_tokens=0,
        total_output_tokens=0,
        output_tok_s=0.0,
        request_rate_per_s=0.0,
        ttft=empty,
        tpot=empty,
        itl_per_token=None,
        inter_chunk_gap=None,
        e2e=empty,
        tokens_per_chunk=None,
        accept_length=None,
        cache_flushed=None,
        client=None,
    )


def _server_down(ctx: ToolContext, port: int) -> str | None:
    """None when the server answers GET /health with 200 after a level; else what the check got."""
    code = health_status(ctx.host, port)
    return None if code == 200 else f"GET /health: {'no answer' if code is None else f'HTTP {code}'}"


def run_bench_serving(
    ctx: ToolContext,
    args: BenchmarkArgs,
    check: Callable[[str], ServerFailure] | None = None,
    mark_failed: Callable[[LevelResult, ServerFailure, int | None], LevelResult] | None = None,
) -> BenchmarkResult:
    """One bench_serving run per level. With `check` (what the host shows of a server that failed its health check
    after a level) and `mark_failed` (that level made invalid), the sweep stops at a server that died or hangs."""
    if args.prompts != "random":
        raise BenchServingUnavailable(
            "this tool runs SGLang's bench_serving on random token ids only",
            remedy="use prompts='random', or client='host' for the shipped prompt sets",
        )
    module, release = find_bench_serving(ctx)
    output_file = f"{ctx.home.rstrip('/')}/{OUTPUT_DIR}/bench_serving-{time.strftime('%Y%m%dT%H%M%S')}.jsonl"
    ctx.host.run(["mkdir", "-p", output_file.rsplit("/", 1)[0]], timeout=30).check()
    levels: list[LevelResult] = []
    server_info: dict[str, Any] = {}
    for concurrency in args.levels:
        before = _counters(ctx, args.port)
        done = ctx.host.run(bench_serving_argv(module, args, concurrency, output_file, release), timeout=args.timeout_s)
        down = _server_down(ctx, args.port) if check is not None and mark_failed is not None else None
        if down is not None and check is not None and mark_failed is not None:
            lines = (
                [ln for ln in ctx.host.read_file(output_file).decode().splitlines() if ln.strip()] if done.ok else []
            )
            level = (
                parse_bench_serving_line(lines[-1], prompts_sent=args.requests_at(concurrency))
                if lines
                else _no_level(
                    concurrency, args.requests_at(concurrency), f"{module} exited {done.exit_code} with no result"
                )
            )
            levels.append(mark_failed(level, check(down), server_info.get("max_running_requests")))
            break
        if not done.ok:
            raise BenchmarkClientFailed(
                f"{module} failed at concurrency {concurrency} (exit {done.exit_code})",
                remedy="read its output in details; check the server is up and the flags suit the installed SGLang",
                details={"stdout_tail": done.stdout[-2000:], "stderr_tail": done.stderr[-2000:]},
            )
        after = _counters(ctx, args.port) if before is not None else None
        lines = [ln for ln in ctx.host.read_file(output_file).decode().splitlines() if ln.strip()]
        levels.append(
            parse_bench_serving_line(
                lines[-1],
                prompts_sent=args.requests_at(concurrency),
                acceptance=_run_acceptance(before, after),
            )
        )
        info = json.loads(lines[-1]).get("server_info")
        server_info = info if isinstance(info, dict) else server_info
    best = max([level for level in levels if level.valid] or levels, key=lambda level: level.output_tok_s)
    # Per-level warnings (failures, acceptance) are the caller's (sweep.level_warnings); only the sweep's own here.
    warnings = []
    if server_info.get("speculative_algorithm") and any(level.accept_length is None for level in levels if level.valid):
        warnings.append(
            "speculative server, but no per-level accept length: it needs the counters sglang:generation_tokens_total "
            "and sglang:spec_verify_calls_total (0.5.23, --enable-metrics); accept_length_lifetime is bench_serving's "
            "own figure, the server's running average. Relaunch with enable_metrics, or use client='host' with "
            "api='sglang' (per-request meta_info)"
        )
    return BenchmarkResult(
        host=ctx.host.spec,
        port=args.port,
        client="bench_serving",
        api=f"{module} --backend sglang",
        model=args.model or server_info.get("served_model_name"),
        server_version=server_info.get("version"),
        speculative_algorithm=server_info.get("speculative_algorithm"),
        prompts=f"{module} {DATASET} dataset, {args.input_len} input tokens (range ratio 1.0)",
        input_len=args.input_len,
        output_len=args.output_len,
        ignore_eos=args.ignore_eos,
        warmup_requests=args.warmup_requests,
        levels=levels,
        best_output_tok_s=best.output_tok_s,
        best_at_concurrency=best.concurrency,
        levels_not_run=list(args.levels[len(levels) :]),
        method=(
            f"SGLang's {module} (the module of the installed release"
            f"{f', {release.version}' if release is not None else ''}) on the host, one run per level "
            f"(--dataset-name {DATASET} --tokenize-prompt, --max-concurrency C, --request-rate inf, --num-prompts "
            "per level, --random-range-ratio 1.0); figures as it reports them: output_throughput = output tokens / duration, "
            "concurrency = sum of latencies / duration, ITL per token (native backend), percentiles it reports (p90 "
            "and p95 of every latency from 0.5.23), no per-chunk gaps; failures = prompts sent - completed. Accept "
            "length per level: the difference of the Prometheus counters sglang:generation_tokens_total / "
            "sglang:spec_verify_calls_total before and after the run (warm-up included; None where the server has "
            "no such counters); bench_serving's own accept_length (DP rank 0's running average since start or the "
            "last /flush_cache) is accept_length_lifetime."
        ),
        warnings=warnings,
    )
