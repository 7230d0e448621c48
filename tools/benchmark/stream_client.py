"""The benchmark client: a self-contained script that streams requests at fixed concurrency and prints raw timings.

It is uploaded to the host and run there with the host's `python3` (so the SSH
link is not measured), or run here against a forwarded port. It depends on the
standard library only (asyncio streams, HTTP/1.1 keep-alive, SSE parsing), so
it runs on any host with Python 3.8+ whatever is installed there.

Input: one JSON object on stdin (see `main`). Output: one JSON object on stdout
with, per level, every request's start, per-chunk arrival times and per-chunk
token counts as the server reported them, and the client's own load (CPU time,
event-loop lag). Statistics are computed by the caller (statistics.py), so this
file stays small and the numbers are derived in one place.

A level with a duration measures for that long once every request of the first
wave has its first token (so the burst of prefills at the level's start does not
eat the window) and then issues no more requests. How the level ends (`end`):
- `window` (the default): when the first request finishes after that, the level's
  concurrency is no longer held, so the steady window the throughput is taken over
  (statistics.py) has closed; the requests still running are cut there. Every
  chunk the window counts was read before the cut, so the figure is the one a
  full drain gives, without waiting out the slowest requests;
- `drain`: every request still running finishes (its latency counts too);
- `cut`: at the duration's end, as GuideLLM does with its max seconds. It needs
  a client that keeps up: a client behind on its reads loses the tokens the
  server sent before the cut, more of them the more chunks a configuration
  streams (so it would favour speculative decoding).
Cut requests are marked `cut`, not failed: their tokens so far count, their
latencies do not.

Token counts always come from the server: `meta_info.completion_tokens` on the
native SGLang API (cumulative per chunk), `usage` on the OpenAI API
(`stream_options.include_usage`; per chunk too when the server honours
`continuous_usage_stats`). A chunk may carry several tokens (speculative
decoding); nothing here assumes one token per chunk.

Acceptance per level: a native request's last chunk carries `spec_verify_ct`
(SGLang adds it when the request finishes, after a verify step); and where the
server exports them, the Prometheus counters `sglang:generation_tokens_total` and
`sglang:spec_verify_calls_total` (0.5.23) are read right before the level's
measured requests and right after, so their difference is the level's alone.
Server info: `/server_info`, else its deprecated name `/get_server_info`.

A request is completed only when its stream said so: a `finish_reason`, or the
closing `data: [DONE]`. A stream the server broke off (it died, the connection
closed mid-body) is failed, whatever it had streamed: its tokens and latencies
do not count. Once a connection is refused the server is gone: the level issues
no more requests. After each level the client asks the server whether it still
answers (`/health_generate`, else `/health`); when it does not, the sweep stops
there and the result says so (`server_health`), so the caller can read the
server's log.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import time
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlsplit

HEALTH_PATHS = ("/health_generate", "/health")  # a generation through the whole server first, then the plain check
HEALTH_TIMEOUT_S = 30.0  # SGLang's own /health_generate gives up after 20 s on a stuck scheduler
LOOP_PROBE_S = 0.005  # the lag probe sleeps this long and records how late it wakes
READ_SIZE = 1 << 16
RANDOM_ID_RANGE = (1000, 20000)  # inside every modern vocabulary, away from special tokens
SERVER_INFO_PATHS = ("/server_info", "/get_server_info")  # the new name first, the deprecated one as fallback
# Counters of finished requests whose differences give a level's own acceptance (summed over label sets).
COUNTERS = ("sglang:generation_tokens_total", "sglang:spec_verify_calls_total")
_COUNTER_LINE = re.compile(r"^(sglang:[a-z_]+)(?:\{[^}]*\})?\s+([-+0-9.eE]+)\s*$")

if TYPE_CHECKING:  # annotations only: Python 3.8 cannot subscript collections.abc.Callable at run time
    from collections.abc import Callable

    OnData = Callable[[bytes, float], None]  # a body's bytes as they arrive, with their perf_counter time


class PromptsConfig(TypedDict, total=False):
    """`main`'s input: what to send (sweep.prompt_config)."""

    kind: str  # "random_ids" or "texts"
    input_len: int  # random_ids
    seed: int  # random_ids
    texts: list[str]  # texts


