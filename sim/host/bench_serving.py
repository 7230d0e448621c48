"""`python -m sglang.bench_serving` on a sim host: SGLang's serving benchmark, driving the simulator over HTTP.

The host's stub `sglang/bench_serving.py` (and `sglang/benchmark/serving.py` where
the release has it: 0.5.23) calls `main(sys.argv[1:], root)`. It does what the
host's release of SGLang's benchmark does, with its flags, its request functions
and its figures:

- arguments: that release's parser, built from its flags as read from its wheel
  (specops.sglang_releases: names, types, defaults, choices); an unknown flag or
  a bad value is refused by argparse (exit 2);
- prompts: the `random-ids` dataset: lengths drawn uniformly from
  [max(int(len * range_ratio), 1), len] (`--random-range-ratio 1.0`: exact),
  prompts made of random tokens of the host's tokenizer (the simulator's: about
  four characters a token, so a prompt of n tokens is 4n characters). `random`
  samples its token ids from ShareGPT, which SGLang downloads from the Hub unless
  `--dataset-path` names a readable JSON copy: without one it fails as SGLang
  does offline (huggingface_hub's LocalEntryNotFoundError, exit 1). Other
  datasets need files or downloads this host does not have, and fail as SGLang
  does when its dataset cannot be read;
- requests: one aiohttp session, streamed; `--backend sglang` posts to
  `/generate` and counts tokens from `meta_info.completion_tokens`, splitting
  each chunk gap over the chunk's new tokens (ITL per token); the OpenAI
  backends post to `/v1/completions` or `/v1/chat/completions`, count
  `usage.completion_tokens` (else the requested length) and take one ITL per
  chunk; warm-up requests (min(output_len, 32) tokens) first, then
  `/flush_cache` when asked, a 1 s pause, and all requests under a
  `--max-concurrency` semaphore with Poisson arrivals at `--request-rate`
  (inf: all at once);
- figures: SGLang's calculate_metrics (duration = first dispatch to after the
  final `/server_info`, output_throughput = output tokens / duration,
  concurrency = sum of latencies / duration, TPOT = (latency - ttft) / (n - 1),
  numpy-style linear percentiles, population std), accept_length from
  `internal_states[0].avg_spec_accept_length`, the summary table it prints,
  and one JSON line appended to `--output-file` with exactly the release's
  field names (0.5.23 adds p90 and p95 of every latency). No num_prompts: a
  reader counts failures as prompts sent - completed.

Times are this host's own clock, as they are a real host's: the host's `python`
runs this benchmark on the modelled host's clock (host_time.py: its perf_counter,
its sleeps and asyncio's waits run at the modelled host's pace), so its figures
(durations, latencies, throughputs, the Poisson arrivals at --request-rate) are
the modelled host's, and a tool reading them converts nothing. Host ports are virtual: a
connection to 127.0.0.1:PORT goes to the real port the world's port registry
names for it, as it would reach the server on a real host.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import numpy as np

from ...sglang_releases import facts
from ...sglang_releases.facts import LaunchFlag, ReleaseFacts
from ..serving.tokenizer import VOCAB, count_text_tokens
from ..world.layout import WorldLayout
from ..world.ports import read_entry
from ..world.state_view import load_state_view

# --backend's choices are computed when SGLang runs (ASYNC_REQUEST_FUNCS), so the wheel's facts do not list them.
BACKENDS = (
    "sglang",
    "sglang-native",
    "sglang-oai",
    "sglang-oai-chat",
    "vllm",
    "vllm-chat",
    "lmdeploy",
    "lmdeploy-chat",
    "trt",
    "gserver",
    "truss",
)
NATIVE = ("sglang", "sglang-native")
COMPLETIONS = ("sglang-oai", "vllm", "lmdeploy")
CHAT = ("sglang-oai-chat", "vllm-chat", "lmdeploy-chat")
SHAREGPT_REPO_ID = "anon8231489123/ShareGPT_Vicuna_unfiltered"  # what `random` downloads its token ids from
SHAREGPT_FILENAME = "ShareGPT_V3_unfiltered_cleaned_split.json"
DEFAULT_PORTS = {
    "sglang": 30000,
    "sglang-native": 30000,
    "sglang-oai": 30000,
    "lmdeploy": 23333,
    "vllm": 8000,
    "trt": 8000,
    "gserver": 9988,
    "truss": 8080,
}
CHARS_PER_TOKEN = 4  # the simulator's tokenizer (specops.sim.serving.tokenizer)
AIOHTTP_TIMEOUT_S = 6 * 60 * 60
AIOHTTP_READ_BUFSIZE = 10 * 1024**2
LOOPBACK = ("127.0.0.1", "localhost", "0.0.0.0", "::1")


def _flag_type(name: str | None) -> Any:
    """The argparse type of a flag; SGLang's own validators (`_finite_positive_float`, ...) by what they return."""
    if name in ("int", "float", "str"):
        return {"int": int, "float": float, "str": str}[name]
    return float if name and "float" in name else str


