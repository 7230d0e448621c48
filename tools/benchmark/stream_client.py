"""The benchmark client: a self-contained script that streams requests and prints raw timings.

It is uploaded to the host and run there with the host's `python3` (so the SSH
link is not measured), or run here against a forwarded port. It depends on the
standard library only (asyncio streams, HTTP/1.1 keep-alive, SSE parsing,
multiprocessing), so it runs on any host with Python 3.8+ whatever is installed
there; where `uvloop` can be imported its event loop is used (`event_loop` in the
output says which).

Input: one JSON object on stdin (see `ClientConfig`). Output: one JSON object on
stdout with, per level, every request's start, per-chunk arrival times and
per-chunk token counts as the server reported them, the client's own load (CPU
time, event-loop lag) and the server's load gauges sampled during the level.
Statistics are computed by the caller (statistics.py), so this file stays small
and the numbers are derived in one place.

Worker processes. A level's requests are split over `workers` processes
(multiprocessing, "spawn": a fresh interpreter, nothing inherited from a running
loop), each with its own event loop and connections; the parent only
coordinates (a level's deadline, its cut, a server gone) and merges their
records into one level, so the output has the same shape whatever the count.
Closed-loop concurrency C is split over them (C = c_1 + ... + c_N; each keeps
its c_k in flight) and request indices come from one shared counter, so a level
issues the same requests, and holds C in flight, as one process does. The
default count (`default_workers`) grows with the concurrency and the cores the
process may use, never above the requests in flight; `workers: 1` runs the level
in this process, as before workers existed. Times: every process reads
`time.perf_counter()`, which on Linux is CLOCK_MONOTONIC, one clock for the whole
machine (likewise mach_absolute_time on macOS), so a worker's times and the
parent's subtract directly; each worker reports `clock_offset_ms`, the
difference of its (perf_counter - time.time()) from the parent's, near 0 when
that holds. A level's client load: `client_cpu_s` is the CPU time of ALL its
processes (workers and parent) over the level, `client_cpu_busiest_s` the one
process that used most (the one that could not keep up first), `loop_lag_ms`
the workers' timer lag samples together, and `workers` each process's own.

A closed-loop level with a duration measures for that long once every request of the first
wave has its first token (so the burst of prefills at the level's start does not
eat the window) and then issues no more requests. How the level ends (`end`):
- `window` (the default): when the first request finishes after that, the level's
  concurrency is no longer held, so the steady window the throughput is taken over
  (statistics.py) has closed; the requests still running are cut there, and the
  figure is the one a full drain gives, without waiting out the slowest requests.
  With workers, the server sends a step's chunks to every process at once, and one
  scheduled a little later stamps them a little later: the window's edges fall on
  such steps, so a worker that hears of the cut reads on for half a step (at most
  EDGE_GRACE_MAX_S) and drops what it read after that, and the parent places the
  chunks read within half a step after either edge at it (align_edges), as one
  process reading them in the server's order would have (each edge otherwise
  gained or lost up to half a step: 3-4% of a speculative level's window);
- `drain`: every request still running finishes (its latency counts too);
- `cut`: at the duration's end, as GuideLLM does with its max seconds. It needs
  a client that keeps up: a client behind on its reads loses the tokens the
  server sent before the cut, more of them the more chunks a configuration
  streams (so it would favour speculative decoding).
Cut requests are marked `cut`, not failed: their tokens so far count, their
latencies do not.

Open loop. A level with `rate` ({"kind": "poisson" | "constant", "per_s": R,
"seed": S}) sends on the clock instead: arrival k is due at origin + t_k, with
gaps 1/R (constant) or exponential of mean 1/R drawn from a seeded RNG
(poisson; the first arrival at 0), never waiting for a request to finish
(`max_concurrency`, when set, caps those in flight: an arrival then waits for a
slot). It sends `num_requests` arrivals, or those due within `duration_s`. Each
request records `scheduled_s` beside `start_s` (its actual send), so the
client's own scheduling delay shows (`rate.send_delay_ms`). A rate level ends
by draining, or with `end: "cut"` at the duration (`window` needs a held
concurrency, which open loop has not: it drains). With workers, arrival k goes
to worker k mod N, each on the shared clock.

Server load during a level: unless `metrics_interval_s` is 0, the parent reads
`/metrics` every `metrics_interval_s` (0.5 s) from the level's start to its end
and keeps, per sample, `t` (seconds since the level's origin, the requests'
time base) and the gauges `sglang:num_running_reqs` (`running`, summed over
label sets), `sglang:num_queue_reqs` (`queued`, summed) and `sglang:token_usage`
(`token_usage`, the highest: the fullest KV pool), None for a gauge the server
does not export. A server without /metrics (no --enable-metrics) gives
`server_metrics: null` after one try.

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
no more requests (in every worker). After each level the client asks the server
whether it still answers (`/health_generate`, else `/health`); when it does not,
the sweep stops there and the result says so (`server_health`), so the caller
can read the server's log. A worker process that dies leaves one failed request
saying so.

Reading: a response body is read in blocks (one wait per socket read, not two
per HTTP chunk) and de-chunked and split into SSE events here; every event of a
block carries the block's arrival time, when the client had them.
"""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import os
import random
import re
import sys
import time
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlsplit

try:  # optional: a faster event loop where the host's python3 has it (SGLang's environment does)
    import uvloop
except ImportError:  # pragma: no cover - depends on the interpreter
    uvloop = None

HEALTH_PATHS = ("/health_generate", "/health")  # a generation through the whole server first, then the plain check
HEALTH_TIMEOUT_S = 30.0  # SGLang's own /health_generate gives up after 20 s on a stuck scheduler
LOOP_PROBE_S = 0.005  # the lag probe sleeps this long and records how late it wakes
READ_SIZE = 1 << 16
RANDOM_ID_RANGE = (1000, 20000)  # inside every modern vocabulary, away from special tokens
SERVER_INFO_PATHS = ("/server_info", "/get_server_info")  # the new name first, the deprecated one as fallback
# Counters of finished requests whose differences give a level's own acceptance (summed over label sets).
COUNTERS = ("sglang:generation_tokens_total", "sglang:spec_verify_calls_total")
# Gauges sampled during a level (SGLang 0.5.23 names) and the keys a sample gives them.
GAUGES = {"sglang:num_running_reqs": "running", "sglang:num_queue_reqs": "queued", "sglang:token_usage": "token_usage"}
METRICS_INTERVAL_S = 0.5
_METRIC_LINE = re.compile(r"^(sglang:[a-z_]+)(?:\{[^}]*\})?\s+([-+0-9.eEinfINFa]+)\s*$")
# Default worker count: one process per this many requests in flight, at most half the usable cores (the rest are
# the server's: on the GPU host SGLang's own processes, here the simulator), and at most MAX_WORKERS.
STREAMS_PER_WORKER = 8
MAX_WORKERS = 16
# A worker that hears of the window's close from another reads on for half a step (its streams' last chunk gap), at
# most this long: its chunks of the step that closed the window can come a little after the close (module doc).
EDGE_GRACE_MAX_S = 0.05
OPEN_LOOP_CONNECTIONS = 16  # connections a rate level without max_concurrency opens ahead (more open on demand)