class LevelConfig(TypedDict, total=False):
    """`main`'s input: one level (sweep.client_config). A level has a duration, else a request count."""

    concurrency: int
    num_requests: int | None
    duration_s: float | None
    end: str  # "window", "drain" or "cut"
    warmup_requests: int
    flush_cache: bool


class ClientConfig(TypedDict, total=False):
    """`main`'s input, the JSON object on stdin (sweep.client_config)."""

    base_url: str
    api: str  # "auto", "sglang" or "openai"
    api_key: str
    model: str | None
    prompts: PromptsConfig
    output_len: int
    ignore_eos: bool
    temperature: float
    request_timeout_s: float
    levels: list[LevelConfig]


class HttpError(Exception):
    pass


class StreamBroken(HttpError):
    """The connection closed in the middle of a response body: the server went away."""


class LevelEnded(Exception):
    """Raised from inside a stream when data arrives after the level's end: the request is cut there."""


class Connection:
    """One keep-alive HTTP/1.1 connection; reopened when the server closes it."""

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        self.reader, self.writer = reader, writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, limit=1 << 24), self.timeout_s
        )
        return reader, writer

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(
        self, method: str, path: str, body: bytes | None, headers: dict[str, str], on_data: OnData | None = None
    ) -> tuple[int, bytes]:
        """Send a request; return (status, body bytes). `on_data(bytes, t)` gets the body as it arrives instead."""
        for attempt in (0, 1):
            reader, writer = self.reader, self.writer
            if reader is None or writer is None:  # both set by open(), both cleared by close()
                reader, writer = await self.open()
            head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Connection: keep-alive"]
            head += [f"{k}: {v}" for k, v in headers.items()]
            head.append(f"Content-Length: {len(body or b'')}")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + (body or b""))
            try:
                await writer.drain()
                status_line = await asyncio.wait_for(reader.readline(), self.timeout_s)
            except (ConnectionError, OSError):
                status_line = b""
            if status_line:
                return await self._response(reader, status_line, on_data)
            # A kept-alive connection the server had closed: reopen once.
            self.close()
            if attempt:
                raise HttpError("connection closed before a response")
        raise HttpError("unreachable")

    async def _response(
        self, reader: asyncio.StreamReader, status_line: bytes, on_data: OnData | None
    ) -> tuple[int, bytes]:
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[1].isdigit():
            raise HttpError(f"bad status line {status_line[:80]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        while True:
            line = await asyncio.wait_for(reader.readline(), self.timeout_s)
            if line in (b"\r\n", b"\n", b""):
                break
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        collected = bytearray()
        sink = on_data if (on_data is not None and status == 200) else (lambda data, t: collected.extend(data))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size_line = await asyncio.wait_for(reader.readline(), self.timeout_s)
                if not size_line:
                    self.close()
                    raise StreamBroken("the connection closed mid-stream (no closing chunk): the server went away")
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await asyncio.wait_for(reader.readline(), self.timeout_s)  # the CRLF after the last chunk
                    break
                data = await asyncio.wait_for(reader.readexactly(size + 2), self.timeout_s)
                sink(data[:-2], time.perf_counter())
        elif "content-length" in headers:
            remaining = int(headers["content-length"])
            while remaining:
                data = await asyncio.wait_for(reader.read(min(remaining, READ_SIZE)), self.timeout_s)
                if not data:
                    self.close()
                    raise StreamBroken("connection closed mid-body")
                remaining -= len(data)
                sink(data, time.perf_counter())
        else:
            while True:
                data = await asyncio.wait_for(reader.read(READ_SIZE), self.timeout_s)
                if not data:
                    break
                sink(data, time.perf_counter())
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, bytes(collected)


class SseParser:
    """Splits a byte stream into `data:` payloads; calls on_event(payload_bytes, arrival_time)."""

    def __init__(self, on_event: OnData) -> None:
        self.buffer = b""
        self.on_event = on_event

    def feed(self, data: bytes, t: float) -> None:
        self.buffer += data
        while True:
            cut = self.buffer.find(b"\n")
            if cut < 0:
                return
            line, self.buffer = self.buffer[:cut].rstrip(b"\r"), self.buffer[cut + 1 :]
            if line.startswith(b"data:"):
                self.on_event(line[5:].strip(), t)


class Record:
    """What one request measured. Times are perf_counter seconds."""

    __slots__ = (
        "chunk_times",
        "chunk_tokens",
        "cut",
        "end",
        "error",
        "finished",
        "output_tokens",
        "prompt_tokens",
        "start",
        "verify_ct",
    )

    def __init__(self, start: float) -> None:
        self.start = start
        self.chunk_times: list[float] = []
        self.chunk_tokens: list[int | None] = []  # per chunk, None when the server did not say
        self.output_tokens: int | None = None
        self.prompt_tokens: int | None = None
        self.verify_ct: int | None = None
        self.error: str | None = None
        self.end: float | None = None
        self.cut = False  # stopped by the client at the level's end, not by the server
        self.finished = False  # the server said the request was done (finish_reason, or [DONE])

    def as_json(self, origin: float) -> dict:
        known = all(n is not None for n in self.chunk_tokens)
        return {
            "start_s": round(self.start - origin, 7),
            "end_s": None if self.end is None else round(self.end - origin, 7),
            "chunk_s": [round(t - self.start, 7) for t in self.chunk_times],
            "chunk_tokens": self.chunk_tokens if known else None,
            "output_tokens": self.output_tokens,
            "prompt_tokens": self.prompt_tokens,
            "spec_verify_ct": self.verify_ct,
            "error": self.error,
            "cut": self.cut,
            "finished": self.finished,
        }


class Client:
    def __init__(self, config: ClientConfig) -> None:
        url = urlsplit(config["base_url"])
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.config = config
        self.timeout_s = float(config.get("request_timeout_s", 600))
        self.headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if config.get("api_key"):
            self.headers["Authorization"] = "Bearer " + config["api_key"]
        self.api = config.get("api", "auto")
        self.model = config.get("model")
        self.cut_at: float | None = None  # a timed level's end: streams stop reading there
        self.server_gone = False  # a connection was refused during the level: issue no more requests

    async def get_json(self, path: str) -> tuple[int, Any]:
        """(status, the body's JSON, None unless a 200 with a body): whatever JSON the server sends."""
        status, body = await self.get(path)
        return status, (json.loads(body) if status == 200 and body else None)

    async def get(self, path: str) -> tuple[int, bytes]:
        conn = Connection(self.host, self.port, min(self.timeout_s, 30.0))
        try:
            return await conn.request("GET", path, None, self.headers)
        finally:
            conn.close()

    async def server_info(self) -> tuple[int | None, Any]:
        """(status, JSON) of /server_info, else of /get_server_info when the first is not there."""
        status: int | None = None
        info: Any = None
        for path in SERVER_INFO_PATHS:
            status, info = await self.get_json(path)
            if status != 404:
                break
        return status, info

    async def counters(self) -> dict[str, float] | None:
        """The finished-request counters of /metrics, or None (no --enable-metrics, or a release without them)."""
        try:
            status, body = await self.get("/metrics")
        except (TimeoutError, HttpError, OSError):
            return None
        if status != 200:
            return None
        found: dict[str, float] = {}
        for line in body.decode("utf-8", "replace").splitlines():
            match = _COUNTER_LINE.match(line.strip())
            if match and match.group(1) in COUNTERS:
                found[match.group(1)] = found.get(match.group(1), 0.0) + float(match.group(2))
        return found if len(found) == len(COUNTERS) else None

    async def health(self) -> dict:
        """Whether the server still answers after a level: the first of HEALTH_PATHS it has (404: the next)."""
        for path in HEALTH_PATHS:
            try:
                status, _ = await asyncio.wait_for(self.get(path), HEALTH_TIMEOUT_S)
            except (HttpError, OSError, asyncio.TimeoutError) as exc:  # noqa: UP041 - Python 3.8 on the host
                why = (
                    f"no answer within {HEALTH_TIMEOUT_S:g} s"
                    if isinstance(exc, asyncio.TimeoutError)
                    else (f"{type(exc).__name__}: {exc}")
                )
                return {"ok": False, "path": path, "status": None, "error": why}
            if status != 404:
                return {
                    "ok": status == 200,
                    "path": path,
                    "status": status,
                    "error": None if status == 200 else f"HTTP {status}",
                }
        return {"ok": None, "path": None, "status": 404, "error": None}  # no health route: unknown

    async def post(self, path: str) -> int:
        conn = Connection(self.host, self.port, min(self.timeout_s, 30.0))
        try:
            status, _ = await conn.request("POST", path, b"", self.headers)
        finally:
            conn.close()
        return status

    async def settle_api(self) -> dict:
        """Decide the API (auto: native SGLang when /server_info or /get_server_info answers) and the model name."""
        status, info = await self.server_info()
        if self.api == "auto":
            self.api = "sglang" if status == 200 else "openai"
        if self.api == "openai" and not self.model:
            status_models, models = await self.get_json("/v1/models")
            data = (models or {}).get("data") or []
            if status_models != 200 or not data:
                raise HttpError(f"/v1/models answered {status_models}; pass the model name")
            self.model = data[0]["id"]
        return {"api": self.api, "model": self.model, "server_info": _info_summary(info) if info else None}

    # -- request bodies --------------------------------------------------------------------
    def prompt(self, level_index: int, index: int) -> list[int] | str:
        prompts = self.config["prompts"]
        if prompts["kind"] == "random_ids":
            # Different ids at every level and request: no prefix-cache hits between levels.
            rng = random.Random(f"{prompts['seed']}|{level_index}|{index}")
            return [rng.randrange(*RANDOM_ID_RANGE) for _ in range(int(prompts["input_len"]))]
        texts = prompts["texts"]
        return texts[index % len(texts)]

    def body(self, prompt: list[int] | str, output_len: int) -> tuple[str, bytes]:
        c = self.config
        if self.api == "sglang":
            payload: dict[str, Any] = {
                "stream": True,
                "sampling_params": {
                    "max_new_tokens": output_len,
                    "temperature": c.get("temperature", 0.0),
                    "ignore_eos": c.get("ignore_eos", True),
                },
            }
            payload["input_ids" if isinstance(prompt, list) else "text"] = prompt
            return "/generate", json.dumps(payload).encode()
        payload = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": output_len,
            "stream": True,
            "temperature": c.get("temperature", 0.0),
            "ignore_eos": c.get("ignore_eos", True),
            "stream_options": {"include_usage": True, "continuous_usage_stats": True},
        }
        return "/v1/completions", json.dumps(payload).encode()

    # -- one streamed request --------------------------------------------------------------
    async def one(
        self, conn: Connection, prompt: list[int] | str, output_len: int, records: list[Record] | None = None
    ) -> Record:
        """One streamed request; its Record joins `records` at once, so a request cut short is still counted."""
        path, body = self.body(prompt, output_len)
        record = Record(time.perf_counter())
        if records is not None:
            records.append(record)
        state = {"last": 0, "done": False}
        native = self.api == "sglang"

        def on_event(payload: bytes, t: float) -> None:
            if self.cut_at is not None and t >= self.cut_at:
                raise LevelEnded()
            if payload == b"[DONE]":
                state["done"] = record.finished = True
                return
            event = json.loads(payload)
            if native:
                meta = event.get("meta_info") or {}
                if meta.get("finish_reason") is not None:
                    record.finished = True
                count = meta.get("completion_tokens")
                if count is None:
                    return
                new = count - state["last"]
                if new > 0:
                    record.chunk_times.append(t)
                    record.chunk_tokens.append(new)
                    state["last"] = count
                record.output_tokens = count
                record.prompt_tokens = meta.get("prompt_tokens")
                record.verify_ct = meta.get("spec_verify_ct", record.verify_ct)
                return
            usage = event.get("usage")
            choices = event.get("choices") or []
            text = choices[0].get("text") if choices else None
            if choices and choices[0].get("finish_reason") is not None:
                record.finished = True
            if text:
                record.chunk_times.append(t)
                if usage and usage.get("completion_tokens") is not None:
                    record.chunk_tokens.append(usage["completion_tokens"] - state["last"])
                    state["last"] = usage["completion_tokens"]
                else:
                    record.chunk_tokens.append(None)
            if usage and usage.get("completion_tokens") is not None:
                record.output_tokens = usage["completion_tokens"]
                record.prompt_tokens = usage.get("prompt_tokens")

        parser = SseParser(on_event)
        try:
            status, error_body = await conn.request("POST", path, body, self.headers, on_data=parser.feed)
            if status != 200:
                record.error = f"HTTP {status}: {error_body[:300].decode('utf-8', 'replace')}"
                conn.close()
            elif not record.chunk_times:
                record.error = "the stream ended without any output"
            elif not record.finished:
                record.error = (
                    f"the stream ended after {len(record.chunk_times)} chunk(s) without finishing (no "
                    "finish_reason, no [DONE]): the server broke it off"
                )
        except (TimeoutError, HttpError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ConnectionRefusedError) or (
                isinstance(exc, HttpError) and not record.chunk_times and "before a response" in str(exc)
            ):
                self.server_gone = True  # nothing accepts connections (or answers) on the port any more
            conn.close()
        except LevelEnded:
            record.cut, record.end = True, self.cut_at
            conn.close()  # the server sees the client go and aborts the request
            return record
        except asyncio.CancelledError:
            record.cut, record.end = True, time.perf_counter()
            conn.close()
            raise
        record.end = time.perf_counter()
        return record

    # -- a level ---------------------------------------------------------------------------
    async def run_level(self, level_index: int, level: LevelConfig) -> dict:
        concurrency = int(level["concurrency"])
        output_len = int(self.config["output_len"])
        self.server_gone = False
        conns = [Connection(self.host, self.port, self.timeout_s) for _ in range(concurrency)]
        try:
            # Connections are opened before the clock starts: their setup is the client's cost, not the server's.
            await asyncio.gather(*(conn.open() for conn in conns))
            warmup = int(level.get("warmup_requests", 0))
            if warmup:
                jobs = [
                    self.one(conns[i % concurrency], self.prompt(-1 - level_index, i), min(output_len, 32))
                    for i in range(warmup)
                ]
                await asyncio.gather(*jobs[:concurrency])
                for extra in jobs[concurrency:]:
                    await extra
            flushed = None
            if level.get("flush_cache"):
                flush_status = await self.post("/flush_cache")
                flushed = True if flush_status == 200 else (None if flush_status == 404 else False)
            before = await self.counters()  # after the warm-up: the difference is the measured requests' alone
            records = await self._measure(level_index, level, conns, output_len)
        finally:
            for conn in conns:
                conn.close()
        after = await self.counters() if before is not None else None
        try:
            status, info = await self.server_info()
        except (TimeoutError, HttpError, OSError):
            status, info = None, None  # the server died during the level: its requests say how
        health = await self.health()  # last: its own request would count in the level's counters
        return {
            "concurrency": concurrency,
            "cache_flushed": flushed,
            **records,
            "counters": {"before": before, "after": after} if before is not None and after is not None else None,
            "server_info": _info_summary(info) if status == 200 and info else None,
            "server_health": health,
        }

    async def _measure(self, level_index: int, level: LevelConfig, conns: list[Connection], output_len: int) -> dict:
        concurrency = len(conns)
        duration = level.get("duration_s")
        total = 0 if duration else level.get("num_requests")  # a level with a duration stops at its deadline
        assert total is not None, "a level without a duration has a request count (sweep.client_config sets one)"
        issued = [0]
        records: list[Record] = []
        lags: list[float] = []
        stop_probe = asyncio.Event()

        async def probe() -> None:
            while not stop_probe.is_set():
                t = time.perf_counter()
                await asyncio.sleep(LOOP_PROBE_S)
                lags.append(time.perf_counter() - t - LOOP_PROBE_S)

        origin = time.perf_counter()
        deadline: list[float | None] = [None]  # set once the first wave has its first tokens (a duration level)

        async def worker(conn: Connection) -> None:
            while True:
                if self.server_gone:
                    return
                if duration:
                    if deadline[0] is not None and time.perf_counter() >= deadline[0]:
                        return
                elif issued[0] >= total:
                    return
                index = issued[0]
                issued[0] += 1
                await self.one(conn, self.prompt(level_index, index), output_len, records)

        async def clock(duration_s: float) -> None:
            """Start the duration when every first-wave request has a first token (or ended), then wait it out."""
            cap = origin + self.timeout_s
            while time.perf_counter() < cap and not self.server_gone:
                wave = records[:concurrency]
                if len(wave) == concurrency and all(r.chunk_times or r.end is not None for r in wave):
                    break
                await asyncio.sleep(LOOP_PROBE_S)
            deadline[0] = until = time.perf_counter() + float(duration_s)
            if end == "cut":
                self.cut_at = until
            while not self.server_gone and time.perf_counter() < until:
                await asyncio.sleep(min(0.05, max(0.0, until - time.perf_counter())))

        cpu0 = time.process_time()
        probe_task = asyncio.ensure_future(probe())
        workers = [asyncio.ensure_future(worker(c)) for c in conns[:concurrency]]
        if duration:
            end = level.get("end", "window")
            await clock(duration)
            if end == "window":
                # A worker returns when its request finishes past the deadline: the concurrency drops there.
                await asyncio.wait(workers, return_when=asyncio.FIRST_COMPLETED)
                self.cut_at = time.perf_counter()
            pending = set(workers) if end != "drain" else set()
            # Streams that deliver data stop themselves (LevelEnded); the silent ones are cancelled, again until
            # they stop: asyncio.wait_for before Python 3.12 swallows a cancellation that lands as its read
            # completes (bpo-42130).
            while pending:
                for task in pending:
                    task.cancel()
                _, pending = await asyncio.wait(pending, timeout=0.01)
        await asyncio.gather(*workers, return_exceptions=True)
        self.cut_at = None
        finished = time.perf_counter()
        stop_probe.set()
        await probe_task
        lags.sort()
        return {
            "duration_s": round(finished - origin, 7),
            "client_cpu_s": round(time.process_time() - cpu0, 4),
            "loop_lag_ms": {
                "p50": _pick(lags, 0.5) * 1e3,
                "p99": _pick(lags, 0.99) * 1e3,
                "max": (lags[-1] if lags else 0.0) * 1e3,
                "samples": len(lags),
            },
            "requests": [r.as_json(origin) for r in records],
        }


