"""The `benchmark` tool: a concurrency sweep against an OpenAI-compatible (or native SGLang) server.

By default the client (stream_client.py, standard library only) is uploaded to
the host and run there with the host's python3, so the SSH link and this
machine's load are not in the figures; `client="local"` runs the same script
here through host.forward(port); `client="bench_serving"` runs SGLang's own
sglang.bench_serving on the host (bench_serving.py). Raw timings come back as
JSON and are aggregated here (statistics.py).

Figures are in the seconds of the clock the client read: the host's own for a
client on the host (as a program there measures), this machine's for
`client="local"`. A local client's run is bracketed by two readings of the
host's clock (Host.clock); where the host's clock advanced materially more or
less than this machine's over the run, the result warns that its figures are
not in the host's seconds (they are never converted: two `date` readings over
SSH are good to a round trip, not to a per-level rate).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tenacity

from specops.prompts.acceptance import CATEGORIES, load_prompt_set

from ..acceptance import DEFAULT_MIN_USEFUL_ACCEPT_LENGTH
from ..context import ToolContext
from ..datasets import DATASET_NAMES, DatasetPrompts, load_standard_dataset
from ..errors import HostUnavailable
from ..hosts import ConnectionDropped, DetachedProcess, Host, HostError, LocalHost, PortNotListening
from ..registry import tool
from ..sglang.diagnosis import SIGNATURES, diagnose
from ..sglang.handle import RECORDS_DIR
from ..sglang.node_fault import NodeFault, find_node_fault, peer_lost
from .bench_serving import run_bench_serving
from .errors import BenchmarkClientFailed, ServerNotReachable
from .for_model import benchmark_view
from .goodput import DEFAULT_GOODPUT_TARGETS, GoodputTargets, goodput_method
from .models import BenchmarkArgs, BenchmarkResult, LevelResult, ServerFailure
from .statistics import level_result

CLIENT_SCRIPT = Path(__file__).with_name("stream_client.py")
CLIENT_DIR = ".cache/specops/bench"  # under the host's home: only our own files go there
# A level whose clients were fewer than this share of the requested concurrency did not test that level.
LOW_CONCURRENCY_SHARE = 0.8
LOG_TAIL_LINES = 400  # where a server that died under load says why: its last lines
# A local client's run: the host's clock and this machine's may differ by this share of the run (and this many
# seconds: the round trips of the two readings) before the result says its figures are not the host's seconds.
CLOCK_MISMATCH_SHARE = 0.05
CLOCK_MISMATCH_MIN_S = 2.0
SGLANG_DEFAULT_PORT = 30000


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


def prompt_config(args: BenchmarkArgs, dataset: DatasetPrompts | None = None) -> tuple[dict[str, Any], str]:
    """The client's prompt settings, and how the result names them; `dataset`: the standard dataset args.prompts
    names, as fetched on the host (fetch_dataset)."""
    if args.prompts == "random":
        return (
            {"kind": "random_ids", "input_len": args.input_len, "seed": args.seed},
            f"random token ids, exactly {args.input_len} per prompt, new at every level (seed {args.seed})",
        )
    if dataset is not None:
        return {"kind": "texts", "texts": dataset.prompts}, f"{dataset.source}; sent as raw text (no chat template)"
    categories = CATEGORIES if args.prompts == "acceptance-mix" else (args.prompts,)
    sets = [load_prompt_set(c) for c in categories]
    # Interleaved, so that any prefix of the requests mixes the categories evenly.
    texts = (
        [p for group in zip(*(s.prompts for s in sets), strict=False) for p in group]
        if len(sets) > 1
        else sets[0].prompts
    )
    return {"kind": "texts", "texts": texts}, " + ".join(f"{s.name} (prompts/acceptance)" for s in sets)


def fetch_dataset(ctx: ToolContext, args: BenchmarkArgs) -> DatasetPrompts | None:
    """The standard dataset args.prompts names, fetched and read on the host (its usual sample count of rows);
    None for random ids or a shipped set. A dataset the host cannot fetch is its typed error (tools/datasets)."""
    return load_standard_dataset(ctx, args.prompts) if args.prompts in DATASET_NAMES else None


def client_config(args: BenchmarkArgs, base_url: str, dataset: DatasetPrompts | None = None) -> dict[str, Any]:
    """The client's input (open-loop rates in requests per second of the clock the client reads)."""
    prompts, _ = prompt_config(args, dataset)
    return {
        "base_url": base_url,
        "api": args.api,
        "model": args.model,
        "prompts": prompts,
        "output_len": args.output_len,
        "ignore_eos": args.ignore_eos,
        "temperature": args.temperature,
        "request_timeout_s": args.request_timeout_s,
        "levels": _open_levels(args)
        if args.rates
        else [
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


def _open_levels(args: BenchmarkArgs) -> list[dict[str, Any]]:
    """One open-loop level per rate: arrivals on the clock (seeded), at most levels[0] in flight."""
    return [
        {
            "rate": {"kind": args.arrival, "per_s": rate, "seed": args.seed},
            "max_concurrency": args.levels[0],
            "num_requests": args.requests_per_level,
            "duration_s": args.duration_s,
            "end": args.end,
            "warmup_requests": args.warmup_requests,
            "flush_cache": args.flush_cache,
        }
        for rate in args.rates or []
    ]


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
        out: dict[str, Any] = json.loads(result.stdout)
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
    """The sweep's warnings: its own, then each level's as 'C=N: ...'. Every one says what to do."""
    notes: list[str] = []
    info = raw.get("server_info") or {}
    cap = info.get("max_running_requests")
    if isinstance(cap, int) and max(args.levels) > cap:
        notes.append(
            f"the server runs at most {cap} requests at once (max_running_requests): levels above it queue "
            f"on the server, so their latencies include queueing; compare levels up to {cap}, or relaunch with a "
            "higher max_running_requests if its memory allows"
        )
    notes.extend(level_notes(levels))
    # A timed level whose requests were all cut has none (SGLang reports spec_verify_ct when a request finishes):
    # said only when no level has one, as the acceptance tool measures it anyway.
    valid = [level for level in levels if level.valid]
    if info.get("speculative_algorithm") and valid and all(level.accept_length is None for level in valid):
        notes.append(
            "the levels have no accept length of their own (no spec_verify_ct, no /metrics counters): "
            "api='sglang', enable_metrics, or the acceptance tool give it"
        )
    if args.flush_cache and any(level.cache_flushed is None for level in levels if level.valid):
        notes.append(
            "the server has no /flush_cache: levels may hit the prefix cache of earlier ones; use "
            "prompts='random' (new token ids at every level) so no level reuses another's cache"
        )
    elif args.flush_cache and any(level.cache_flushed is False for level in levels):
        notes.append(
            "/flush_cache was refused before some levels (requests still running): wait until the server is "
            "idle (server_status shows no running requests) before benchmarking, or use prompts='random'"
        )
    return notes


def level_notes(levels: list[LevelResult]) -> list[str]:
    """The levels' part of the result's warnings: an invalid level first, then each level's own, as 'C=N: ...'."""
    notes = []
    for level in levels:
        if not level.valid:
            notes.append(f"C={level.concurrency}: NOT VALID, {level.invalid_reason}. Remedy: {level.remedy}")
        notes.extend(f"C={level.concurrency}: {w}" for w in level.warnings)
    return notes


def level_warnings(args: BenchmarkArgs, level: LevelResult, speculative: bool) -> list[str]:
    """One level's warnings, each with a remedy (without the 'C=N:' the result's list puts before them)."""
    notes: list[str] = []
    c = level.concurrency
    if level.valid and level.client is not None and level.client.limited:
        notes.append(
            f"the client was busy (CPU {level.client.cpu_fraction:.0%}, timer lag p99 "
            f"{level.client.loop_lag_p99_ms:.1f} ms): " + _busy_client_remedy(args, c)
        )
    if level.requests_failed and level.valid:
        notes.append(
            f"{level.requests_failed} requests failed, e.g. {level.errors[0]}: their tokens and latencies are not "
            "counted. Read the server's log for the cause (server_status, or the shell tool on its log), fix it and "
            "run the level again"
        )
    if level.valid and level.stalled and level.output_tok_s_ci95 is not None:
        bottom, top = level.output_tok_s_ci95
        notes.append(
            f"the throughput stalled inside the level (95% interval {bottom:,.0f}-{top:,.0f} tok/s around "
            f"{level.output_tok_s:,.0f}): the figure is not the configuration's; run the level again before comparing on it"
        )
    held = level.requests_completed + level.requests_cut
    if level.valid and held and level.achieved_concurrency < LOW_CONCURRENCY_SHARE * min(c, held):
        notes.append(
            f"only {level.achieved_concurrency:.1f} requests were in flight on average; "
            "use more requests per level (rounds) or a duration so the level is held"
        )
    if level.itl_per_token is None and level.tokens_per_chunk is not None and level.tokens_per_chunk > 1.05:
        notes.append(
            f"chunks carry {level.tokens_per_chunk:.2f} tokens on average but the server gave no per-chunk "
            "counts: ITL per token is not reported (see TPOT and inter_chunk_gap); api='sglang' (native /generate) "
            "gives per-chunk counts"
        )
    low = acceptance_warning(level, speculative)
    if low:
        notes.append(low)
    return notes


def _busy_client_remedy(args: BenchmarkArgs, concurrency: int) -> str:
    if args.client == "local":
        where = "the client on the host (client='host', the default), not through the port forward"
    else:
        where = f"C={concurrency} and up alone, or client='bench_serving'"
    return f"TTFT/ITL are upper bounds, throughput holds; measure them: {where}"


def acceptance_warning(level: LevelResult, speculative: bool = True) -> str | None:
    """A level's accept length under the useful floor (tools/acceptance.py's wording); None when fine or unknown."""
    figure, which = level.accept_length, "this level's accept length"
    if figure is None and speculative and level.accept_length_lifetime is not None:
        figure, which = level.accept_length_lifetime, "the server's running accept length (accept_length_lifetime)"
    if figure is None or figure >= DEFAULT_MIN_USEFUL_ACCEPT_LENGTH:
        return None
    never = " (1.00: drafts are never accepted)" if figure < 1.005 else ""
    return (
        f"{which} {figure:.2f}{never} is below {DEFAULT_MIN_USEFUL_ACCEPT_LENGTH:g}, below which a drafter rarely "
        "beats no speculation: the speculative server is likely slower than the baseline. Check the drafter matches "
        "the target, the CUDA-graph mode (tau 1.00 means drafts are never accepted: relaunch with cuda_graphs off "
        "to test it), and thinking/chat-template settings; the acceptance tool measures it per category"
    )


# -- the server after a level ----------------------------------------------------------------------


def _port_of(argv: list[str]) -> int:
    for i, word in enumerate(argv):
        if word == "--port" and i + 1 < len(argv) and argv[i + 1].isdigit():
            return int(argv[i + 1])
        if word.startswith("--port=") and word[7:].isdigit():
            return int(word[7:])
    return SGLANG_DEFAULT_PORT


def find_server_process(ctx: ToolContext, port: int) -> DetachedProcess | None:
    """The server on `port` this run (or an earlier one) launched: the run's handles, else the launch records
    under ~/.specops/sglang on the host (tools/sglang/handle.py); the latest started. None: not one of ours."""
    mine = [s for s in ctx.handles.servers.values() if s.port == port and s.host == ctx.host.spec]
    if mine:
        return max(mine, key=lambda s: s.started_at).process
    folder = posixpath.join(ctx.home, RECORDS_DIR)
    script = 'cd "$1" 2>/dev/null || exit 0; for f in *.json; do [ -f "$f" ] && cat "$f" && echo; done'
    try:
        done = ctx.host.run(["sh", "-c", script, "sh", folder], timeout=30, idempotent=True)
    except HostError:
        return None
    found = []
    for line in done.stdout.splitlines():
        try:
            proc = DetachedProcess.model_validate_json(line)
        except ValueError:
            continue
        if _port_of(proc.argv) == port:
            found.append(proc)
    return max(found, key=lambda p: p.started_at) if found else None


def _cause_words(cause: str, lines: list[str]) -> str:
    text = " ".join(lines)
    if peer_lost(text):  # torch's watchdog raises NCCL's remote error too: a peer went away, not a hung collective
        return "a peer went away (NCCL remote error: another node's process exited or the network between them failed)"
    if "Watchdog caught collective operation timeout" in text or "watchdog thread terminated" in text:
        return "NCCL watchdog timeout (a collective hung and the watchdog killed the server)"
    return {
        "out_of_memory": "out of GPU memory",
        "crash": "a crash",
        "cuda_graph_failure": "a CUDA-graph failure",
    }.get(cause, cause.replace("_", " "))


def _written_since(host: Host, path: str, since: float) -> bool:
    """Whether the log at `path` was written after `since` (this machine's clock): a record left by an earlier
    server on the same port names a log nothing writes to any more. True when the host cannot say. The host's "now"
    is a file's time written at once, on the clock that stamps the log (a filesystem's clock need not be the
    host's `date`: a network mount's, a simulated host's)."""
    line = 'f=$(mktemp) && stat -c %Y -- "$f"; rm -f -- "$f"; stat -c %Y -- "$1"'
    done = host.run(["sh", "-c", line, "sh", path], timeout=30, idempotent=True)
    words = done.stdout.split()
    if not done.ok or len(words) != 2 or not all(w.isdigit() for w in words):
        return True
    host_minus_here = int(words[0]) - time.time()
    return int(words[1]) - host_minus_here >= since - 5.0


def check_server(ctx: ToolContext, port: int, health: str, since: float | None = None) -> ServerFailure:
    """What the host shows of a server that failed the check after a level (`health` says how): whether its
    process lives, and the cause its log gives (tools/sglang/diagnosis.py). `since`: when the benchmark started
    (a log not written since then is an earlier server's)."""
    proc = find_server_process(ctx, port)
    try:
        if proc is not None and since is not None and not _written_since(ctx.host, proc.log_path, since):
            proc = None
    except HostError:
        pass
    if proc is None:
        return ServerFailure(
            state="died" if "Refused" in health else "not_answering",
            health=health,
            cause=None,
            cause_words="unknown: no launch record on the host names the server's log",
        )
    try:
        alive = ctx.host.is_running(proc)
    except HostError:
        alive = False
    try:
        log = ctx.host.tail(proc.log_path, LOG_TAIL_LINES)
    except HostError:
        log = ""
    state = "not_answering" if alive else "died"
    if not log.strip() or (alive and not any(sig.pattern.search(log) for sig in SIGNATURES)):
        words = "its log names no error" if log.strip() else "its log could not be read"
        return ServerFailure(
            state=state,
            health=health,
            cause=None,
            cause_words=words,
            log_path=proc.log_path,
            log_lines=[line for line in log.splitlines()[-3:] if line.strip()],
        )
    found = diagnose(log)
    node = _node_at_fault(ctx, port, log) if state == "died" else None
    if node is not None:
        return ServerFailure(
            state=state,
            health=health,
            cause=node.kind,
            cause_words=node.words,
            log_lines=node.evidence or found.lines,
            log_path=proc.log_path,
            node=node,
        )
    return ServerFailure(
        state=state,
        health=health,
        cause=found.cause,
        cause_words=_cause_words(found.cause, found.lines),
        log_lines=found.lines,
        log_path=proc.log_path,
    )


def _node_at_fault(ctx: ToolContext, port: int, rank0_log: str) -> NodeFault | None:
    """For a server over several nodes this run launched: the node it lost, read from every node (node_fault.py)."""
    mine = [s for s in ctx.handles.servers.values() if s.port == port and s.host == ctx.host.spec and s.ranks]
    if not mine:
        return None
    return find_node_fault(ctx, max(mine, key=lambda s: s.started_at).ranks, rank0_log)


def failed_level(level: LevelResult, failure: ServerFailure, port: int, cap: int | None) -> LevelResult:
    """`level` marked invalid: why (the server's state and the cause from its log) and what to do."""
    c = level.concurrency
    running = min(c, cap) if cap else c
    what = {
        "died": f"the server on port {port} died during the level",
        "not_answering": f"the server on port {port} stopped answering during the level (its process is up: hung)",
    }
    reason = f"{what[failure.state]} at C={c}: {failure.cause_words}"
    if failure.log_lines:
        reason += f"; log: {failure.log_lines[0][:300]}"
    lower = max(1, running // 2)
    if failure.node is not None:  # a node went away: not load, so no cap helps
        remedy = (
            f"Not load, so fewer running requests will not help: {failure.node.remedy}. The levels before C={c} "
            "stand, this one's figures are not a measurement"
        )
        return level.model_copy(
            update={"valid": False, "invalid_reason": reason, "remedy": remedy, "server_failure": failure}
        )
    if failure.cause == "out_of_memory":
        fix = (
            f"Relaunch with fewer running requests (max_running_requests, --max-running-requests, below {running}, "
            f"e.g. {lower}) or a lower mem_fraction_static so activations have room"
        )
    else:
        fix = (
            f"Relaunch the server with fewer running requests: max_running_requests (--max-running-requests) below "
            f"{running}, e.g. {lower}"
        )
    remedy = (
        f"{fix}, then benchmark again from C={c}; the levels before it stand, this one's figures are not a measurement"
    )
    if failure.cause is None:
        remedy += (
            f"; read the server's log ({failure.log_path}) for the cause"
            if failure.log_path
            else "; read the server's log for the cause (no launch record names it: a server this tool did not start)"
        )
    if failure.state == "not_answering":
        remedy = "Stop the hung server (stop_server), then " + remedy[0].lower() + remedy[1:]
    return level.model_copy(
        update={"valid": False, "invalid_reason": reason, "remedy": remedy, "server_failure": failure}
    )


def _method(args: BenchmarkArgs, api: str, prompts: str) -> str:
    ends = {
        "window": "ending when the steady window closes (the first answer past the duration; the rest are cut)",
        "drain": "ending when every answer in flight has finished",
        "cut": "ending at the duration (answers in flight are cut)",
    }
    per_level = (
        f"{args.duration_s:g} s of requests per level, {ends[args.end]}"
        if args.duration_s
        else (
            f"{args.requests_per_level} requests per level"
            if args.requests_per_level
            else f"{args.rounds} x C requests per level"
        )
    )
    counts = (
        "meta_info.completion_tokens per chunk"
        if api == "sglang"
        else "usage.completion_tokens (stream_options.include_usage)"
    )
    where = (
        "on the host (python3, standard library client), its times in the host's seconds"
        if args.client == "host"
        else "here, through a port forward, its times in this machine's seconds (the forward's latency included)"
    )
    loop = (
        f"Open loop, {args.arrival} arrivals at {', '.join(f'{r:g}' for r in args.rates)} requests/s (one level each, "
        f"seed {args.seed}), at most {args.levels[0]} in flight, {per_level}; a level's tok/s is over the whole level "
        "(no concurrency is held)"
        if args.rates
        else f"Closed loop, C requests in flight, {per_level}, levels {args.levels}"
    )
    return (
        f"{loop}; prompts: {prompts}; "
        f"max_tokens {args.output_len}, ignore_eos {args.ignore_eos}, temperature {args.temperature:g}, streamed over "
        f"{'native /generate' if api == 'sglang' else '/v1/completions'}. {args.warmup_requests} warm-up request(s) per "
        f"level are excluded{'; /flush_cache before each level' if args.flush_cache else ''}. Output tokens are the "
        f"server's counts ({counts}), never one per chunk. Output tok/s = tokens streamed while the level's concurrency "
        "was held (the steady window, ramp and drain left out) / that window; overall = tokens / (first dispatch .. "
        "last response); "
        "achieved concurrency = sum of latencies / duration; TPOT = (e2e - TTFT) / (tokens - 1); ITL per token = each "
        "chunk gap split over the chunk's tokens; inter-chunk gap = per chunk. Percentiles: linear interpolation. "
        f"Accept length per level: {_accept_method(api)} Client ran {where}. A request is completed only when the "
        "server finished it (a finish_reason or [DONE]); one it broke off is failed, its tokens and latencies left "
        "out. The server is checked after every level (/health_generate, else /health): a level it died or hung in "
        "is marked not valid, with the cause from its log (found through its launch record), and the sweep stops."
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


@tool("benchmark", mutates=False, view=benchmark_view)  # the model sees a per-level table (for_model.py)
def run_benchmark(ctx: ToolContext, args: BenchmarkArgs) -> BenchmarkResult:
    """Closed-loop concurrency sweep (or open-loop `rates`) against the server on `port`, the client on the host:
    per level tok/s with its 95% interval, TTFT and TPOT, accept length and failures. A level the server died or
    hung in is marked invalid, with the cause and a remedy; the sweep stops there.
    """
    return run_sweep(ctx, args, targets=args.goodput_targets)


def run_sweep(
    ctx: ToolContext, args: BenchmarkArgs, *, targets: GoodputTargets = DEFAULT_GOODPUT_TARGETS
) -> BenchmarkResult:
    """The benchmark tool's work (the registry's tools take (ctx, args) only): `targets` are the latency targets
    each level's goodput is judged against (goodput.py)."""
    started = time.time()
    if args.client == "bench_serving":
        checked = run_bench_serving(
            ctx,
            args,
            check=lambda health: check_server(ctx, args.port, health, since=started),
            mark_failed=lambda level, failure, cap: failed_level(level, failure, args.port, cap),
        )
        return _bench_serving_warnings(args, checked)
    dataset = fetch_dataset(ctx, args)
    clocks: tuple[float, float] | None = None
    try:
        with server_url(ctx.host, args.port, args.client) as url:
            if args.client == "local":
                raw, clocks = _timed_local_run(ctx, args, client_config(args, url, dataset))
            else:
                raw = run_client(ctx, args, client_config(args, url, dataset))
    except ConnectionDropped as exc:
        raise HostUnavailable(
            f"the connection to {ctx.host.spec} dropped during the benchmark and did not come back: {exc}",
            remedy="check the host is reachable, then run the benchmark again",
        ) from None
    info = raw.get("server_info") or {}
    cap = info.get("max_running_requests") if isinstance(info.get("max_running_requests"), int) else None
    levels = []
    for raw_level in raw["levels"]:
        level = level_result(raw_level, targets=targets)
        health = raw_level.get("server_health") or {}
        if health.get("ok") is False:
            said = f"GET {health.get('path') or '/'}: {health.get('error') or health.get('status')}"
            level = failed_level(level, check_server(ctx, args.port, said, since=started), args.port, cap)
        speculative = bool(info.get("speculative_algorithm"))
        levels.append(level.model_copy(update={"warnings": level_warnings(args, level, speculative)}))
    best = max([level for level in levels if level.valid] or levels, key=lambda level: level.output_tok_s)
    _, prompts = prompt_config(args, dataset)
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
        levels_not_run=[] if args.rates else list(args.levels[len(levels) :]),
        method=_method(args, raw["api"], prompts) + goodput_method(targets),
        warnings=_warnings(args, raw, levels)
        + _not_run_warning(args.levels[len(levels) :], levels)
        + _clock_warning(ctx.host.spec, clocks),
        goodput_targets=targets,
    )


def _host_clock(host: Host) -> float | None:
    """The host's clock, or None where it cannot be read (the comparison is then left out)."""
    try:
        return host.clock()
    except (HostError, OSError):
        return None


def _timed_local_run(
    ctx: ToolContext, args: BenchmarkArgs, config: dict[str, Any]
) -> tuple[dict[str, Any], tuple[float, float] | None]:
    """A local client's output, and (the host's seconds, this machine's seconds) its run took where the host's clock
    could be read before and after."""
    host_before = _host_clock(ctx.host)
    here_before = time.monotonic()
    raw = run_client(ctx, args, config)
    here_after = time.monotonic()
    host_after = _host_clock(ctx.host) if host_before is not None else None
    if host_before is None or host_after is None:
        return raw, None
    return raw, (host_after - host_before, here_after - here_before)


def _clock_warning(host: str, clocks: tuple[float, float] | None) -> list[str]:
    """A warning when a local client's seconds were not the host's: its clock advanced materially more or less."""
    if clocks is None:
        return []
    on_host, here = clocks
    if abs(on_host - here) <= max(CLOCK_MISMATCH_SHARE * here, CLOCK_MISMATCH_MIN_S):
        return []
    return [
        (
            f"the client ran here (client='local') and measured in this machine's seconds, but {host}'s clock "
            f"advanced {on_host:.1f} s while this machine's advanced {here:.1f} s: the figures are not in the host's "
            "seconds; run the client on the host (client='host', the default) for figures in the host's time"
        )
    ]


def _not_run_warning(not_run: list[int], levels: list[LevelResult]) -> list[str]:
    if not not_run or not levels:
        return []
    last = levels[-1]
    return [
        (
            f"levels {not_run} were not run: the server had failed at C={last.concurrency}; run them once that "
            "level's remedy is applied"
        )
    ]


def _bench_serving_warnings(args: BenchmarkArgs, result: BenchmarkResult) -> BenchmarkResult:
    """sglang.bench_serving's levels get the same per-level warnings (low acceptance, failures) as our client's."""
    speculative = result.speculative_algorithm is not None
    levels = [
        level.model_copy(update={"warnings": level_warnings(args, level, speculative)}) for level in result.levels
    ]
    per_level = level_notes(levels)
    return result.model_copy(
        update={
            "levels": levels,
            "warnings": per_level + result.warnings + _not_run_warning(result.levels_not_run, levels),
        }
    )
