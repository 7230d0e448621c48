"""The benchmark client's own ceiling and timing error on this machine, beside one peer client (GuideLLM).

Both clients drive the same server with known timing (tools/benchmark/reference_server.py)
in the same run:
1. timing error: the server waits TTFT_MS, then sends one token every CHUNK_MS;
   each client's measured tok/s, TTFT and ITL against those known values;
2. ingest ceiling: the server streams as fast as it can (--chunk-ms 0); the tok/s
   a client ingests is its ceiling here. The server shares the machine's cores, so
   this is a lower bound of the client's true ceiling; the server's own CPU share is
   printed beside it to show which side was the limit. A few rounds, the clients
   alternating, and the median: one round lasts seconds and the peer's varies widely.
Printed: both clients' figures beside their targets, and the ratio ours / peer of the
median ingest ceilings (target RATIO_TARGET). Our client runs with its default worker
count (stream_client.default_workers: on a 2-core machine one process, the other core
being the server's), reading each response in blocks; GuideLLM spreads its requests
over several worker processes. Timing targets: our TTFT p50 within TTFT_TOLERANCE and
tok/s within TOK_S_TOLERANCE of the known schedule.

Same definitions for both, so the figures compare:
- tok/s: server-counted output tokens (usage) / first dispatch .. last response
  (our `output_tok_s_overall`; GuideLLM's output_token_count / benchmark duration);
- TTFT: median, request start to the first streamed token;
- ITL: median; ours is each chunk gap over the tokens it carried, GuideLLM's is per
  request (last token - first token) / (tokens - 1), weighted by tokens: with one
  token per chunk both stand for the same known CHUNK_MS.
Our client takes one warm-up request per run; GuideLLM takes none (its default).

The peer is installed in its own venv under /tmp (it pulls torch: ~6 GB), never into
the project's; this script installs it when missing and reuses it after. Offline it
needs a tokenizer: benchmarks/peer/byte_tokenizer.py writes one.

    .venv/bin/python benchmarks/benchmark_client_ceiling.py
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specops.tools.benchmark.statistics import level_result  # noqa: E402
from specops.tools.benchmark.sweep import CLIENT_SCRIPT  # noqa: E402

REFERENCE_SERVER = ROOT / "tools" / "benchmark" / "reference_server.py"
BYTE_TOKENIZER = ROOT / "benchmarks" / "peer" / "byte_tokenizer.py"
PEER_VENV = Path("/tmp/peer-venv")
# The version this comparison was made with (GuideLLM's JSON layout changes between releases).
PEER_PACKAGE = "guidellm==0.8.1"
TTFT_MS, CHUNK_MS = 50.0, 5.0
CONCURRENCY, OUTPUT, REQUESTS = 16, 200, 64
CEILING_CONCURRENCY, CEILING_OUTPUT, CEILING_REQUESTS = 32, 4000, 64
# A ceiling run lasts seconds and the peer's varies by tens of percent between runs: take the median of a few.
CEILING_ROUNDS = 3
PROMPT_TOKENS = 64
RATIO_TARGET = 1.5  # ours / GuideLLM, median ingest ceilings
TTFT_TOLERANCE, TOK_S_TOLERANCE = 0.03, 0.01  # our timing error against the known schedule


class ClientFigures(BaseModel):
    """One client's run against the reference server."""

    completed: int
    failed: int
    output_tokens: int
    duration_s: float
    tok_s: float
    ttft_p50_ms: float
    itl_p50_ms: float
    client_cpu: float | None  # CPU seconds / duration, all its processes; None where the client does not report it
    workers: int | None = None  # our client's worker processes (its default for the level)
    event_loop: str | None = None
    server_cpu: float | None = None  # the reference server's CPU seconds / duration over the same run
    warnings: list[str] = []