def _add_flag(p: argparse.ArgumentParser, flag: LaunchFlag) -> None:
    kind = flag.kind
    if kind in ("store_true", "deprecated_store_true"):
        p.add_argument(*flag.names, dest=flag.dest, action="store_true", default=bool(flag.default))
        return
    if kind == "store_false":
        p.add_argument(*flag.names, dest=flag.dest, action="store_false", default=flag.default is not False)
        return
    kwargs: dict[str, Any] = {"dest": flag.dest, "type": _flag_type(flag.type), "default": flag.default}
    if kind == "append":
        kwargs["action"] = "append"
    if flag.nargs is not None:
        kwargs["nargs"] = flag.nargs
    if flag.choices is not None:
        kwargs["choices"] = list(flag.choices)
    if flag.dest == "backend":
        kwargs["choices"] = list(BACKENDS)
    if flag.dest == "request_rate" and flag.default is None:
        kwargs["default"] = float("inf")  # SGLang's default; inf does not survive the facts' JSON
    p.add_argument(*flag.names, **kwargs)


def build_parser(release: ReleaseFacts | None = None) -> argparse.ArgumentParser:
    """The release's bench_serving parser: the same flags, defaults and choices (the newest modelled by default)."""
    release = release or facts.load(facts.LATEST)
    p = argparse.ArgumentParser(description="Benchmark the online serving throughput.")
    for flag in release.bench_serving.flags:
        _add_flag(p, flag)
    return p


# -- the host's network: virtual ports ------------------------------------------------------------


def real_url(url: str, layout: WorldLayout) -> str:
    """The URL that reaches what `url` names on this host: a loopback port through the port registry."""
    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK or parts.port is None:
        return url
    entry = read_entry(layout, parts.port)
    if entry is None or entry.real_port is None:
        return url  # nothing of the world's holds it: connect to it as named (refused, most likely)
    return urlunsplit((parts.scheme, f"127.0.0.1:{entry.real_port}", parts.path, parts.query, parts.fragment))


# -- requests -------------------------------------------------------------------------------------


@dataclass
class DatasetRow:
    prompt: str | list[int]
    prompt_len: int
    output_len: int


@dataclass
class RequestOutput:
    generated_text: str = ""
    success: bool = False
    latency: float = 0.0
    ttft: float = 0.0
    itl: list[float] = field(default_factory=list)
    prompt_len: int = 0
    error: str = ""
    output_len: int = 0
    start_time: float = 0.0


class LocalEntryNotFoundError(FileNotFoundError):
    """huggingface_hub's error when a file is neither reachable on the Hub nor in the local cache."""


LocalEntryNotFoundError.__module__ = "huggingface_hub.errors"  # the traceback names it as SGLang's run does


def _valid_json(path: str) -> bool:
    """SGLang's is_file_valid_json: a file that parses as JSON."""
    if not path or not os.path.isfile(path):
        return False
    try:
        with open(path) as f:
            json.load(f)
        return True
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        print(f"{path} exists but json loading fails, thus treat as invalid file")
        return False