if TYPE_CHECKING:  # annotations only: Python 3.8 cannot subscript collections.abc.Callable at run time
    from collections.abc import Callable

    OnData = Callable[[bytes, float], None]  # a body's bytes as they arrive, with their perf_counter time


class PromptsConfig(TypedDict, total=False):
    """`main`'s input: what to send (sweep.prompt_config)."""

    kind: str  # "random_ids" or "texts"
    input_len: int  # random_ids
    seed: int  # random_ids
    texts: list[str]  # texts


class RateConfig(TypedDict, total=False):
    """An open-loop level's arrivals."""

    kind: str  # "poisson" or "constant"
    per_s: float  # mean arrivals per second
    seed: int  # poisson: the RNG's seed (default 0), with the level's index


class LevelConfig(TypedDict, total=False):
    """`main`'s input: one level (sweep.client_config). A level has a duration, else a request count."""

    concurrency: int  # closed loop: requests kept in flight
    rate: RateConfig  # open loop instead (no concurrency needed)
    max_concurrency: int | None  # open loop: at most this many in flight (None: no cap)
    num_requests: int | None
    duration_s: float | None
    end: str  # "window", "drain" or "cut"
    warmup_requests: int
    flush_cache: bool
    workers: int | None  # this level's worker processes (overrides ClientConfig.workers)


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
    workers: int | None  # worker processes per level; None or absent: default_workers
    metrics_interval_s: float  # /metrics sampling period during a level; 0: off (default METRICS_INTERVAL_S)


class HttpError(Exception):
    pass


class StreamBroken(HttpError):
    """The connection closed in the middle of a response body: the server went away."""


class WorkersUnavailable(Exception):
    """This Python cannot start worker processes (no /dev/shm for a shared counter, no fork/exec): one process."""


class LevelEnded(Exception):
    """Raised from inside a stream when data arrives after the level's end: the request is cut there."""