class PeerUnavailable(RuntimeError):
    """The peer could not be installed or produced no figures; the message says why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_reference(chunk_ms: float) -> tuple[subprocess.Popen[str], int]:
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
            str(chunk_ms),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and "listening" in proc.stdout.readline()
    return proc, port


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process so far, from /proc (utime and stime, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ours(port: int, concurrency: int, output: int, requests: int) -> ClientFigures:
    config = {
        "base_url": f"http://127.0.0.1:{port}",
        "api": "openai",
        "model": None,
        "output_len": output,
        "prompts": {"kind": "random_ids", "input_len": PROMPT_TOKENS, "seed": 1},
        "ignore_eos": True,
        "temperature": 0.0,
        "levels": [
            {
                "concurrency": concurrency,
                "num_requests": requests,
                "duration_s": None,
                "warmup_requests": 1,
                "flush_cache": False,
            }
        ],
    }
    done = subprocess.run(
        [sys.executable, str(CLIENT_SCRIPT)], input=json.dumps(config), capture_output=True, text=True, timeout=600
    )
    raw = json.loads(done.stdout or "{}")
    if done.returncode != 0 or "levels" not in raw:
        raise RuntimeError(f"our client exited {done.returncode}: {raw.get('fatal')}\n{done.stderr[-2000:]}")
    level = level_result(raw["levels"][0])
    itl = level.itl_per_token or level.inter_chunk_gap
    assert level.output_tok_s_overall is not None and level.ttft.p50_ms is not None and itl and itl.p50_ms is not None
    return ClientFigures(
        completed=level.requests_completed,
        failed=level.requests_failed,
        output_tokens=level.total_output_tokens,
        duration_s=level.duration_s,
        tok_s=level.output_tok_s_overall,
        ttft_p50_ms=level.ttft.p50_ms,
        itl_p50_ms=itl.p50_ms,
        client_cpu=level.client.cpu_fraction if level.client else None,
        workers=len(raw["levels"][0].get("workers") or []) or 1,
        event_loop=raw.get("event_loop"),
        warnings=level.errors,
    )


def ensure_peer() -> Path:
    """GuideLLM's CLI in PEER_VENV, installed there first when it is missing or broken."""
    python, guidellm = PEER_VENV / "bin" / "python", PEER_VENV / "bin" / "guidellm"
    probe = [str(python), "-c", "import guidellm, tokenizers, transformers"]
    if guidellm.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return guidellm
    print(f"installing {PEER_PACKAGE} into {PEER_VENV} (pulls torch and transformers, ~6 GB: minutes)...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", PEER_PACKAGE], check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        raise PeerUnavailable(
            f"could not install {PEER_PACKAGE} into {PEER_VENV} ({exc}); pip's messages are above"
        ) from exc
    if subprocess.run(probe, capture_output=True).returncode != 0 or not guidellm.exists():
        raise PeerUnavailable(
            f"{PEER_PACKAGE} installed into {PEER_VENV}, but `{' '.join(probe)}` fails or bin/guidellm is missing"
        )
    return guidellm