def download_and_cache_hf_file(repo_id: str, filename: str, repo_type: str = "dataset") -> str:
    """hf_hub_download of the dataset: this host reaches no Hub with datasets, so it fails as offline."""
    raise LocalEntryNotFoundError(
        "An error happened while trying to locate the file on the Hub and we cannot find the requested files in the "
        "local cache. Please check your connection and try again or make sure your Internet connection is on."
    )


def sample_random_requests(args: argparse.Namespace, rng: random.Random) -> list[DatasetRow]:
    def lengths(full: int) -> list[int]:
        low = max(int(full * args.random_range_ratio), 1)
        return [rng.randint(low, max(full, low)) for _ in range(args.num_prompts)]

    inputs, outputs = lengths(args.random_input_len), lengths(args.random_output_len)
    if args.dataset_name == "random" and not _valid_json(args.dataset_path):
        # `random` takes its token ids from ShareGPT and downloads it when no valid --dataset-path is given.
        download_and_cache_hf_file(repo_id=SHAREGPT_REPO_ID, filename=SHAREGPT_FILENAME)
    rows = []
    for n_in, n_out in zip(inputs, outputs, strict=False):
        if args.tokenize_prompt:
            prompt: str | list[int] = [rng.randrange(1, 160_000) for _ in range(n_in)]
        else:
            words: list[str] = []
            chars = 0
            while chars < n_in * CHARS_PER_TOKEN:
                words.append(rng.choice(VOCAB))
                chars += len(words[-1])
            prompt = "".join(words)[: n_in * CHARS_PER_TOKEN]
            assert count_text_tokens(prompt) == n_in
        rows.append(DatasetRow(prompt=prompt, prompt_len=n_in, output_len=n_out))
    print(f"#Input tokens: {sum(inputs)}")
    print(f"#Output tokens: {sum(outputs)}")
    return rows


def _lines(chunk: bytes, prefix: str) -> str:
    text = chunk.decode("utf-8")
    return text[len(prefix) :] if text.startswith(prefix) else text


async def request_native(
    session: aiohttp.ClientSession,
    args: argparse.Namespace,
    api_url: str,
    row: DatasetRow,
    output_len: int,
    extra: dict[str, Any],
) -> RequestOutput:
    payload = {
        ("text" if isinstance(row.prompt, str) else "input_ids"): row.prompt,
        "sampling_params": {
            "temperature": 0.0,
            "max_new_tokens": output_len,
            "ignore_eos": not args.disable_ignore_eos,
        },
        "stream": not args.disable_stream,
        "lora_path": None,
        "return_logprob": args.return_logprob,
        "logprob_start_len": -1,
        **extra,
    }
    out = RequestOutput(prompt_len=row.prompt_len)
    n_tokens, last_n, ttft = output_len, 0, 0.0
    st = time.perf_counter()
    out.start_time = st
    latest = st
    latency = 0.0
    try:
        async with session.post(url=api_url, json=payload) as response:
            if response.status == 200:
                async for raw in response.content:
                    raw = raw.strip()
                    if not raw:
                        continue
                    chunk = _lines(raw, "data: ")
                    latency = time.perf_counter() - st
                    if chunk == "[DONE]":
                        continue
                    data = json.loads(chunk)
                    if data.get("text"):
                        now = time.perf_counter()
                        out.generated_text = data["text"]
                        n_tokens = data["meta_info"]["completion_tokens"]
                        if ttft == 0.0:
                            ttft = now - st
                            out.ttft = ttft
                        else:
                            new = n_tokens - last_n
                            if new == 0:
                                continue
                            out.itl.extend([(now - latest) / new] * new)
                        latest = now
                        last_n = n_tokens
                out.success, out.latency, out.output_len = True, latency, n_tokens
            else:
                out.error = response.reason or ""
    except Exception:
        out.error = "".join(traceback.format_exception(*sys.exc_info()))
        print(f"output.error={out.error!r}")
    return out


