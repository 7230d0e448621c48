"""The benchmark client's own ceiling and timing error on this machine, beside one peer client (GuideLLM).

Both clients drive the same server with known timing (tools/benchmark/reference_server.py)
in the same run:
1. timing error: the server waits TTFT_MS, then sends one token every CHUNK_MS;
   each client's measured TTFT, ITL and tok/s against those known values;
2. ingest ceiling: the server streams as fast as it can (--chunk-ms 0); the tok/s
   a client ingests is its ceiling here (the server shares the machine's cores, so
   this is a lower bound of the client's true ceiling).
Printed: both clients' figures and the ratio ours / peer.

The peer is installed in a separate venv under /tmp (it pulls torch: ~6.5 GB),
never into the project's: `python3 -m venv /tmp/peer-venv && /tmp/peer-venv/bin/pip
install guidellm`. Offline it needs a tokenizer: a tiny WordLevel tokenizer is
written to /tmp and passed to it.

    .venv/bin/python benchmarks/benchmark_client_ceiling.py
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from specops.tools.benchmark.statistics import level_result  # noqa: E402
from specops.tools.benchmark.sweep import CLIENT_SCRIPT  # noqa: E402

REFERENCE_SERVER = ROOT / "tools" / "benchmark" / "reference_server.py"
PEER_VENV = Path("/tmp/peer-venv")
TTFT_MS, CHUNK_MS = 50.0, 5.0
CONCURRENCY, OUTPUT, REQUESTS = 16, 200, 64
CEILING_CONCURRENCY, CEILING_OUTPUT, CEILING_REQUESTS = 32, 4000, 64


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_reference(chunk_ms: float) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(REFERENCE_SERVER), "--port", str(port), "--ttft-ms", str(TTFT_MS), "--chunk-ms", str(chunk_ms)],
        stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None and "listening" in proc.stdout.readline()
    return proc, port


def ours(port: int, concurrency: int, output: int, requests: int) -> dict:
    config = {
        "base_url": f"http://127.0.0.1:{port}", "api": "openai", "model": None, "output_len": output,
        "prompts": {"kind": "random_ids", "input_len": 64, "seed": 1}, "ignore_eos": True, "temperature": 0.0,
        "levels": [{"concurrency": concurrency, "num_requests": requests, "duration_s": None, "warmup_requests": 1,
                    "flush_cache": False}],
    }
    done = subprocess.run([sys.executable, str(CLIENT_SCRIPT)], input=json.dumps(config), capture_output=True, text=True, timeout=600)
    level = level_result(json.loads(done.stdout)["levels"][0])
    return {
        "tok_s": level.output_tok_s, "ttft_p50_ms": level.ttft.p50_ms, "itl_p50_ms": level.itl_per_token.p50_ms
        if level.itl_per_token else level.inter_chunk_gap.p50_ms, "cpu": level.client.cpu_fraction,
    }


def ensure_peer() -> Path:
    guidellm = PEER_VENV / "bin" / "guidellm"
    if not guidellm.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "--quiet", "guidellm"], check=True)
    return guidellm


def tiny_tokenizer(directory: Path) -> Path:
    """A WordLevel tokenizer (built with the peer venv's `tokenizers`) that transformers' AutoTokenizer loads."""
    code = (
        "import sys, json\n"
        "from tokenizers import Tokenizer, models, pre_tokenizers\n"
        "vocab = {'[UNK]': 0, **{f'w{i}': i + 1 for i in range(5000)}, 'tok': 5001}\n"
        "t = Tokenizer(models.WordLevel(vocab, unk_token='[UNK]'))\n"
        "t.pre_tokenizer = pre_tokenizers.Whitespace()\n"
        "t.save(sys.argv[1] + '/tokenizer.json')\n"
        "json.dump({'tokenizer_class': 'PreTrainedTokenizerFast', 'unk_token': '[UNK]', 'model_max_length': 100000},"
        " open(sys.argv[1] + '/tokenizer_config.json', 'w'))\n"
    )
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(PEER_VENV / "bin" / "python"), "-c", code, str(directory)], check=True)
    return directory


def peer(guidellm: Path, tokenizer: Path, port: int, concurrency: int, output: int, requests: int, work: Path) -> dict:
    out = work / f"guidellm-{port}.json"
    argv = [
        str(guidellm), "run",
        "--backend", f"kind=openai_http,target=http://127.0.0.1:{port},model=reference,request_format=/v1/completions",
        "--profile", f"kind=concurrent,streams={concurrency}",
        "--constraint", f"kind=max_requests,count={requests}",
        "--data", f"kind=synthetic_text,prompt_tokens=64,output_tokens={output}",
        "--tokenizer", f"kind=huggingface_auto,model={tokenizer}",
        "--output", f"kind=json,path={out}",
        "--disable-console-interactive",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"guidellm exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    benchmark = json.loads(out.read_text())["benchmarks"][0]
    metrics = benchmark["metrics"]
    if not metrics["output_tokens_per_second"]["successful"]["count"]:
        errored = benchmark["requests"].get("errored") or [{}]
        raise RuntimeError(f"guidellm completed no request; first error: {errored[0].get('error')}")

    def median(name: str) -> float:
        return float(metrics[name]["successful"]["median"])

    return {
        "tok_s": float(metrics["output_tokens_per_second"]["successful"]["mean"]),
        "ttft_p50_ms": median("time_to_first_token_ms"),
        "itl_p50_ms": median("inter_token_latency_ms"),
        "cpu": None,
    }


def row(name: str, figures: dict, ideal: dict) -> str:
    def err(key: str) -> str:
        return f"{100 * (figures[key] / ideal[key] - 1):+6.1f}%" if figures.get(key) and ideal.get(key) else "   n/a"

    return (
        f"{name:<10}{figures['tok_s']:>10.0f} {err('tok_s')}{figures['ttft_p50_ms']:>10.2f} {err('ttft_p50_ms')}"
        f"{figures['itl_p50_ms']:>9.3f} {err('itl_p50_ms')}"
    )


def main() -> None:
    decode_s = (OUTPUT - 1) * CHUNK_MS / 1e3
    ideal = {"tok_s": CONCURRENCY * OUTPUT / (TTFT_MS / 1e3 + decode_s), "ttft_p50_ms": TTFT_MS, "itl_p50_ms": CHUNK_MS}
    print(f"known timing: TTFT {TTFT_MS} ms, one token every {CHUNK_MS} ms, C={CONCURRENCY}, {OUTPUT} tokens, {REQUESTS} requests")
    guidellm, peer_error = None, None
    try:
        guidellm = ensure_peer()
    except (subprocess.CalledProcessError, OSError) as exc:
        peer_error = f"could not install guidellm into {PEER_VENV}: {exc}"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tokenizer = tiny_tokenizer(work / "tokenizer") if guidellm else None
        results: dict[str, dict[str, dict]] = {"timing": {}, "ceiling": {}}
        for mode, chunk_ms, c, n, reqs in (("timing", CHUNK_MS, CONCURRENCY, OUTPUT, REQUESTS),
                                           ("ceiling", 0.0, CEILING_CONCURRENCY, CEILING_OUTPUT, CEILING_REQUESTS)):
            server, port = start_reference(chunk_ms)
            try:
                results[mode]["specops"] = ours(port, c, n, reqs)
                if guidellm and tokenizer and peer_error is None:
                    try:
                        results[mode]["guidellm"] = peer(guidellm, tokenizer, port, c, n, reqs, work)
                    except (RuntimeError, KeyError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
                        peer_error = f"guidellm run failed: {exc}"
            finally:
                server.terminate()
                server.wait()
    print(f"{'client':<10}{'tok/s':>10} {'err':>7}{'TTFT p50':>10} {'err':>7}{'ITL p50':>9} {'err':>7}")
    for name, figures in results["timing"].items():
        print(row(name, figures, ideal))
    print(f"\ningest ceiling: server streams as fast as it can, C={CEILING_CONCURRENCY}, {CEILING_OUTPUT} tokens per request")
    for name, figures in results["ceiling"].items():
        cpu = f" (client CPU {figures['cpu']:.0%} of a core)" if figures.get("cpu") is not None else ""
        print(f"{name:<10}{figures['tok_s']:>10.0f} tok/s{cpu}")
    if "guidellm" in results["ceiling"]:
        ratio = results["ceiling"]["specops"]["tok_s"] / results["ceiling"]["guidellm"]["tok_s"]
        print(f"ratio specops / guidellm ingest ceiling: {ratio:.2f}")
    if peer_error:
        print(f"\npeer: {peer_error}")


if __name__ == "__main__":
    main()