def byte_tokenizer(directory: Path) -> Path:
    """A tokenizer directory for the peer (it tokenizes its own prompts; offline, none can come from the Hub)."""
    done = subprocess.run(
        [str(PEER_VENV / "bin" / "python"), str(BYTE_TOKENIZER), str(directory)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise PeerUnavailable(f"could not write the peer's tokenizer:\n{done.stderr[-2000:]}")
    return directory


def last_lines(text: str, count: int) -> str:
    return "\n".join([line for line in text.splitlines() if line.strip()][-count:])


def first_backend_error(log: Path) -> str:
    """GuideLLM logs a failed request's exception only at DEBUG level, into its log file: the first one, or ''."""
    if not log.exists():
        return ""
    for line in log.read_text(errors="replace").splitlines():
        if "Backend exception" in line:
            # The file holds one JSON record per line; its text ends with the exception's own line.
            text = json.loads(line)["text"] if line.startswith("{") else line
            return f"{text.splitlines()[0]}\n{last_lines(text, 1)}"
    return ""


def peer(
    guidellm: Path, tokenizer: Path, port: int, concurrency: int, output: int, requests: int, work: Path
) -> ClientFigures:
    run_dir = Path(tempfile.mkdtemp(prefix="guidellm-", dir=work))  # its own: GuideLLM appends to its log file
    out, log = run_dir / "benchmarks.json", run_dir / "guidellm.log"
    argv = [
        str(guidellm),
        "run",
        "--backend",
        f"kind=openai_http,target=http://127.0.0.1:{port},model=reference,request_format=/v1/completions",
        "--profile",
        f"kind=concurrent,streams={concurrency}",
        "--constraint",
        f"kind=max_requests,count={requests}",
        "--data",
        f"kind=synthetic_text,prompt_tokens={PROMPT_TOKENS},output_tokens={output}",
        "--tokenizer",
        f"kind=huggingface_auto,model={tokenizer}",
        "--output",
        f"kind=json,path={out}",
        "--disable-console-interactive",
    ]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(run_dir),
        "HF_HUB_OFFLINE": "1",
        "GUIDELLM__LOGGING__LOG_FILE": str(log),
        "GUIDELLM__LOGGING__LOG_FILE_LEVEL": "DEBUG",
    }
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=run_dir)
    except subprocess.TimeoutExpired as exc:
        raise PeerUnavailable(f"guidellm did not finish in {exc.timeout} s") from exc
    if done.returncode != 0 or not out.exists():
        cause = first_backend_error(log)
        raise PeerUnavailable(
            f"guidellm exited {done.returncode}: {last_lines(done.stderr or done.stdout, 3)}"
            + (f"\nfirst failed request, from its log:\n{cause}" if cause else "")
        )
    benchmark = json.loads(out.read_text())["benchmarks"][0]
    metrics = benchmark["metrics"]
    totals = metrics["request_totals"]
    if not totals["successful"]:
        raise PeerUnavailable(f"guidellm completed no request ({totals}); first error: {first_backend_error(log)}")

    def successful(name: str) -> dict[str, Any]:
        figures: dict[str, Any] = metrics[name]["successful"]
        return figures

    tokens = int(successful("output_token_count")["total_sum"])
    return ClientFigures(
        completed=totals["successful"],
        failed=totals["errored"] + totals["incomplete"],
        output_tokens=tokens,
        duration_s=benchmark["duration"],
        tok_s=tokens / benchmark["duration"],
        ttft_p50_ms=successful("time_to_first_token_ms")["median"],
        itl_p50_ms=successful("inter_token_latency_ms")["median"],
        client_cpu=None,
        warnings=[w["message"] for w in benchmark.get("warnings") or []],
    )


def with_server_cpu(server: subprocess.Popen[str], measure: Callable[..., ClientFigures]) -> ClientFigures:
    """Runs one client and adds the server's CPU share over that client's measured duration."""
    before = cpu_seconds(server.pid)
    figures = measure()
    return figures.model_copy(update={"server_cpu": (cpu_seconds(server.pid) - before) / figures.duration_s})


def error(measured: float, known: float) -> str:
    return f"{100 * (measured / known - 1):+6.1f}%"


def verdict(measured: float, known: float, tolerance: float) -> str:
    return "ok" if abs(measured / known - 1) <= tolerance else "OFF"