async def request_openai(
    session: aiohttp.ClientSession,
    args: argparse.Namespace,
    api_url: str,
    row: DatasetRow,
    output_len: int,
    extra: dict[str, Any],
    model: str,
    chat: bool,
) -> RequestOutput:
    payload: dict[str, Any] = {
        "model": model,
        "temperature": 0.0,
        "stream": not args.disable_stream,
        "ignore_eos": not args.disable_ignore_eos,
    }
    if chat:
        payload.update(messages=[{"role": "user", "content": row.prompt}], max_completion_tokens=output_len)
    else:
        payload.update(prompt=row.prompt, best_of=1, max_tokens=output_len)
    payload.update(extra)
    headers = {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"} if os.environ.get("OPENAI_API_KEY") else {}
    out = RequestOutput(prompt_len=row.prompt_len)
    n_tokens, ttft, text = output_len, 0.0, ""
    st = time.perf_counter()
    out.start_time = st
    latest = st
    latency = 0.0
    try:
        async with session.post(url=api_url, json=payload, headers=headers) as response:
            if response.status != 200:
                out.error = response.reason or ""
                return out
            if args.disable_stream:
                body = await response.json()
                choice = body["choices"][0]
                out.generated_text = choice["message"]["content"] if chat else choice["text"]
                out.latency = out.ttft = time.perf_counter() - st
                out.output_len = (body.get("usage") or {}).get("completion_tokens", output_len)
                out.success = True
                return out
            async for raw in response.content:
                raw = raw.strip()
                if not raw:
                    continue
                chunk = _lines(raw, "data: ")
                latency = time.perf_counter() - st
                if chunk == "[DONE]":
                    continue
                data = json.loads(chunk)
                choices = data.get("choices") or [{}]
                piece = (choices[0].get("delta") or {}).get("content", "") if chat else choices[0].get("text", "")
                if piece:
                    now = time.perf_counter()
                    if ttft == 0.0:
                        ttft = now - st
                        out.ttft = ttft
                    else:
                        out.itl.append(now - latest)
                    latest = now
                    text += piece
                n_tokens = (data.get("usage") or {}).get("completion_tokens", n_tokens)
            out.generated_text, out.success, out.latency, out.output_len = text, True, latency, n_tokens
    except Exception:
        out.error = "".join(traceback.format_exception(*sys.exc_info()))
    return out


# -- figures --------------------------------------------------------------------------------------


# As SGLang's calculate_metrics computes them: numpy's defaults (linear percentiles, population std),
# over `values or 0` so that no values give 0.
def percentile(values: list[float], q: float) -> float:
    """q in [0, 100]."""
    return float(np.percentile(values or 0, q))


def mean(values: list[float]) -> float:
    return float(np.mean(values or 0))


def std(values: list[float]) -> float:
    return float(np.std(values or 0))


def _latency_stats(name: str, values_s: list[float]) -> dict[str, float]:
    ms = 1000.0
    return {
        f"mean_{name}": mean(values_s) * ms,
        f"median_{name}": percentile(values_s, 50) * ms,
        f"std_{name}": std(values_s) * ms,
        f"p90_{name}": percentile(values_s, 90) * ms,
        f"p95_{name}": percentile(values_s, 95) * ms,
        f"p99_{name}": percentile(values_s, 99) * ms,
    }


def calculate_metrics(
    rows: list[DatasetRow], outputs: list[RequestOutput], dur_s: float
) -> tuple[dict[str, Any], list[int]]:
    output_lens, retokenized, ttfts, tpots, itls, e2e = [], [], [], [], [], []
    total_input = completed = 0
    for row, out in zip(rows, outputs, strict=False):
        if not out.success:
            output_lens.append(0)
            retokenized.append(0)
            continue
        output_lens.append(out.output_len)
        retokenized.append(count_text_tokens(out.generated_text) if out.generated_text else 0)
        total_input += row.prompt_len
        if out.output_len > 1:
            tpots.append((out.latency - out.ttft) / (out.output_len - 1))
        itls += out.itl
        ttfts.append(out.ttft)
        e2e.append(out.latency)
        completed += 1
    if completed == 0:
        print(
            "UserWarning: All requests failed. This is likely due to a misconfiguration on the benchmark arguments.",
            file=sys.stderr,
        )
    peak_tok_s, peak_requests = 0.0, 0
    ok = [o for o in outputs if o.success]
    if ok:
        start = min(o.start_time for o in ok)
        seconds = int(math.ceil(max(o.start_time + o.latency for o in ok) - start)) + 1
        tokens, running = [0] * seconds, [0] * seconds
        for o in ok:
            t = o.start_time + o.ttft
            times = [t]
            for gap in o.itl:
                t += gap
                times.append(t)
            for t in times:
                if 0 <= int(t - start) < seconds:
                    tokens[int(t - start)] += 1
            for s in range(int(o.start_time - start), min(int(o.start_time + o.latency - start) + 1, seconds)):
                running[s] += 1
        peak_tok_s, peak_requests = float(max(tokens)), int(max(running))
    total_output = sum(output_lens)
    ms = 1000.0
    metrics = {
        "completed": completed,
        "total_input_tokens": total_input,
        "total_input_text_tokens": total_input,
        "total_input_vision_tokens": 0,
        "total_output_tokens": total_output,
        "total_output_tokens_retokenized": sum(retokenized),
        "request_throughput": completed / dur_s,
        "input_throughput": total_input / dur_s,
        "output_throughput": total_output / dur_s,
        "total_throughput": (total_input + total_output) / dur_s,
        # Every release's JSON line picks its own set of these (0.5.23: p90 and p95 of each; before: fewer).
        **_latency_stats("e2e_latency_ms", e2e),
        **_latency_stats("ttft_ms", ttfts),
        **_latency_stats("tpot_ms", tpots),
        **_latency_stats("itl_ms", itls),
        "max_itl_ms": max(itls, default=0.0) * ms,
        "concurrency": sum(e2e) / dur_s,
        "max_output_tokens_per_s": peak_tok_s,
        "max_concurrent_requests": peak_requests,
    }
    return metrics, output_lens


def print_summary(args: argparse.Namespace, m: dict[str, Any], duration: float, accept_length: float | None) -> None:
    def row(label: str, value: Any, fmt: str = "{:<40} {:<10}") -> None:
        print(fmt.format(label, value))

    two = "{:<40} {:<10.2f}"
    print("\n{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    row("Backend:", args.backend)
    row("Traffic request rate:", args.request_rate)
    row("Max request concurrency:", args.max_concurrency if args.max_concurrency else "not set")
    row("Successful requests:", m["completed"])
    row("Benchmark duration (s):", duration, two)
    row("Total input tokens:", m["total_input_tokens"])
    row("Total input text tokens:", m["total_input_text_tokens"])
    row("Total input vision tokens:", m["total_input_vision_tokens"])
    row("Total generated tokens:", m["total_output_tokens"])
    row("Total generated tokens (retokenized):", m["total_output_tokens_retokenized"])
    row("Request throughput (req/s):", m["request_throughput"], two)
    row("Input token throughput (tok/s):", m["input_throughput"], two)
    row("Output token throughput (tok/s):", m["output_throughput"], two)
    row("Peak output token throughput (tok/s):", m["max_output_tokens_per_s"], two)
    row("Peak concurrent requests:", m["max_concurrent_requests"])
    row("Total token throughput (tok/s):", m["total_throughput"], two)
    row("Concurrency:", m["concurrency"], two)
    if accept_length:
        row("Accept length:", accept_length, two)
    print("{s:{c}^{n}}".format(s="End-to-End Latency", n=50, c="-"))
    row("Mean E2E Latency (ms):", m["mean_e2e_latency_ms"], two)
    row("Median E2E Latency (ms):", m["median_e2e_latency_ms"], two)
    print("{s:{c}^{n}}".format(s="Time to First Token", n=50, c="-"))
    row("Mean TTFT (ms):", m["mean_ttft_ms"], two)
    row("Median TTFT (ms):", m["median_ttft_ms"], two)
    row("P99 TTFT (ms):", m["p99_ttft_ms"], two)
    print("{s:{c}^{n}}".format(s="Time per Output Token (excl. 1st token)", n=50, c="-"))
    row("Mean TPOT (ms):", m["mean_tpot_ms"], two)
    row("Median TPOT (ms):", m["median_tpot_ms"], two)
    row("P99 TPOT (ms):", m["p99_tpot_ms"], two)
    print("{s:{c}^{n}}".format(s="Inter-Token Latency", n=50, c="-"))
    row("Mean ITL (ms):", m["mean_itl_ms"], two)
    row("Median ITL (ms):", m["median_itl_ms"], two)
    row("P95 ITL (ms):", m["p95_itl_ms"], two)
    row("P99 ITL (ms):", m["p99_itl_ms"], two)
    row("Max ITL (ms):", m["max_itl_ms"], two)
    print("=" * 50)


# -- the run --------------------------------------------------------------------------------------


async def _get_json(session: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    async with session.get(url) as response:
        return response.status, (await response.json(content_type=None) if response.status == 200 else None)


def _accept_length(info: Any) -> float | None:
    if not isinstance(info, dict):
        return None
    if "decode" in info:
        info = info["decode"][0]
    states = info.get("internal_states")
    return states[0].get("avg_spec_accept_length") if states else None


async def benchmark(
    args: argparse.Namespace,
    layout: WorldLayout,
    base_url: str,
    api_url: str,
    rows: list[DatasetRow],
    release: ReleaseFacts,
) -> dict[str, Any]:
    extra = json.loads(args.extra_request_body) if args.extra_request_body else {}
    session = aiohttp.ClientSession(
        timeout=aiohttp.ClientTimeout(total=AIOHTTP_TIMEOUT_S),
        read_bufsize=AIOHTTP_READ_BUFSIZE,
        connector=aiohttp.TCPConnector(limit=0, limit_per_host=0, ssl=False),
    )
    real_base, real_api = real_url(base_url, layout), real_url(api_url, layout)
    model = args.served_model_name or args.model

    async def send(row: DatasetRow, output_len: int) -> RequestOutput:
        if args.backend in NATIVE:
            return await request_native(session, args, real_api, row, output_len, extra)
        return await request_openai(session, args, real_api, row, output_len, extra, model, args.backend in CHAT)

    semaphore = asyncio.Semaphore(args.max_concurrency) if args.max_concurrency else None

    async def limited(row: DatasetRow) -> RequestOutput:
        if semaphore is None:
            return await send(row, row.output_len)
        async with semaphore:
            return await send(row, row.output_len)

    try:
        print(f"Starting warmup with {args.warmup_requests} sequences...")
        warm = await asyncio.gather(*(send(rows[0], min(rows[0].output_len, 32)) for _ in range(args.warmup_requests)))
        if args.warmup_requests > 0 and not any(o.success for o in warm):
            raise ValueError(
                f"Warmup failed - Please make sure benchmark arguments are correctly specified. Error: {warm[0].error}"
            )
        print(f"Warmup completed with {args.warmup_requests} sequences. Starting main benchmark run...")
        if args.flush_cache or (
            "sglang" in args.backend and os.environ.get("SGLANG_IS_IN_CI", "false").lower() in ("true", "1")
        ):
            async with session.post(real_base + "/flush_cache") as response:
                await response.read()
        await asyncio.sleep(1.0)

        rng = random.Random(args.seed)
        start = time.perf_counter()
        tasks = []
        for row in rows:
            tasks.append(asyncio.create_task(limited(row)))
            if args.request_rate != float("inf"):
                await asyncio.sleep(rng.expovariate(args.request_rate))
        outputs = await asyncio.gather(*tasks)

        accept_length = None
        if "sglang" in args.backend:
            status, info = await _get_json(session, real_base + "/server_info")
            accept_length = _accept_length(info) if status == 200 else None
        duration = time.perf_counter() - start
        metrics, output_lens = calculate_metrics(rows, outputs, duration)
        print_summary(args, metrics, duration, accept_length)
        status, server_info = await _get_json(session, real_base + "/server_info")
    finally:
        await session.close()

    values: dict[str, Any] = {
        "tag": args.tag,
        "backend": args.backend,
        "dataset_name": args.dataset_name,
        "request_rate": args.request_rate,
        "max_concurrency": args.max_concurrency,
        "sharegpt_output_len": args.sharegpt_output_len,
        "random_input_len": args.random_input_len,
        "random_output_len": args.random_output_len,
        "random_range_ratio": args.random_range_ratio,
        "server_info": server_info if status == 200 else None,
        "duration": duration,
        **metrics,
        "accept_length": accept_length,
    }
    # Exactly the release's fields, in its order.
    result = {key: values[key] for key in release.bench_serving.result_fields if key in values}
    details = {
        "input_lens": [o.prompt_len for o in outputs],
        "output_lens": output_lens,
        "ttfts": [o.ttft for o in outputs],
        "itls": [o.itl for o in outputs],
        "generated_texts": [o.generated_text for o in outputs],
        "errors": [o.error for o in outputs],
    }
    name = args.output_file
    if not name:
        now = datetime.now().strftime("%m%d")
        name = f"{args.backend}_{now}_{args.num_prompts}_{args.random_input_len}_{args.random_output_len}.jsonl"
    with open(name, "a") as f:
        f.write(json.dumps(result | details if args.output_details else result) + "\n")
    return result


def _model_name(args: argparse.Namespace, layout: WorldLayout, model_url: str) -> str | None:
    import urllib.request

    try:
        with urllib.request.urlopen(real_url(model_url, layout), timeout=60) as response:
            models = json.loads(response.read()).get("data", [])
    except Exception as exc:  # what SGLang prints for any failure here
        print(f"Failed to fetch model from {model_url}. Error: {exc}")
        print("Please specify the correct host and port using `--host` and `--port`.")
        raise SystemExit(1) from None
    return models[0]["id"] if models else None


def main(argv: list[str], root: Path) -> int:
    release = facts.for_version(load_state_view(root).sglang_version or facts.LATEST)
    args = build_parser(release).parse_args(argv)
    layout = WorldLayout(Path(root))
    print(f"benchmark_args={args}")
    if args.port is None:
        args.port = DEFAULT_PORTS.get(args.backend, 30000)
    base_url = args.base_url or f"http://{args.host}:{args.port}"
    if args.backend in NATIVE:
        api_url = f"{base_url}/generate"
    elif args.backend in COMPLETIONS:
        api_url = f"{base_url}/v1/completions"
    elif args.backend in CHAT:
        api_url = f"{base_url}/v1/chat/completions"
    else:
        print(
            f"--backend {args.backend} talks to a server this simulated host does not run: use sglang, "
            "sglang-oai or sglang-oai-chat",
            file=sys.stderr,
        )
        return 1
    if args.model is None:
        args.model = _model_name(args, layout, f"{base_url}/v1/models")
    if args.model is None:
        print("No model specified or found. Please provide a model using `--model`.")
        return 1
    if args.tokenize_prompt and args.backend != "sglang":
        raise AssertionError("`--tokenize-prompt` only compatible with `--backend sglang` currently")
    print(f"{args}\n")
    if not args.dataset_name.startswith("random"):
        # SGLang reads (or downloads) these datasets; this host has no copy and no Internet.
        raise FileNotFoundError(
            f"dataset {args.dataset_name!r} is not available on this host"
            + (f" (no file at {args.dataset_path!r})" if args.dataset_path else "")
            + ": use --dataset-name random-ids"
        )
    rows = sample_random_requests(args, random.Random(args.seed))
    asyncio.run(benchmark(args, layout, base_url, api_url, rows, release))
    return 0
