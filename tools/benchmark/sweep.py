"""The `benchmark` tool: a concurrency sweep against an OpenAI-compatible (or native SGLang) server.

By default the client (stream_client.py, standard library only) is uploaded to
the host and run there with the host's python3, so the SSH link and this
machine's load are not in the figures; `client="local"` runs the same script
here through host.forward(port); `client="bench_serving"` runs SGLang's own
sglang.bench_serving on the host (bench_serving.py). Raw timings come back as
JSON and are aggregated here (statistics.py).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tenacity

from specops.prompts.acceptance import CATEGORIES, load_prompt_set

from ..context import ToolContext
from ..errors import HostUnavailable
from ..hosts import ConnectionDropped, Host, LocalHost, PortNotListening
from ..registry import tool
from .bench_serving import run_bench_serving
from .errors import BenchmarkClientFailed, ServerNotReachable
from .models import BenchmarkArgs, BenchmarkResult, LevelResult
from ..simulated import simulated_scales
from .statistics import level_result

CLIENT_SCRIPT = Path(__file__).with_name("stream_client.py")
CLIENT_DIR = ".cache/specops/bench"  # under the host's home: only our own files go there
# A level whose clients were fewer than this share of the requested concurrency did not test that level.
LOW_CONCURRENCY_SHARE = 0.8


@contextmanager
def server_url(host: Host, port: int, where: str) -> Iterator[str]:
    """The server's URL as the client sees it; PortNotListening becomes ServerNotReachable.

    The forward also proves the port answers before anything runs. A client here
    uses the forwarded address; a client on the host connects to the host's own
    loopback (a simulated host maps its virtual ports: Host.port_on_host).
    """
    try:
        with host.forward(port) as (address, local_port):
            if where == "local":
                yield f"http://{address}:{local_port}"
            else:
                yield f"http://127.0.0.1:{host.port_on_host(port)}"
    except PortNotListening as exc:
        raise ServerNotReachable(
            str(exc), remedy="start the server (or wait for it to be ready) and check the port", details={"port": port}
        ) from None


def prompt_config(args: BenchmarkArgs) -> tuple[dict[str, Any], str]:
    """The client's prompt settings, and how the result names them."""
    if args.prompts == "random":
        return (
            {"kind": "random_ids", "input_len": args.input_len, "seed": args.seed},
            f"random token ids, exactly {args.input_len} per prompt, new at every level (seed {args.seed})",
        )
    categories = CATEGORIES if args.prompts == "acceptance-mix" else (args.prompts,)
    sets = [load_prompt_set(c) for c in categories]
    # Interleaved, so that any prefix of the requests mixes the categories evenly.
    texts = [p for group in zip(*(s.prompts for s in sets)) for p in group] if len(sets) > 1 else sets[0].prompts
    return {"kind": "texts", "texts": texts}, " + ".join(f"{s.name} (prompts/acceptance)" for s in sets)


def client_config(args: BenchmarkArgs, base_url: str) -> dict[str, Any]:
    prompts, _ = prompt_config(args)
    return {
        "base_url": base_url,
        "api": args.api,
        "model": args.model,
        "prompts": prompts,
        "output_len": args.output_len,
        "ignore_eos": args.ignore_eos,
        "temperature": args.temperature,
        "request_timeout_s": args.request_timeout_s,
        "levels": [
            {
                "concurrency": c,
                "num_requests": args.requests_at(c),
                "duration_s": args.duration_s,
                "end": args.end,
                "warmup_requests": args.warmup_requests,
                "flush_cache": args.flush_cache,
            }
            for c in args.levels
        ],
    }


def _upload_client(ctx: ToolContext) -> str:
    data = CLIENT_SCRIPT.read_bytes()
    path = f"{ctx.home.rstrip('/')}/{CLIENT_DIR}/stream_client-{hashlib.sha256(data).hexdigest()[:12]}.py"
    if not ctx.host.exists(path):
        ctx.host.write_file(path, data, mode=0o644)
    return path