def usable_cpus() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def default_workers(in_flight: int, cpus: int | None = None) -> int:
    """Worker processes for a level with `in_flight` requests at once: one per STREAMS_PER_WORKER, at most half
    the usable cores (but 2 on 2 cores) and MAX_WORKERS, at least 1 (so one process up to 2x STREAMS_PER_WORKER).
    Two on 2 cores: a lockstep batch delivers a chunk to every stream at once and one process stamps them in turn,
    late by the time that takes (5-7 ms at 256 streams); two take half each, on the core the server leaves idle."""
    cpus = usable_cpus() if cpus is None else cpus
    return max(1, min(in_flight // STREAMS_PER_WORKER, max(cpus // 2, min(2, cpus)), MAX_WORKERS))


def split(total: int, parts: int) -> list[int]:
    """`total` in `parts` integers as equal as possible, the larger first: they add up to `total`."""
    base, extra = divmod(total, parts)
    return [base + (1 if k < extra else 0) for k in range(parts)]


def arrivals(level: LevelConfig, level_index: int) -> list[tuple[int, float]]:
    """An open-loop level's (request index, due seconds after the level's origin), in order; the first at 0."""
    rate = level["rate"]
    per_s = float(rate["per_s"])
    if per_s <= 0:
        raise ValueError(f"a rate level needs per_s > 0, got {per_s}")
    kind = rate.get("kind", "poisson")
    if kind not in ("poisson", "constant"):
        raise ValueError(f"rate kind {kind!r}: 'poisson' or 'constant'")
    count, duration = level.get("num_requests"), level.get("duration_s")
    if not count and not duration:
        raise ValueError("a rate level needs num_requests or duration_s")
    rng = random.Random(f"{rate.get('seed', 0)}|{level_index}|arrivals")
    out: list[tuple[int, float]] = []
    due = 0.0
    while True:
        if count and len(out) >= int(count):
            break
        if duration and due >= float(duration):
            break
        out.append((len(out), due))
        due += rng.expovariate(per_s) if kind == "poisson" else 1.0 / per_s
    return out


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
            await self.read_chunked(reader, sink)
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

    async def read_chunked(self, reader: asyncio.StreamReader, sink: OnData) -> None:
        """A chunked body, read a block at a time: the chunks complete in a block go to `sink` together, at the
        block's arrival time (an HTTP chunk split over blocks waits for its end)."""
        buffer = b""
        while True:
            data = await asyncio.wait_for(reader.read(READ_SIZE), self.timeout_s)
            if not data:
                self.close()
                raise StreamBroken("the connection closed mid-stream (no closing chunk): the server went away")
            t = time.perf_counter()
            buffer = buffer + data if buffer else data
            pieces = []
            pos, size_of = 0, len(buffer)
            last = False
            while True:
                eol = buffer.find(b"\r\n", pos)
                if eol < 0:
                    break
                size = int(buffer[pos:eol].split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # The last chunk, then trailer lines (none expected) and an empty line.
                    last = buffer.find(b"\r\n\r\n", eol) >= 0
                    break
                end = eol + 2 + size
                if end + 2 > size_of:
                    break
                pieces.append(buffer[eol + 2 : end])
                pos = end + 2
            if pieces:
                sink(pieces[0] if len(pieces) == 1 else b"".join(pieces), t)
            if last:
                return
            buffer = buffer[pos:]


class SseParser:
    """Splits a byte stream into `data:` payloads; calls on_event(payload_bytes, arrival_time)."""

    def __init__(self, on_event: OnData) -> None:
        self.buffer = b""
        self.on_event = on_event

    def feed(self, data: bytes, t: float) -> None:
        lines = (self.buffer + data if self.buffer else data).split(b"\n")
        self.buffer = lines.pop()
        on_event = self.on_event
        for line in lines:
            if line.startswith(b"data:"):
                on_event(line[5:].strip(), t)


class Record:
    """What one request measured. Times are perf_counter seconds."""

    __slots__ = (
        "chunk_times",
        "chunk_tokens",
        "chunk_verify",
        "cut",
        "end",
        "error",
        "finished",
        "index",
        "output_tokens",
        "prompt_tokens",
        "scheduled",
        "start",
        "verify_ct",
    )

    def __init__(self, start: float, scheduled: float | None = None, index: int | None = None) -> None:
        self.start = start
        self.index = index  # the request's place in the level (its prompt's): merged shares are put in this order
        self.scheduled = scheduled  # an open-loop request's due time (start: when it was actually sent)
        self.chunk_times: list[float] = []
        self.chunk_tokens: list[int | None] = []  # per chunk, None when the server did not say
        self.chunk_verify: list[int | None] = []  # per chunk (native API): spec_verify_ct as of that chunk
        self.output_tokens: int | None = None
        self.prompt_tokens: int | None = None
        self.verify_ct: int | None = None
        self.error: str | None = None
        self.end: float | None = None
        self.cut = False  # stopped by the client at the level's end, not by the server
        self.finished = False  # the server said the request was done (finish_reason, or [DONE])

    def trim(self, cut_at: float) -> None:
        """Drop the chunks read at or after `cut_at` (a cut this process heard of late): the request holds what it
        had at the cut. Its token count follows when per-chunk counts are known, and its verify count (native API)
        goes back to the chunk it keeps last: a count from a dropped chunk would claim verify steps for tokens the
        record no longer holds (a grader replaying the record's steps from its tokens would disagree with it)."""
        keep = len(self.chunk_times)
        while keep and self.chunk_times[keep - 1] >= cut_at:
            keep -= 1
        if keep == len(self.chunk_times):
            return
        del self.chunk_times[keep:], self.chunk_tokens[keep:]
        if self.chunk_verify:
            self.verify_ct = self.chunk_verify[keep - 1] if keep else None
            del self.chunk_verify[keep:]
        counts = self.chunk_tokens
        self.output_tokens = sum(counts) if counts and all(n is not None for n in counts) else None  # type: ignore[arg-type]
        self.finished = False

    def as_json(self, origin: float) -> dict[str, Any]:
        known = all(n is not None for n in self.chunk_tokens)
        out = {
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
        if self.scheduled is not None:
            out["scheduled_s"] = round(self.scheduled - origin, 7)
        return out


class _LocalControl:
    """A level run in this one process: the coordination workers need, done in place."""

    gone = False  # the server's going is this process's own Client.server_gone

    def __init__(self, total: int | None, duration_s: float | None) -> None:
        loop = asyncio.get_running_loop()
        self.total, self.duration_s, self.issued = total, duration_s, 0
        self._deadline: asyncio.Future[float] = loop.create_future()
        self._cut: asyncio.Future[float] = loop.create_future()

    def take(self) -> int | None:
        """The next request's index, or None when the level's count is issued."""
        if self.total is not None and self.issued >= self.total:
            return None
        self.issued += 1
        return self.issued - 1

    def wave_ready(self) -> None:
        if not self._deadline.done():
            self._deadline.set_result(time.perf_counter() + float(self.duration_s or 0.0))

    async def deadline(self) -> float:
        return await self._deadline

    async def cut(self) -> float:
        return await self._cut  # only this process closes the window: never set

    def closed(self, t: float) -> None:
        pass

    def report_gone(self) -> None:
        pass


class _PipeControl:
    """A worker process's side of the coordination: a pipe to the parent, a counter shared by all workers."""

    def __init__(self, conn: Any, counter: Any, total: int | None) -> None:
        self.loop = loop = asyncio.get_running_loop()
        self.conn, self.counter, self.total = conn, counter, total
        self.gone = False
        self.go: asyncio.Future[float] = loop.create_future()
        self._deadline: asyncio.Future[float] = loop.create_future()
        self._cut: asyncio.Future[float] = loop.create_future()
        loop.add_reader(conn.fileno(), self._on_message)

    def _on_message(self) -> None:
        try:
            while self.conn.poll():
                kind, value = self.conn.recv()
                future = {"go": self.go, "deadline": self._deadline, "cut": self._cut}.get(kind)
                if future is not None and not future.done():
                    future.set_result(value)
                elif kind == "gone":
                    self.gone = True
        except (EOFError, OSError):  # the parent went away: stop
            self.loop.remove_reader(self.conn.fileno())
            self.gone = True
            for future in (self.go, self._deadline, self._cut):
                if not future.done():
                    future.set_exception(HttpError("the parent process went away"))

    def send(self, kind: str, value: Any = None) -> None:
        self.conn.send((kind, value))

    def take(self) -> int | None:
        with self.counter.get_lock():
            index: int = self.counter.value
            if self.total is not None and index >= self.total:
                return None
            self.counter.value = index + 1
        return index

    def wave_ready(self) -> None:
        self.send("wave")

    async def deadline(self) -> float:
        return await self._deadline

    async def cut(self) -> float:
        return await self._cut

    def closed(self, t: float) -> None:
        self.send("closed", t)

    def report_gone(self) -> None:
        if not self.gone:
            self.gone = True
            self.send("gone")

    def close(self) -> None:
        self.loop.remove_reader(self.conn.fileno())


class MetricsSampler:
    """Reads the server's load gauges every `interval_s` while a level runs (`samples`; `available` False when the
    server has no /metrics)."""

    def __init__(self, client: Client, interval_s: float, origin: float) -> None:
        self.client, self.interval_s, self.origin = client, interval_s, origin
        self.samples: list[dict[str, Any]] = []
        self.available: bool | None = None
        self.task: asyncio.Future[None] | None = None
        self.stopping = False

    def start(self) -> None:
        if self.interval_s > 0:
            self.task = asyncio.ensure_future(self._run())
        else:
            self.available = False

    async def _run(self) -> None:
        while not self.stopping:
            t = time.perf_counter()
            sample = await self.client.gauges()
            if self.stopping:  # stop() came while it read (a cancellation asyncio.wait_for swallowed): not kept
                return
            if sample is None:
                if not self.samples:
                    self.available = False
                return  # no /metrics, or the server stopped answering: the samples so far stand
            self.available = True
            self.samples.append({"t": round(t - self.origin, 4), **sample})
            await asyncio.sleep(max(0.0, t + self.interval_s - time.perf_counter()))

    async def stop(self) -> list[dict[str, Any]] | None:
        # The flag ends the loop even where the cancellation is lost: asyncio.wait_for before Python 3.12 (the
        # reads of /metrics) returns its result instead when the cancellation lands as its read completes
        # (bpo-42130), and the sampler then read on forever, the level never ending. Cancelled again until done.
        self.stopping = True
        if self.task is not None:
            while not self.task.done():
                self.task.cancel()
                await asyncio.wait({self.task}, timeout=0.01)
            await asyncio.gather(self.task, return_exceptions=True)
        return None if self.available is False else self.samples


def metric_values(body: bytes, names: Any) -> dict[str, list[float]]:
    """The values of the metrics in `names`, one per label set, from Prometheus text."""
    found: dict[str, list[float]] = {}
    for line in body.decode("utf-8", "replace").splitlines():
        if not line.startswith("sglang:"):
            continue
        match = _METRIC_LINE.match(line.strip())
        if match and match.group(1) in names:
            try:
                found.setdefault(match.group(1), []).append(float(match.group(2)))
            except ValueError:
                continue
    return found


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
        self.edges: tuple[float, float] | None = None  # (the close heard from another process, read on until)
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

    async def _metrics(self, names: Any) -> dict[str, list[float]] | None:
        try:
            status, body = await self.get("/metrics")
        except (asyncio.TimeoutError, HttpError, OSError):  # noqa: UP041 - Python 3.8 on the host
            return None
        return metric_values(body, names) if status == 200 else None

    async def counters(self) -> dict[str, float] | None:
        """The finished-request counters of /metrics, or None (no --enable-metrics, or a release without them)."""
        found = await self._metrics(COUNTERS)
        if found is None or len(found) != len(COUNTERS):
            return None
        return {name: sum(values) for name, values in found.items()}

    async def gauges(self) -> dict[str, float | None] | None:
        """The load gauges of /metrics as a sample's keys (GAUGES), or None (no /metrics, or none of them)."""
        found = await self._metrics(GAUGES)
        if not found:
            return None
        sample: dict[str, float | None] = {}
        for name, key in GAUGES.items():
            values = found.get(name)
            sample[key] = None if not values else (max(values) if key == "token_usage" else sum(values))
        return sample

    async def health(self) -> dict[str, Any]:
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

    async def settle_api(self) -> dict[str, Any]:
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
        self,
        conn: Connection,
        prompt: list[int] | str,
        output_len: int,
        records: list[Record] | None = None,
        scheduled: float | None = None,
        index: int | None = None,
    ) -> Record:
        """One streamed request; its Record joins `records` at once, so a request cut short is still counted."""
        path, body = self.body(prompt, output_len)
        record = Record(time.perf_counter(), scheduled, index)
        if records is not None:
            records.append(record)
        state = {"last": 0}
        native = self.api == "sglang"
        chunk_times, chunk_tokens, chunk_verify = record.chunk_times, record.chunk_tokens, record.chunk_verify
        loads = json.loads

        def on_event(payload: bytes, t: float) -> None:
            if self.cut_at is not None and t >= self.cut_at:
                raise LevelEnded()
            if payload == b"[DONE]":
                record.finished = True
                return
            event = loads(payload)
            if native:
                meta = event.get("meta_info") or {}
                if meta.get("finish_reason") is not None:
                    record.finished = True
                count = meta.get("completion_tokens")
                if count is None:
                    return
                record.verify_ct = meta.get("spec_verify_ct", record.verify_ct)
                new = count - state["last"]
                if new > 0:
                    chunk_times.append(t)
                    chunk_tokens.append(new)
                    chunk_verify.append(record.verify_ct)  # for trim: the count as of this chunk
                    state["last"] = count
                record.output_tokens = count
                record.prompt_tokens = meta.get("prompt_tokens")
                return
            usage = event.get("usage")
            choices = event.get("choices") or []
            text = choices[0].get("text") if choices else None
            if choices and choices[0].get("finish_reason") is not None:
                record.finished = True
            if text:
                chunk_times.append(t)
                if usage and usage.get("completion_tokens") is not None:
                    chunk_tokens.append(usage["completion_tokens"] - state["last"])
                    state["last"] = usage["completion_tokens"]
                else:
                    chunk_tokens.append(None)
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
            record.cut, record.end = True, time.perf_counter() if self.cut_at is None else self.cut_at
            conn.close()
            raise
        record.end = time.perf_counter()
        return record

    # -- a level ---------------------------------------------------------------------------
    def worker_count(self, level: LevelConfig, level_index: int) -> int:
        """The level's worker processes: `workers` (the level's, else the config's), else default_workers; never
        more than the requests it can have in flight (its concurrency, or an open level's cap or arrivals)."""
        if level.get("rate"):
            bound = int(level.get("max_concurrency") or len(arrivals(level, level_index)))
            estimate = min(bound, max(1, math.ceil(float(level["rate"]["per_s"]))))
        else:
            bound = estimate = int(level["concurrency"])
        asked = level.get("workers", self.config.get("workers"))
        count = default_workers(estimate) if asked is None else int(asked)
        return max(1, min(count, bound))

    async def run_level(self, level_index: int, level: LevelConfig) -> dict[str, Any]:
        self.server_gone = False
        workers = self.worker_count(level, level_index)
        fallback = None
        if workers > 1:
            try:
                measured, flushed, before = await self._level_in_workers(level_index, level, workers)
            except WorkersUnavailable as exc:
                fallback = f"{workers} worker processes could not start ({exc}): the level ran in one process"
                workers = 1
        if workers == 1:
            measured, flushed, before = await self._level_here(level_index, level)
            if fallback:
                measured["workers_note"] = fallback
        after = await self.counters() if before is not None else None
        try:
            status, info = await self.server_info()
        except (TimeoutError, HttpError, OSError):
            status, info = None, None  # the server died during the level: its requests say how
        health = await self.health()  # last: its own request would count in the level's counters
        return {
            "concurrency": _level_concurrency(level, measured["requests"]),
            "cache_flushed": flushed,
            **measured,
            "counters": {"before": before, "after": after} if before is not None and after is not None else None,
            "server_info": _info_summary(info) if status == 200 and info else None,
            "server_health": health,
        }

    async def _before_measure(self, level: LevelConfig) -> tuple[bool | None, dict[str, float] | None]:
        """After the warm-up: /flush_cache when asked, then the counters (their difference is the level's alone)."""
        flushed = None
        if level.get("flush_cache"):
            flush_status = await self.post("/flush_cache")
            flushed = True if flush_status == 200 else (None if flush_status == 404 else False)
        return flushed, await self.counters()

    async def warm_up(self, level_index: int, conns: list[Connection], count: int, first: int = 0) -> None:
        """`count` short requests on `conns` (as many at once as there are connections); not measured."""
        output_len = int(self.config["output_len"])
        jobs = [
            self.one(conns[i % len(conns)], self.prompt(-1 - level_index, first + i), min(output_len, 32))
            for i in range(count)
        ]
        await asyncio.gather(*jobs[: len(conns)])
        for extra in jobs[len(conns) :]:
            await extra

    def _connections(self, level: LevelConfig, share: int) -> int:
        """Connections a process opens before the clock starts: its concurrency, or an open level's slots."""
        if not level.get("rate"):
            return share
        return share if level.get("max_concurrency") else min(share, OPEN_LOOP_CONNECTIONS)

    async def _level_here(self, level_index: int, level: LevelConfig) -> tuple[dict[str, Any], bool | None, Any]:
        """The level in this process (one worker): as the client ran before it had workers."""
        schedule = arrivals(level, level_index) if level.get("rate") else None
        slots = int(level.get("max_concurrency") or 0) if schedule is not None else int(level["concurrency"])
        opened = self._connections(level, slots or len(schedule or ()))
        conns = [Connection(self.host, self.port, self.timeout_s) for _ in range(max(1, opened))]
        try:
            # Connections are opened before the clock starts: their setup is the client's cost, not the server's.
            await asyncio.gather(*(conn.open() for conn in conns))
            warmup = int(level.get("warmup_requests", 0))
            if warmup:
                await self.warm_up(level_index, conns, warmup)
            flushed, before = await self._before_measure(level)
            total = None if level.get("duration_s") else level.get("num_requests")
            assert total is not None or level.get("duration_s") or schedule is not None, (
                "a level without a duration has a request count (sweep.client_config sets one)"
            )
            control = _LocalControl(total, level.get("duration_s"))
            origin = time.perf_counter()
            sampler = MetricsSampler(self, self._metrics_interval(), origin)
            sampler.start()
            share = await self.measure_share(level_index, level, conns, control, origin, schedule, slots)
        finally:
            for conn in conns:
                conn.close()
        samples = await sampler.stop()
        lags = sorted(share["lags"])
        requests = share["requests"]
        measured = {
            "duration_s": round(share["finished"] - origin, 7),
            "client_cpu_s": round(share["cpu_s"], 4),
            "client_cpu_busiest_s": round(share["cpu_s"], 4),
            "loop_lag_ms": _lag_summary(lags),
            "requests": requests,
            "workers": [_worker_summary(share, os.getpid(), 0.0, lags)],
            "server_metrics": samples,
            "edge_aligned_chunks": 0,  # one process reads every step's chunks in order
        }
        if schedule is not None:
            measured["rate"] = _rate_summary(level, schedule, requests)
        return measured, flushed, before

    def _metrics_interval(self) -> float:
        value = self.config.get("metrics_interval_s", METRICS_INTERVAL_S)
        return float(value) if value else 0.0

    async def measure_share(
        self,
        level_index: int,
        level: LevelConfig,
        conns: list[Connection],
        control: Any,
        origin: float,
        schedule: list[tuple[int, float]] | None,
        slots: int,
    ) -> dict[str, Any]:
        """One process's part of a level from `origin` on: its records (relative to origin), lag samples, CPU."""
        records: list[Record] = []
        lags: list[float] = []
        stop_probe = asyncio.Event()

        async def probe() -> None:
            while not stop_probe.is_set():
                t = time.perf_counter()
                await asyncio.sleep(LOOP_PROBE_S)
                lags.append(time.perf_counter() - t - LOOP_PROBE_S)

        cpu0 = time.process_time()
        self.edges = None
        probe_task = asyncio.ensure_future(probe())
        try:
            if schedule is None:
                await self._closed_loop(level_index, level, conns, control, origin, records)
            else:
                await self._open_loop(level_index, level, conns, control, origin, records, schedule, slots)
        finally:
            self.cut_at = None
        finished = time.perf_counter()
        stop_probe.set()
        await probe_task
        return {
            "requests": [r.as_json(origin) for r in records],
            "order": [r.index for r in records],
            "edges": None if self.edges is None else [t - origin for t in self.edges],
            "lags": lags,
            "cpu_s": time.process_time() - cpu0,
            "finished": finished,
            "concurrency": slots,
        }

    async def _closed_loop(
        self,
        level_index: int,
        level: LevelConfig,
        conns: list[Connection],
        control: Any,
        origin: float,
        records: list[Record],
    ) -> None:
        concurrency = len(conns)
        output_len = int(self.config["output_len"])
        duration = level.get("duration_s")
        end = level.get("end", "window")
        deadline: list[float | None] = [None]  # set once the first wave has its first tokens (a duration level)
        heard_cut: float | None = None  # the window's close, when another process saw it
        read_until = 0.0

        def stopped() -> bool:
            return self.server_gone or control.gone

        async def worker(conn: Connection) -> None:
            while True:
                if stopped():
                    return
                if duration and deadline[0] is not None and time.perf_counter() >= deadline[0]:
                    return
                index = control.take()
                if index is None:
                    return
                await self.one(conn, self.prompt(level_index, index), output_len, records, index=index)
                if self.server_gone:
                    control.report_gone()

        workers = [asyncio.ensure_future(worker(c)) for c in conns]
        if duration:
            # The duration starts when every first-wave request (of every worker) has a first token (or ended).
            cap = origin + self.timeout_s
            while time.perf_counter() < cap and not stopped():
                wave = records[:concurrency]
                if len(wave) == concurrency and all(r.chunk_times or r.end is not None for r in wave):
                    break
                await asyncio.sleep(LOOP_PROBE_S)
            control.wave_ready()
            deadline[0] = until = await control.deadline()
            if end == "cut":
                self.cut_at = until
            while not stopped() and time.perf_counter() < until:
                await asyncio.sleep(min(0.05, max(0.0, until - time.perf_counter())))
            if end == "window":
                # A worker returns when its request finishes past the deadline: the concurrency drops there. With
                # worker processes, the first process to see it tells the others (through the parent).
                heard = asyncio.ensure_future(control.cut())
                done, _ = await asyncio.wait([*workers, heard], return_when=asyncio.FIRST_COMPLETED)
                if heard in done and heard.exception() is None:
                    # This process's chunks of the step that closed the window may come after the close (it was
                    # scheduled later than the process that saw it): it reads on for half a step, then stops;
                    # the parent places what it read by then at the close (align_edges).
                    heard_cut = heard.result()
                    self.cut_at = read_until = heard_cut + _edge_grace(records)
                    while time.perf_counter() < read_until and not all(w.done() for w in workers):
                        await asyncio.sleep(min(0.005, max(0.0, read_until - time.perf_counter())))
                    for record in records:
                        if record.end is None:
                            record.trim(read_until)
                else:
                    self.cut_at = time.perf_counter()
                    control.closed(self.cut_at)
                    heard.cancel()
            await self._stop(set(workers) if end != "drain" else set())
        await asyncio.gather(*workers, return_exceptions=True)
        if heard_cut is not None:
            self.edges = (heard_cut, read_until)

    async def _open_loop(
        self,
        level_index: int,
        level: LevelConfig,
        conns: list[Connection],
        control: Any,
        origin: float,
        records: list[Record],
        schedule: list[tuple[int, float]],
        slots: int,
    ) -> None:
        """Send on the clock (schedule: index, due seconds after origin), never waiting for an answer, except for
        a slot when `slots` (max_concurrency) caps those in flight."""
        output_len = int(self.config["output_len"])
        duration = level.get("duration_s")
        # A cut level's end, where streams stop reading (None: the level drains).
        until = origin + float(duration) if duration and level.get("end") == "cut" else None
        idle = list(conns)
        opened = list(conns)
        gate = asyncio.Semaphore(slots) if slots else None
        tasks: list[asyncio.Future[None]] = []
        if until is not None:
            self.cut_at = until

        async def send(index: int, due: float) -> None:
            if idle:
                conn = idle.pop()
            else:  # more in flight than connections opened ahead: this one opens inside its request
                conn = Connection(self.host, self.port, self.timeout_s)
                opened.append(conn)
            try:
                await self.one(conn, self.prompt(level_index, index), output_len, records, scheduled=due, index=index)
            finally:
                idle.append(conn)
                if gate is not None:
                    gate.release()
            if self.server_gone:
                control.report_gone()

        try:
            for index, offset in schedule:
                if self.server_gone or control.gone:
                    break
                due = origin + offset
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                if gate is not None:
                    await gate.acquire()
                if until is not None and time.perf_counter() >= until:  # a slot freed only after the level's end
                    if gate is not None:
                        gate.release()
                    break
                tasks.append(asyncio.ensure_future(send(index, due)))
            if until is not None:
                while time.perf_counter() < until and not all(t.done() for t in tasks):
                    await asyncio.sleep(min(0.05, max(0.0, until - time.perf_counter())))
                await self._stop(set(tasks))
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            for conn in opened:
                conn.close()

    @staticmethod
    async def _stop(pending: set[asyncio.Future[Any]]) -> None:
        # Streams that deliver data stop themselves (LevelEnded); the silent ones are cancelled, again until
        # they stop: asyncio.wait_for before Python 3.12 swallows a cancellation that lands as its read
        # completes (bpo-42130).
        pending = {task for task in pending if not task.done()}
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=0.01)

    # -- a level over worker processes -----------------------------------------------------
    async def _level_in_workers(
        self, level_index: int, level: LevelConfig, count: int
    ) -> tuple[dict[str, Any], Any, Any]:
        """The level split over `count` worker processes; their records merged as one process would give them."""
        schedule = arrivals(level, level_index) if level.get("rate") else None
        if schedule is None:
            slots = split(int(level["concurrency"]), count)
        else:
            cap = int(level.get("max_concurrency") or 0)
            slots = split(cap, count) if cap else [0] * count
        warmups = split(int(level.get("warmup_requests", 0)), count)
        try:
            context = multiprocessing.get_context("spawn")
            counter = context.Value("q", 0)
        except (OSError, ImportError, ValueError) as exc:
            raise WorkersUnavailable(f"{type(exc).__name__}: {exc}") from None
        total = None if level.get("duration_s") else level.get("num_requests")
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[tuple[int, tuple[str, Any]]] = asyncio.Queue()
        pipes: list[Any] = []
        procs: list[Any] = []
        config = dict(self.config, api=self.api, model=self.model)
        completed = False
        try:
            for k in range(count):
                job = {
                    "config": config,
                    "level_index": level_index,
                    "level": level,
                    "slots": slots[k],
                    "connections": max(
                        1, self._connections(level, slots[k] or (len(schedule[k::count]) if schedule else 0))
                    ),
                    "warmup": warmups[k],
                    "warmup_first": sum(warmups[:k]),
                    "total": total,
                    "schedule": None if schedule is None else schedule[k::count],
                }
                mine, theirs = context.Pipe()
                proc = context.Process(
                    target=_worker_process, args=(theirs, job, counter), name=f"stream-client-{k}", daemon=True
                )
                try:
                    proc.start()
                except OSError as exc:
                    raise WorkersUnavailable(f"{type(exc).__name__}: {exc}") from None
                theirs.close()
                pipes.append(mine)
                procs.append(proc)
                loop.add_reader(mine.fileno(), _pipe_reader(loop, mine, k, inbox))
            offsets: dict[int, float] = {}
            pids: dict[int, int] = {}
            while len(offsets) < count:
                k, (kind, value) = await inbox.get()
                if kind == "ready":
                    offsets[k] = value["clock"] - (time.perf_counter() - time.time())
                    pids[k] = value["pid"]
                elif kind == "error":  # it could not open its connections or warm up: the level is not run
                    raise HttpError(f"worker process {k}: {value}")
                else:  # it crashed or died starting (this Python cannot run it): the level runs in one process
                    raise WorkersUnavailable(f"worker process {k}: {value}")
            flushed, before = await self._before_measure(level)
            cpu0 = time.process_time()
            origin = time.perf_counter()
            sampler = MetricsSampler(self, self._metrics_interval(), origin)
            sampler.start()
            for pipe in pipes:
                _send(pipe, ("go", origin))
            shares = await self._coordinate(level, pipes, inbox, origin)
            completed = True
            parent_cpu = time.process_time() - cpu0
            samples = await sampler.stop()
        finally:
            for pipe in pipes:
                try:
                    loop.remove_reader(pipe.fileno())
                except (OSError, ValueError):
                    pass
            for proc in procs:
                proc.join(timeout=5 if completed else 0)  # done: they are exiting; else: they wait for nothing
                if proc.is_alive():
                    proc.terminate()
                    proc.join(timeout=5)
            for pipe in pipes:
                pipe.close()
        # (the request's index in the level, start, request): one process lists its requests in index order, the
        # order of their prompts (a reader that replays a request's prompt finds it by its place in the list); two
        # processes can take consecutive indices and start them in the other order, so the start cannot say.
        placed: list[tuple[float, float, dict[str, Any]]] = []
        lags: list[float] = []
        summaries = []
        finished = origin
        for k, share in enumerate(shares):
            if "error" in share:  # the process died or failed mid-level: one failed request says so
                failed = Record(origin)
                failed.error, failed.end = f"worker process {k} failed: {share['error']}", time.perf_counter()
                placed.append((math.inf, 0.0, failed.as_json(origin)))
                summaries.append({"pid": pids.get(k), "concurrency": slots[k], "error": share["error"]})
                continue
            order = share.get("order") or [None] * len(share["requests"])
            placed.extend(
                (math.inf if index is None else index, r["start_s"], r)
                for index, r in zip(order, share["requests"], strict=True)
            )
            lags.extend(share["lags"])
            finished = max(finished, share["finished"])
            summaries.append(_worker_summary(share, pids[k], offsets[k], sorted(share["lags"])))
        placed.sort(key=lambda p: (p[0], p[1]))
        requests = [r for _, _, r in placed]
        aligned = 0
        if schedule is None and level.get("duration_s") and level.get("end", "window") == "window":
            heard = [share["edges"] for share in shares if share.get("edges")]
            aligned = align_edges(requests, max(until for _, until in heard) if heard else None)
            if heard:  # cut at the close, as one process cuts them (not where a process that heard of it stopped)
                cut_s = min(cut for cut, _ in heard)
                for r in requests:
                    if r["cut"] and r["end_s"] is not None and r["end_s"] > cut_s:
                        last = r["start_s"] + r["chunk_s"][-1] if r["chunk_s"] else cut_s
                        r["end_s"] = round(max(cut_s, last), 7)
        lags.sort()
        worker_cpu = [float(share.get("cpu_s", 0.0)) for share in shares]
        measured = {
            "duration_s": round(finished - origin, 7),
            "client_cpu_s": round(sum(worker_cpu) + parent_cpu, 4),
            "client_cpu_busiest_s": round(max([*worker_cpu, parent_cpu]), 4),
            "loop_lag_ms": _lag_summary(lags),
            "requests": requests,
            "workers": summaries,
            "server_metrics": samples,
            "edge_aligned_chunks": aligned,  # chunks placed at the window's edges (align_edges): the record says so
        }
        if schedule is not None:
            measured["rate"] = _rate_summary(level, schedule, requests)
        return measured, flushed, before

    async def _coordinate(
        self, level: LevelConfig, pipes: list[Any], inbox: asyncio.Queue[tuple[int, tuple[str, Any]]], origin: float
    ) -> list[dict[str, Any]]:
        """The parent's part while the workers measure: the duration's deadline once every worker's first wave has
        its first tokens, the window's cut once one worker saw it close, a server gone told to all; their results."""
        count = len(pipes)
        duration = level.get("duration_s")
        results: dict[int, dict[str, Any]] = {}
        waves: set[int] = set()
        deadline_sent = cut_sent = False

        def others(k: int, message: tuple[str, Any]) -> None:
            for j, pipe in enumerate(pipes):
                if j != k and j not in results:
                    _send(pipe, message)

        while len(results) < count:
            k, (kind, value) = await inbox.get()
            if kind == "done":
                results[k] = value
            elif kind in ("error", "crash", "dead"):
                if k not in results:
                    results[k] = {"error": value}
                    waves.add(k)  # its wave will not come: the others' deadline does not wait for it
            elif kind == "wave":
                waves.add(k)
            elif kind == "gone":
                self.server_gone = True
                others(k, ("gone", None))
            elif kind == "closed" and not cut_sent:
                cut_sent = True
                others(k, ("cut", value))
            if duration and not deadline_sent and len(waves) >= count:
                deadline_sent = True
                others(-1, ("deadline", time.perf_counter() + float(duration)))
        return [results[k] for k in range(count)]


def _send(pipe: Any, message: tuple[str, Any]) -> None:
    try:
        pipe.send(message)
    except (OSError, ValueError):  # that worker is gone: its own result says so
        pass


def _pipe_reader(
    loop: asyncio.AbstractEventLoop, pipe: Any, k: int, inbox: asyncio.Queue[tuple[int, tuple[str, Any]]]
) -> Callable[[], None]:
    def on_readable() -> None:
        try:
            while pipe.poll():
                inbox.put_nowait((k, pipe.recv()))
        except (EOFError, OSError):
            loop.remove_reader(pipe.fileno())
            inbox.put_nowait((k, ("dead", "the worker process exited without its result")))

    return on_readable


def _worker_process(conn: Any, job: dict[str, Any], counter: Any) -> None:
    """A worker process's entry (multiprocessing, spawn): its share of one level, its result sent to the parent."""
    try:
        run_loop(_worker_level(conn, job, counter))
    except BaseException as exc:  # noqa: BLE001 - whatever it was, the parent must hear of it
        network = isinstance(exc, (HttpError, OSError, asyncio.TimeoutError))
        try:
            conn.send(("error" if network else "crash", f"{type(exc).__name__}: {exc}"))
        except (OSError, ValueError):
            pass
    finally:
        conn.close()


async def _worker_level(conn: Any, job: dict[str, Any], counter: Any) -> None:
    client = Client(job["config"])
    level, level_index = job["level"], job["level_index"]
    control = _PipeControl(conn, counter, job["total"])
    conns = [Connection(client.host, client.port, client.timeout_s) for _ in range(job["connections"])]
    try:
        await asyncio.gather(*(c.open() for c in conns))
        if job["warmup"]:
            await client.warm_up(level_index, conns, job["warmup"], job["warmup_first"])
        control.send("ready", {"clock": time.perf_counter() - time.time(), "pid": os.getpid()})
        origin = await control.go
        schedule = None if job["schedule"] is None else [tuple(a) for a in job["schedule"]]
        share = await client.measure_share(level_index, level, conns, control, origin, schedule, job["slots"])
    finally:
        for c in conns:
            c.close()
        control.close()
    control.send("done", share)


def run_loop(coroutine: Any) -> Any:
    """Run `coroutine` to its end on a new event loop: uvloop's where it can be imported, else asyncio's."""
    if uvloop is None:
        return asyncio.run(coroutine)
    loop = uvloop.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coroutine)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _edge_grace(records: list[Record]) -> float:
    """Half a step: half the median of the streams' last chunk gaps, at most EDGE_GRACE_MAX_S (0: no gap yet)."""
    gaps = sorted(r.chunk_times[-1] - r.chunk_times[-2] for r in records if len(r.chunk_times) >= 2)
    return min(EDGE_GRACE_MAX_S, gaps[len(gaps) // 2] / 2) if gaps else 0.0


def align_edges(requests: list[dict[str, Any]], read_until: float | None) -> int:
    """Place the chunks of the steps at a window level's edges as one process would have read them (in place);
    returns how many chunks it moved.

    The server sends a step's chunks at once (a finished request's last), and one process reads them in that order;
    worker processes each stamp their own share, and one scheduled a little later stamps the same step later. So at
    the window's start (when the first wave all have a first token: statistics.steady_bounds) a chunk another
    process read just after the last first token, made in the step that delivered it, would count in the window;
    at its end (the first request to finish past the duration) the same step's chunks another process read just
    after would not: half a step more or less, several per cent of a short window of long (speculative) steps. The
    chunks read within half a step (half the median chunk gap) after the start are placed at it, and those read
    after the end, up to half a step or `read_until` (how long a process that heard of the close read on), at it.
    """
    events = _in_flight_events(requests)
    inflight, peak, first, last = 0, 0, None, None
    for i, (t, step) in enumerate(events):  # the span the most requests were in flight (statistics.steady_window)
        inflight += step
        if inflight > peak:
            peak, first, last = inflight, t, None
        if inflight == peak and i + 1 < len(events):
            last = events[i + 1][0]
    if first is None or last is None or last <= first:
        return 0
    wave = [
        r["start_s"] + r["chunk_s"][0]
        for r in requests
        if r["chunk_s"] and r["start_s"] <= first < (r["end_s"] if r["end_s"] is not None else last)
    ]
    start, end = min(max([first, *wave]), last), last
    gaps = sorted(b - a for r in requests for a, b in zip(r["chunk_s"], r["chunk_s"][1:], strict=False))
    if not gaps or end <= start:
        return 0
    half = gaps[len(gaps) // 2] / 2
    after_start, after_end = start + half, max(end + half, read_until or end)
    moved = 0
    for r in requests:
        chunks, origin = r["chunk_s"], r["start_s"]
        for i, offset in enumerate(chunks):
            t = origin + offset
            if start < t <= after_start:
                place = start - origin - 1e-9  # at the start: outside the window, (start, end]
            elif end < t <= after_end:
                place = end - origin - 1e-9  # at the end: inside
            else:
                continue
            chunks[i] = max(place, chunks[i - 1] if i else 0.0)
            moved += 1
    return moved


def _pick(values: list[float], q: float) -> float:
    return values[min(int(q * len(values)), len(values) - 1)] if values else 0.0


def _lag_summary(lags: list[float]) -> dict[str, Any]:
    """p50, p99 and max of sorted lag samples (seconds), in ms."""
    return {
        "p50": _pick(lags, 0.5) * 1e3,
        "p99": _pick(lags, 0.99) * 1e3,
        "max": (lags[-1] if lags else 0.0) * 1e3,
        "samples": len(lags),
    }


def _worker_summary(share: dict[str, Any], pid: int, clock_offset_s: float, lags: list[float]) -> dict[str, Any]:
    return {
        "pid": pid,
        "concurrency": share["concurrency"],
        "requests": len(share["requests"]),
        "cpu_s": round(share["cpu_s"], 4),
        "loop_lag_ms": _lag_summary(lags),
        "clock_offset_ms": round(clock_offset_s * 1e3, 4),
    }


def _rate_summary(
    level: LevelConfig, schedule: list[tuple[int, float]], requests: list[dict[str, Any]]
) -> dict[str, Any]:
    """An open-loop level's arrivals as asked and as sent: the client's own send delay (start - scheduled)."""
    rate = level["rate"]
    delays = sorted(r["start_s"] - r["scheduled_s"] for r in requests if r.get("scheduled_s") is not None)
    return {
        "kind": rate.get("kind", "poisson"),
        "per_s": float(rate["per_s"]),
        "seed": rate.get("seed", 0),
        "max_concurrency": level.get("max_concurrency"),
        "scheduled": len(schedule),
        "sent": len(delays),
        "send_delay_ms": _lag_summary(delays),
    }


def _in_flight_events(requests: list[dict[str, Any]]) -> list[tuple[float, int]]:
    """(time, +1 at a start or -1 at an end) in time order, an end before a start at the same instant."""
    return sorted(
        [(r["start_s"], 1) for r in requests] + [(r["end_s"], -1) for r in requests if r["end_s"] is not None]
    )


def _level_concurrency(level: LevelConfig, requests: list[dict[str, Any]]) -> int:
    """A closed level's concurrency; an open level's cap, else the most requests it had in flight at once."""
    if not level.get("rate"):
        return int(level["concurrency"])
    cap = level.get("max_concurrency")
    if cap:
        return int(cap)
    peak = inflight = 0
    for _, step in _in_flight_events(requests):
        inflight += step
        peak = max(peak, inflight)
    return max(1, peak)


def _info_summary(info: dict[str, Any]) -> dict[str, Any]:
    keep = ("version", "speculative_algorithm", "speculative_num_draft_tokens", "max_running_requests", "model_path")
    summary = {k: info.get(k) for k in keep if k in info}
    summary["internal_states"] = info.get("internal_states")
    return summary


async def run(config: ClientConfig) -> dict[str, Any]:
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
    return {
        **settled,
        "python": sys.version.split()[0],
        "event_loop": "uvloop" if uvloop is not None else "asyncio",
        "levels": levels,
    }


def _aborted_level(level: LevelConfig, why: str) -> dict[str, Any]:
    failed = Record(0.0)
    failed.error, failed.end = why, 0.0
    return {
        "concurrency": int(level.get("concurrency") or level.get("max_concurrency") or 1),
        "cache_flushed": None,
        "duration_s": 0.0,
        "client_cpu_s": 0.0,
        "client_cpu_busiest_s": 0.0,
        "loop_lag_ms": {"p50": 0.0, "p99": 0.0, "max": 0.0, "samples": 0},
        "requests": [failed.as_json(0.0)],
        "workers": [],
        "server_metrics": None,
        "server_info": None,
        "server_health": {"ok": False, "path": None, "status": None, "error": why},
    }


def main() -> int:
    config = json.loads(sys.stdin.read())
    try:
        result = run_loop(run(config))
    except (TimeoutError, HttpError, OSError) as exc:
        json.dump({"fatal": f"{type(exc).__name__}: {exc}"}, sys.stdout)
        return 2
    json.dump(result, sys.stdout, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