def _pick(values: list[float], q: float) -> float:
    return values[min(int(q * len(values)), len(values) - 1)] if values else 0.0


def _info_summary(info: dict[str, Any]) -> dict[str, Any]:
    keep = ("version", "speculative_algorithm", "speculative_num_draft_tokens", "max_running_requests", "model_path")
    summary = {k: info.get(k) for k in keep if k in info}
    summary["internal_states"] = info.get("internal_states")
    return summary


async def run(config: ClientConfig) -> dict:
    client = Client(config)
    settled = await client.settle_api()
    levels = []
    for i, level in enumerate(config["levels"]):
        try:
            levels.append(await client.run_level(i, level))
        except (TimeoutError, HttpError, OSError) as exc:
            # The server stopped answering between levels (it died under the previous one): this level is
            # recorded as failed and the sweep ends, so the levels already measured are kept.
            levels.append(
                _aborted_level(level, f"level not run, the server stopped answering: {type(exc).__name__}: {exc}")
            )
            break
        if levels[-1]["server_health"]["ok"] is False:
            break  # the server died or hangs: the next levels would measure nothing
    return {**settled, "python": sys.version.split()[0], "levels": levels}


def _aborted_level(level: LevelConfig, why: str) -> dict:
    failed = Record(0.0)
    failed.error, failed.end = why, 0.0
    return {
        "concurrency": int(level["concurrency"]),
        "cache_flushed": None,
        "duration_s": 0.0,
        "client_cpu_s": 0.0,
        "loop_lag_ms": {"p50": 0.0, "p99": 0.0, "max": 0.0, "samples": 0},
        "requests": [failed.as_json(0.0)],
        "server_info": None,
        "server_health": {"ok": False, "path": None, "status": None, "error": why},
    }


def main() -> int:
    config = json.loads(sys.stdin.read())
    try:
        result = asyncio.run(run(config))
    except (TimeoutError, HttpError, OSError) as exc:
        json.dump({"fatal": f"{type(exc).__name__}: {exc}"}, sys.stdout)
        return 2
    json.dump(result, sys.stdout, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