@tenacity.retry(
    retry=tenacity.retry_if_exception_type(ConnectionDropped),
    stop=tenacity.stop_after_attempt(2),
    wait=tenacity.wait_fixed(1),
    reraise=True,
)
def run_client(ctx: ToolContext, args: BenchmarkArgs, config: dict[str, Any]) -> dict[str, Any]:
    """Run the client where args.client says; its parsed JSON output. A benchmark only reads, so a re-run is safe."""
    stdin = json.dumps(config)
    if args.client == "local":
        result = LocalHost().run([sys.executable, str(CLIENT_SCRIPT)], timeout=args.timeout_s, stdin=stdin)
    else:
        script = _upload_client(ctx)
        result = ctx.host.run(["python3", script], timeout=args.timeout_s, stdin=stdin, idempotent=True)
    details = {"exit_code": result.exit_code, "stderr_tail": result.stderr[-2000:], "host": result.host}
    if result.timed_out:
        raise BenchmarkClientFailed(
            f"the benchmark did not finish within {args.timeout_s:.0f} s",
            remedy="lower the levels, requests per level or output length, or raise timeout_s",
            details=details,
        )
    try:
        out = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise BenchmarkClientFailed(
            f"the benchmark client exited {result.exit_code} without a result",
            remedy="check that python3 (3.8 or newer) runs on the host; the client's stderr is in details",
            details=details,
        ) from None
    if "fatal" in out:
        raise ServerNotReachable(
            f"the benchmark client could not talk to {config['base_url']}: {out['fatal']}",
            remedy="check that the server is up and ready (GET /health) and that the port and API are right",
            details=details,
        )
    return out


def _warnings(args: BenchmarkArgs, raw: dict[str, Any], levels: list[LevelResult]) -> list[str]:
    notes: list[str] = []
    info = raw.get("server_info") or {}
    cap = info.get("max_running_requests")
    if isinstance(cap, int) and max(args.levels) > cap:
        notes.append(
            f"the server runs at most {cap} requests at once (max_running_requests): levels above it queue "
            "on the server, so their latencies include queueing"
        )
    for level in levels:
        c = level.concurrency
        if level.client is not None and level.client.limited:
            notes.append(
                f"C={c}: the client was busy (CPU {level.client.cpu_fraction:.0%} of a core, timer lag p99 "
                f"{level.client.loop_lag_p99_ms:.1f} ms): the figures may show the client's limit, not the server's"
            )
        if level.requests_failed:
            notes.append(f"C={c}: {level.requests_failed} requests failed, e.g. {level.errors[0]}")
        held = level.requests_completed + level.requests_cut
        if held and level.achieved_concurrency < LOW_CONCURRENCY_SHARE * min(c, held):
            notes.append(
                f"C={c}: only {level.achieved_concurrency:.1f} requests were in flight on average; "
                "use more requests per level (rounds) or a duration so the level is held"
            )
        if level.itl_per_token is None and level.tokens_per_chunk is not None and level.tokens_per_chunk > 1.05:
            notes.append(
                f"C={c}: chunks carry {level.tokens_per_chunk:.2f} tokens on average but the server gave no per-chunk "
                "counts: ITL per token is not reported (see TPOT and inter_chunk_gap)"
            )
    if info.get("speculative_algorithm") and any(level.accept_length is None for level in levels):
        notes.append(
            "speculative server, but some levels have no accept length of their own: no completed request carried "
            "spec_verify_ct and no counter differences (/metrics needs --enable-metrics; spec_verify_calls_total is "
            "0.5.23's); accept_length_lifetime is the server's running average, not the level's"
        )
    if args.flush_cache and any(level.cache_flushed is None for level in levels):
        notes.append("the server has no /flush_cache: levels may hit the prefix cache of earlier ones")
    elif args.flush_cache and any(level.cache_flushed is False for level in levels):
        notes.append("/flush_cache was refused before some levels (requests still running)")
    return notes


