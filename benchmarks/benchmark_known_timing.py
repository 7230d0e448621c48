"""The benchmark tool's timing error on this machine, against a server with known timing.

The reference server (tools/benchmark/reference_server.py) waits TTFT_MS, then sends a
PER_CHUNK-token chunk every CHUNK_MS on a fixed schedule, so every figure the tool
reports has a known value. The tool runs as the agent runs it (`run_benchmark`,
client on the host; here the host is this machine, `local`, so no SSH is needed:
over SSH only the result travels, the client still times on the host). Printed
beside each figure: its target, the error, and the tolerance the unit test used to
assert before it stopped asserting absolute timings (tests/tools/test_benchmark_known_timing.py
now asserts only what holds on any machine); `ok` or `OFF` says whether the figure
is inside it. Figures drift on a busy machine: run it with the machine otherwise idle.

1. closed-loop levels C = 1 and 8, two rounds of OUTPUT-token answers: TTFT,
   inter-chunk gap, ITL per token, TPOT, and tok/s against the schedule's ideal;
2. timed levels at C = 4 (0.5 s): cut (4,000-token answers, every stream decoding:
   the schedule's decode rate), drain and window (window against drain);
3. the C = 8 level again with the client's requests split over WORKERS processes
   (stream_client.py's `workers`), TTFT and tok/s beside the same targets.

    .venv/bin/python benchmarks/benchmark_known_timing.py [--repeat N]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specops.tools.benchmark import BenchmarkArgs, LevelResult, run_benchmark  # noqa: E402
from specops.tools.benchmark.statistics import level_result  # noqa: E402
from specops.tools.benchmark.sweep import client_config, run_client, server_url  # noqa: E402
from specops.tools.context import ToolContext  # noqa: E402
from specops.tools.hosts import LocalHost  # noqa: E402

REFERENCE_SERVER = ROOT / "tools" / "benchmark" / "reference_server.py"
TTFT_MS, CHUNK_MS, PER_CHUNK, OUTPUT = 40.0, 8.0, 4, 160
LEVELS = [1, 8]
TIMED_C, TIMED_S, CUT_OUTPUT = 4, 0.5, 4000
WORKERS = 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_reference() -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            str(REFERENCE_SERVER),
            "--port",
            str(port),
            "--ttft-ms",
            str(TTFT_MS),
            "--chunk-ms",
            str(CHUNK_MS),
            "--tokens-per-chunk",
            str(PER_CHUNK),
        ],
        # Its stderr is dropped: asyncio logs every write to a stream the client cut ("socket.send() raised").
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None and "listening" in proc.stdout.readline()
    return proc, port


def row(
    figure: str, measured: float | None, target: float, *, rel: float | None = None, abs_: float | None = None
) -> None:
    """One figure beside its target; the tolerance is the old test's (relative or absolute)."""
    if measured is None:
        print(f"  {figure:<34}{'n/a':>10}{target:>10.2f}")
        return
    diff = measured - target
    if abs_ is not None:
        limit, tolerance = abs_, f"+-{abs_:g}"
    else:
        assert rel is not None, "a figure has a relative or an absolute tolerance"
        limit, tolerance = rel * abs(target), f"+-{100 * rel:g}%"
    verdict = "ok" if abs(diff) <= limit else "OFF"
    print(f"  {figure:<34}{measured:>10.2f}{target:>10.2f}{100 * diff / target:>+9.1f}%{tolerance:>9}  {verdict}")


def header(title: str) -> None:
    print(title)
    print(f"  {'figure':<34}{'measured':>10}{'target':>10}{'error':>10}{'tol.':>9}")


def run_once(ctx: ToolContext, port: int) -> None:
    result = run_benchmark(ctx, BenchmarkArgs(port=port, levels=LEVELS, output_len=OUTPUT, rounds=2))
    decode_s = (OUTPUT / PER_CHUNK - 1) * CHUNK_MS / 1e3
    for level in result.levels:
        assert level.client is not None and level.inter_chunk_gap is not None, "specops' client reports both"
        header(
            f"C={level.concurrency}: {level.requests_completed} requests of {OUTPUT} tokens "
            f"(client CPU {level.client.cpu_fraction:.0%}, timer lag p99 {level.client.loop_lag_p99_ms:.2f} ms)"
        )
        row("TTFT p50 (ms)", level.ttft.p50_ms, TTFT_MS, abs_=4)
        row("inter-chunk gap p50 (ms)", level.inter_chunk_gap.p50_ms, CHUNK_MS, rel=0.1)
        row(
            "ITL per token p50 (ms)",
            level.itl_per_token.p50_ms if level.itl_per_token else None,
            CHUNK_MS / PER_CHUNK,
            rel=0.1,
        )
        row("TPOT p50 (ms)", level.tpot.p50_ms, decode_s * 1e3 / (OUTPUT - 1), rel=0.1)
        row("output tok/s", level.output_tok_s, OUTPUT * level.concurrency / (TTFT_MS / 1e3 + decode_s), rel=0.08)

    def timed(end: str, output: int) -> LevelResult:
        args = BenchmarkArgs(
            port=port, levels=[TIMED_C], output_len=output, duration_s=TIMED_S, end=end, warmup_requests=0
        )
        return run_benchmark(ctx, args).levels[0]

    cut, drained, windowed = timed("cut", CUT_OUTPUT), timed("drain", OUTPUT), timed("window", OUTPUT)
    header(
        f"timed levels, C={TIMED_C}, {TIMED_S:g} s: cut ({cut.requests_cut} streams of {CUT_OUTPUT} tokens cut), "
        f"drain ({drained.requests_completed} requests), window ({windowed.requests_completed} requests)"
    )
    row("cut: TTFT p50 (ms)", cut.ttft.p50_ms, TTFT_MS, abs_=4)
    row("cut: output tok/s (all decoding)", cut.output_tok_s, TIMED_C * PER_CHUNK / (CHUNK_MS / 1e3), rel=0.08)
    row("window: output tok/s vs drain's", windowed.output_tok_s, drained.output_tok_s, rel=0.05)

    args = BenchmarkArgs(port=port, levels=[LEVELS[-1]], output_len=OUTPUT, rounds=2)
    with server_url(ctx.host, args.port, args.client) as url:
        raw = run_client(ctx, args, {**client_config(args, url), "workers": WORKERS})
    level = level_result(raw["levels"][0])
    assert level.client is not None and level.inter_chunk_gap is not None, "specops' client reports both"
    header(
        f"C={level.concurrency} over {len(raw['levels'][0]['workers'])} worker processes: {level.requests_completed} "
        f"requests (client CPU {level.client.cpu_fraction:.0%} all processes, timer lag p99 "
        f"{level.client.loop_lag_p99_ms:.2f} ms)"
    )
    row("TTFT p50 (ms)", level.ttft.p50_ms, TTFT_MS, abs_=4)
    row("inter-chunk gap p50 (ms)", level.inter_chunk_gap.p50_ms, CHUNK_MS, rel=0.1)
    row("output tok/s", level.output_tok_s, OUTPUT * level.concurrency / (TTFT_MS / 1e3 + decode_s), rel=0.08)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="Runs, one after the other (the spread shows)")
    options = parser.parse_args()
    server, port = start_reference()
    try:
        with tempfile.TemporaryDirectory() as home, LocalHost() as local:
            ctx = ToolContext(host=local, home=home, allowed_roots=(home,))
            for i in range(options.repeat):
                if options.repeat > 1:
                    print(f"run {i + 1} of {options.repeat}")
                run_once(ctx, port)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