def share(fraction: float | None) -> str:
    return f"{fraction:>6.0%}" if fraction is not None else "   n/a"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def print_results(results: dict[str, dict[str, list[ClientFigures]]], peer_error: str | None) -> None:
    decode_s = (OUTPUT - 1) * CHUNK_MS / 1e3
    ideal_tok_s = CONCURRENCY * OUTPUT / (TTFT_MS / 1e3 + decode_s)
    print(
        f"timing error: the server waits {TTFT_MS:g} ms, then sends one token every {CHUNK_MS:g} ms; "
        f"C={CONCURRENCY}, {OUTPUT} tokens, {REQUESTS} requests (ideal {ideal_tok_s:.0f} tok/s)"
    )
    print(f"{'client':<10}{'done':>6}{'tok/s':>9}{'err':>8}{'TTFT p50':>10}{'err':>8}{'ITL p50':>9}{'err':>8}")
    for name, (f,) in results["timing"].items():
        print(
            f"{name:<10}{f.completed:>6}{f.tok_s:>9.0f}{error(f.tok_s, ideal_tok_s):>8}{f.ttft_p50_ms:>10.2f}"
            f"{error(f.ttft_p50_ms, TTFT_MS):>8}{f.itl_p50_ms:>9.3f}{error(f.itl_p50_ms, CHUNK_MS):>8}"
        )
    if "specops" in results["timing"]:
        (f,) = results["timing"]["specops"]
        print(
            f"specops targets: tok/s {error(f.tok_s, ideal_tok_s).strip()} (within +-{100 * TOK_S_TOLERANCE:g}%: "
            f"{verdict(f.tok_s, ideal_tok_s, TOK_S_TOLERANCE)}), TTFT p50 {error(f.ttft_p50_ms, TTFT_MS).strip()} "
            f"(within +-{100 * TTFT_TOLERANCE:g}%: {verdict(f.ttft_p50_ms, TTFT_MS, TTFT_TOLERANCE)}); "
            f"{f.workers} worker process(es), {f.event_loop} loop"
        )
    print(
        f"\ningest ceiling: the server streams as fast as it can; C={CEILING_CONCURRENCY}, "
        f"{CEILING_OUTPUT} tokens per request, {CEILING_REQUESTS} requests; {CEILING_ROUNDS} rounds, clients alternating"
    )
    print(
        f"{'client':<10}{'round':>6}{'done':>6}{'tokens':>9}{'seconds':>9}{'tok/s':>9}{'client CPU':>12}{'server CPU':>12}"
        f"{'workers':>9}"
    )
    for round_index in range(CEILING_ROUNDS):
        for name, rounds in results["ceiling"].items():
            if round_index < len(rounds):
                f = rounds[round_index]
                print(
                    f"{name:<10}{round_index + 1:>6}{f.completed:>6}{f.output_tokens:>9}{f.duration_s:>9.2f}{f.tok_s:>9.0f}"
                    f"{share(f.client_cpu):>12}{share(f.server_cpu):>12}{f.workers or 'n/a':>9}"
                )
    print(
        f"(CPU: seconds / run duration, all of a client's processes; 100% = one core of this machine's "
        f"{os.cpu_count()}; client + server near {100 * (os.cpu_count() or 1)}%: the machine, not a client, was the limit)"
    )
    ceilings = {name: median([f.tok_s for f in rounds]) for name, rounds in results["ceiling"].items()}
    for name, tok_s in ceilings.items():
        print(f"{name} ingest ceiling, median of {len(results['ceiling'][name])}: {tok_s:.0f} tok/s")
    if "guidellm" in ceilings:
        ratios = [
            o.tok_s / g.tok_s
            for o, g in zip(results["ceiling"]["specops"], results["ceiling"]["guidellm"], strict=False)
        ]
        ratio = ceilings["specops"] / ceilings["guidellm"]
        print(
            f"ratio specops / guidellm ingest ceiling: {ratio:.2f} (per round {min(ratios):.2f} .. {max(ratios):.2f}); "
            f"target >= {RATIO_TARGET:g}: {'ok' if ratio >= RATIO_TARGET else 'OFF'}"
        )
    for mode, by_client in results.items():
        for name, rounds in by_client.items():
            for warning in sorted({w for f in rounds for w in f.warnings}):
                print(f"{mode} {name} warning: {warning}")
    if peer_error:
        print(f"\npeer: {peer_error}")


def main() -> None:
    guidellm: Path | None = None
    peer_error: str | None = None
    results: dict[str, dict[str, list[ClientFigures]]] = {"timing": {}, "ceiling": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        try:
            guidellm = ensure_peer()
            tokenizer = byte_tokenizer(work / "tokenizer")
        except PeerUnavailable as exc:
            guidellm, peer_error = None, str(exc)
        for mode, chunk_ms, c, n, reqs, rounds in (
            ("timing", CHUNK_MS, CONCURRENCY, OUTPUT, REQUESTS, 1),
            ("ceiling", 0.0, CEILING_CONCURRENCY, CEILING_OUTPUT, CEILING_REQUESTS, CEILING_ROUNDS),
        ):
            server, port = start_reference(chunk_ms)
            try:
                for _ in range(rounds):
                    results[mode].setdefault("specops", []).append(
                        with_server_cpu(server, lambda port=port, c=c, n=n, reqs=reqs: ours(port, c, n, reqs))
                    )
                    if guidellm is None:
                        continue
                    try:
                        figures = with_server_cpu(
                            server,
                            lambda g=guidellm, port=port, c=c, n=n, reqs=reqs: peer(
                                g, tokenizer, port, c, n, reqs, work
                            ),
                        )
                        results[mode].setdefault("guidellm", []).append(figures)
                    except PeerUnavailable as exc:
                        guidellm, peer_error = None, f"guidellm run failed ({mode}): {exc}"
            finally:
                server.terminate()
                server.wait()
    print_results(results, peer_error)


if __name__ == "__main__":
    main()