def _method(args: BenchmarkArgs, api: str, prompts: str) -> str:
    ends = {"window": "ending when the steady window closes (the first answer past the duration; the rest are cut)",
            "drain": "ending when every answer in flight has finished",
            "cut": "ending at the duration (answers in flight are cut)"}
    per_level = f"{args.duration_s:g} s of requests per level, {ends[args.end]}" if args.duration_s else (
        f"{args.requests_per_level} requests per level" if args.requests_per_level else f"{args.rounds} x C requests per level"
    )
    counts = "meta_info.completion_tokens per chunk" if api == "sglang" else "usage.completion_tokens (stream_options.include_usage)"
    where = "on the host (python3, standard library client)" if args.client == "host" else "here, through a port forward"
    return (
        f"Closed loop, C requests in flight, {per_level}, levels {args.levels}; prompts: {prompts}; "
        f"max_tokens {args.output_len}, ignore_eos {args.ignore_eos}, temperature {args.temperature:g}, streamed over "
        f"{'native /generate' if api == 'sglang' else '/v1/completions'}. {args.warmup_requests} warm-up request(s) per "
        f"level are excluded{'; /flush_cache before each level' if args.flush_cache else ''}. Output tokens are the "
        f"server's counts ({counts}), never one per chunk. Output tok/s = tokens streamed while the level's concurrency "
        "was held (the steady window, ramp and drain left out) / that window; overall = tokens / (first dispatch .. "
        "last response); "
        "achieved concurrency = sum of latencies / duration; TPOT = (e2e - TTFT) / (tokens - 1); ITL per token = each "
        "chunk gap split over the chunk's tokens; inter-chunk gap = per chunk. Percentiles: linear interpolation. "
        f"Accept length per level: {_accept_method(api)} Client ran {where}."
    )


def _accept_method(api: str) -> str:
    native = (
        "sum(meta_info.completion_tokens) / sum(meta_info.spec_verify_ct) over the level's completed requests (the "
        "keys SGLang adds to a finished request that had a verify step); where no request carried them, "
    )
    return (
        (native if api == "sglang" else "")
        + "the level's difference of the Prometheus counters sglang:generation_tokens_total / "
        "sglang:spec_verify_calls_total (read after the warm-up and after the level; 0.5.23 with --enable-metrics). "
        "accept_length_source names which; never the server's lifetime average, which is kept apart as "
        "accept_length_lifetime (/server_info internal_states[0].avg_spec_accept_length after the level: since start "
        "or its last /flush_cache)."
    )


@tool("benchmark", mutates=False)
def run_benchmark(ctx: ToolContext, args: BenchmarkArgs) -> BenchmarkResult:
    """Concurrency sweep against the server on `port`: per level output tok/s, request rate, TTFT / TPOT / ITL per
    token / inter-chunk gap / E2E (mean, p50, p90, p99), achieved concurrency, errors and the level's accept length.
    The client runs on the host by default, so the SSH link is not measured."""
    if args.client == "bench_serving":
        return run_bench_serving(ctx, args)
    try:
        with server_url(ctx.host, args.port, args.client) as url:
            raw = run_client(ctx, args, client_config(args, url))
    except ConnectionDropped as exc:
        raise HostUnavailable(
            f"the connection to {ctx.host.spec} dropped during the benchmark and did not come back: {exc}",
            remedy="check the host is reachable, then run the benchmark again",
        ) from None
    scale = simulated_scales(ctx.host).time_scale
    levels = [level_result(level, time_scale=scale) for level in raw["levels"]]
    best = max(levels, key=lambda level: level.output_tok_s)
    info = raw.get("server_info") or {}
    _, prompts = prompt_config(args)
    return BenchmarkResult(
        host=ctx.host.spec,
        port=args.port,
        client=args.client,
        api=raw["api"],
        model=raw.get("model"),
        server_version=info.get("version"),
        speculative_algorithm=info.get("speculative_algorithm"),
        prompts=prompts,
        input_len=args.input_len if args.prompts == "random" else None,
        output_len=args.output_len,
        ignore_eos=args.ignore_eos,
        warmup_requests=args.warmup_requests,
        levels=levels,
        best_output_tok_s=best.output_tok_s,
        best_at_concurrency=best.concurrency,
        method=_method(args, raw["api"], prompts) + _time_note(scale),
        warnings=_warnings(args, raw, levels),
        time_scale=scale,
    )


def _time_note(time_scale: float) -> str:
    if time_scale == 1.0:
        return ""
    return (
        f" Simulated host running {time_scale:g}x faster than the host it models: measured times were multiplied "
        f"and rates divided by {time_scale:g}, so the figures are the modelled host's."
    )
