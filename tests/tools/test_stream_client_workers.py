"""The benchmark client's worker processes, open-loop levels and server-metric samples.

The client runs as it does on a host: the script (tools/benchmark/stream_client.py) with this
interpreter, its config on stdin, against the reference server (tools/benchmark/reference_server.py:
40 ms to the first chunk, then a 4-token chunk every 8 ms). The tests assert what the client
computes and records (counts, shapes, the schedule it was given, what it merged), never how fast
this machine is.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from specops.tools.benchmark import stream_client
from specops.tools.benchmark.reference_server import __file__ as REFERENCE_SERVER
from specops.tools.benchmark.statistics import level_result

pytestmark = [pytest.mark.timeout(120), pytest.mark.serial, pytest.mark.slow]

CLIENT = Path(stream_client.__file__)
TTFT_MS, CHUNK_MS, PER_CHUNK, OUTPUT = 40.0, 8.0, 4, 80
REQUEST_KEYS = {
    "start_s",
    "end_s",
    "chunk_s",
    "chunk_tokens",
    "output_tokens",
    "prompt_tokens",
    "spec_verify_ct",
    "error",
    "cut",
    "finished",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reference(*extra: str) -> Iterator[int]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            REFERENCE_SERVER,
            "--port",
            str(port),
            "--ttft-ms",
            str(TTFT_MS),
            "--chunk-ms",
            str(CHUNK_MS),
            "--tokens-per-chunk",
            str(PER_CHUNK),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None and "listening" in proc.stdout.readline()
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    """The reference server with /metrics."""
    yield from _reference("--metrics")


@pytest.fixture(scope="module")
def plain_server() -> Iterator[int]:
    """The reference server without /metrics (404)."""
    yield from _reference()


def run_client(port: int, levels: list[dict], **extra: object) -> dict:
    config = {
        "base_url": f"http://127.0.0.1:{port}",
        "api": "openai",
        "output_len": OUTPUT,
        "prompts": {"kind": "random_ids", "input_len": 8, "seed": 1},
        "request_timeout_s": 30,
        "levels": levels,
        **extra,
    }
    done = subprocess.run(
        [sys.executable, str(CLIENT)], input=json.dumps(config), capture_output=True, text=True, timeout=100
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def peak_in_flight(requests: list[dict]) -> int:
    events = sorted([(r["start_s"], 1) for r in requests] + [(r["end_s"], -1) for r in requests])
    peak = inflight = 0
    for _, step in events:
        inflight += step
        peak = max(peak, inflight)
    return peak


def chunks_within(request: dict) -> bool:
    """No chunk of a request was read after its end (a cut one's too)."""
    return request["end_s"] is None or all(
        request["start_s"] + c <= request["end_s"] + 1e-6 for c in request["chunk_s"]
    )


# -- the worker count -------------------------------------------------------------------------


def test_the_default_worker_count_grows_with_concurrency_and_cores_but_not_past_them():
    assert stream_client.default_workers(1, cpus=64) == 1
    assert stream_client.default_workers(8, cpus=64) == 1
    assert stream_client.default_workers(32, cpus=2) == 2  # two cores: two, each stamping half a step's chunks
    assert stream_client.default_workers(32, cpus=1) == 1
    assert stream_client.default_workers(32, cpus=16) == 4
    assert stream_client.default_workers(512, cpus=128) == stream_client.MAX_WORKERS
    client = stream_client.Client({"base_url": "http://127.0.0.1:1", "workers": 8})
    assert client.worker_count({"concurrency": 3}, 0) == 3  # never more processes than requests in flight
    assert client.worker_count({"concurrency": 3, "workers": 1}, 0) == 1  # a level's own count wins
    open_level = {"rate": {"kind": "constant", "per_s": 10.0}, "num_requests": 5}
    assert client.worker_count(open_level, 0) == 5
    assert client.worker_count({**open_level, "max_concurrency": 2}, 0) == 2
    assert stream_client.split(10, 4) == [3, 3, 2, 2] and stream_client.split(3, 3) == [1, 1, 1]


# -- closed loop over workers -----------------------------------------------------------------


def test_several_workers_give_the_output_of_one_with_the_same_totals(server):
    levels = [{"concurrency": 4, "num_requests": 12, "warmup_requests": 2, "flush_cache": False}]
    one = run_client(server, [{**levels[0], "workers": 1}], metrics_interval_s=0.05)["levels"][0]
    two = run_client(server, [{**levels[0], "workers": 2}], metrics_interval_s=0.05)["levels"][0]
    assert set(one) == set(two)
    assert len(one["workers"]) == 1 and len(two["workers"]) == 2
    for level in (one, two):
        requests = level["requests"]
        assert len(requests) == 12 and all(set(r) == REQUEST_KEYS for r in requests)
        assert all(r["error"] is None and r["finished"] and not r["cut"] for r in requests)
        assert sum(r["output_tokens"] for r in requests) == 12 * OUTPUT
        assert all(sum(r["chunk_tokens"]) == OUTPUT and len(r["chunk_s"]) == OUTPUT // PER_CHUNK for r in requests)
        # In the order they were issued (their prompts' order): two processes can start consecutive ones a hair
        # apart in the other order, never further.
        starts = [r["start_s"] for r in requests]
        assert all(later > earlier - 0.01 for earlier, later in zip(starts, starts[1:], strict=False))
        assert sum(w["requests"] for w in level["workers"]) == 12
        assert sum(w["concurrency"] for w in level["workers"]) == 4
        # The client's load is every process's: the sum, and the busiest one alone.
        assert level["client_cpu_s"] >= sum(w["cpu_s"] for w in level["workers"]) - 1e-3
        assert level["client_cpu_busiest_s"] >= max(w["cpu_s"] for w in level["workers"]) - 1e-3
        assert level["loop_lag_ms"]["samples"] == sum(w["loop_lag_ms"]["samples"] for w in level["workers"])
        result = level_result(level)
        assert result.requests_completed == 12 and result.total_output_tokens == 12 * OUTPUT
        assert result.tokens_per_chunk == PER_CHUNK
    # Worker processes read the same CLOCK_MONOTONIC as the parent: their offsets are clock-read jitter.
    assert all(abs(w["clock_offset_ms"]) < 50 for w in two["workers"])


def test_closed_loop_concurrency_is_held_in_total_not_per_worker(server):
    level = run_client(server, [{"concurrency": 4, "num_requests": 16, "warmup_requests": 0, "workers": 2}])["levels"][
        0
    ]
    requests = level["requests"]
    assert [w["concurrency"] for w in level["workers"]] == [2, 2]
    assert len(requests) == 16 and all(r["error"] is None for r in requests)
    # Each worker keeps its share in flight from one shared count of requests: never more than 4 at once,
    # and every worker issues until the level's count is used up.
    assert peak_in_flight(requests) <= 4
    assert all(w["requests"] >= 2 for w in level["workers"])


@pytest.mark.parametrize("end", ["window", "cut", "drain"])
def test_a_timed_level_over_workers_ends_as_one_process_ends_it(server, end):
    output = 4000 if end == "cut" else OUTPUT
    raw = run_client(
        server,
        [{"concurrency": 4, "duration_s": 0.4, "end": end, "warmup_requests": 0, "workers": 2}],
        output_len=output,
    )
    requests = raw["levels"][0]["requests"]
    assert requests and all(r["error"] is None for r in requests)
    assert all(chunks_within(r) for r in requests)
    cut = [r for r in requests if r["cut"]]
    if end == "drain":
        assert not cut and all(r["finished"] for r in requests)
    elif end == "cut":
        # 4,000-token answers outlast the level: all four are cut at the one deadline, in both processes.
        assert len(cut) == 4 and len({r["end_s"] for r in cut}) == 1
    else:
        # The window closes when the first answer finishes past the deadline; the others are cut there (the
        # reference server's answers finish together, so there may be none left to cut).
        done_after = [r["end_s"] for r in requests if not r["cut"] and r["end_s"] > max(x["start_s"] for x in requests)]
        assert done_after and all(r["end_s"] >= min(done_after) - 1e-6 for r in cut)
    assert level_result(raw["levels"][0]).requests_failed == 0


# -- open loop --------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("kind", ["constant", "poisson"])
def test_a_rate_level_sends_its_count_on_the_scheduled_clock(server, kind, workers):
    per_s, count = 100.0, 60
    level = {
        "rate": {"kind": kind, "per_s": per_s, "seed": 7},
        "num_requests": count,
        "warmup_requests": 0,
        "workers": workers,
    }
    raw = run_client(server, [level], metrics_interval_s=0)["levels"][0]
    requests = raw["requests"]
    assert len(requests) == count and all(r["error"] is None for r in requests)
    assert len(raw["workers"]) == workers
    scheduled = sorted(r["scheduled_s"] for r in requests)
    # The recorded schedule is the one the seeded RNG gives (whatever this machine's speed), split over workers.
    assert scheduled == pytest.approx([due for _, due in stream_client.arrivals(level, 0)], abs=1e-6)
    gaps = [b - a for a, b in zip(scheduled, scheduled[1:], strict=False)]
    mean = sum(gaps) / len(gaps)
    if kind == "constant":
        assert all(g == pytest.approx(1 / per_s, abs=1e-6) for g in gaps)
    else:
        assert mean == pytest.approx(1 / per_s, rel=0.3)  # 59 exponential gaps: a standard error of 13%
        assert len({round(g, 6) for g in gaps}) > count // 2  # not fixed gaps
    # Every request records when it was due and when it went: never before it was due.
    assert all(r["start_s"] >= r["scheduled_s"] - 1e-6 for r in requests)
    assert raw["rate"]["scheduled"] == raw["rate"]["sent"] == count
    assert raw["rate"]["send_delay_ms"]["samples"] == count
    assert raw["concurrency"] >= 1


def test_a_rate_level_with_a_duration_sends_the_arrivals_due_within_it_and_can_cut_there(server):
    level = {
        "rate": {"kind": "constant", "per_s": 40.0},
        "duration_s": 0.5,
        "end": "cut",
        "warmup_requests": 0,
        "max_concurrency": 30,
        "workers": 2,
    }
    raw = run_client(server, [level], output_len=4000)["levels"][0]
    requests = raw["requests"]
    assert len(requests) == 20  # due at 0, 25, ..., 475 ms
    assert raw["concurrency"] == 30 and [w["concurrency"] for w in raw["workers"]] == [15, 15]
    assert all(r["cut"] and r["error"] is None and chunks_within(r) for r in requests)
    assert len({r["end_s"] for r in requests}) == 1  # one cut, at the level's end, in both processes


# -- the server's load during a level ---------------------------------------------------------


@pytest.fixture
def fresh_server() -> Iterator[int]:
    """The reference server with /metrics, running nothing but this test's requests."""
    yield from _reference("--metrics")


@pytest.mark.parametrize("workers", [1, 2])
def test_server_metrics_are_sampled_during_a_level_when_the_server_has_them(fresh_server, plain_server, workers):
    level = {"concurrency": 4, "num_requests": 8, "warmup_requests": 0, "workers": workers}
    with_metrics = run_client(fresh_server, [level], metrics_interval_s=0.05)["levels"][0]
    samples = with_metrics["server_metrics"]
    assert samples, "a level of several hundred ms has at least its first sample"
    assert all(set(s) == {"t", "running", "queued", "token_usage"} for s in samples)
    assert all(0 <= s["running"] <= 4 and s["queued"] == 0 for s in samples)
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert samples[0]["t"] >= 0 and samples[-1]["t"] <= with_metrics["duration_s"]
    without = run_client(plain_server, [level], metrics_interval_s=0.05)["levels"][0]
    assert without["server_metrics"] is None
    off = run_client(fresh_server, [level], metrics_interval_s=0)["levels"][0]
    assert off["server_metrics"] is None


def test_the_sampler_stops_when_its_cancellation_lands_as_a_read_of_metrics_completes():
    """The level's end cancels the sampler; asyncio.wait_for before Python 3.12 swallows a cancellation that lands
    as its read completes (bpo-42130), as the sampler's reads of /metrics use it. The sampler read on for good and
    the client never finished its level (a busy machine, now and then). Forced here: the read completes in the same
    turn of the loop as the cancellation."""

    class Gauges:
        def __init__(self) -> None:
            self.reads = 0
            self.pending: asyncio.Future | None = None
            self.reading = asyncio.Event()

        async def gauges(self) -> dict:
            self.reads += 1
            self.pending = asyncio.get_running_loop().create_future()
            self.reading.set()
            return await asyncio.wait_for(self.pending, 30)

    async def scenario() -> tuple[list, int]:
        client = Gauges()
        sampler = stream_client.MetricsSampler(client, 0.01, 0.0)  # type: ignore[arg-type]
        sampler.start()
        await client.reading.wait()
        assert client.pending is not None
        client.pending.set_result({"running": 1.0, "queued": 0.0, "token_usage": 0.1})  # the read completes ...
        samples = await asyncio.wait_for(sampler.stop(), 5)  # ... as the level's end cancels the sampler
        return samples, client.reads

    samples, reads = asyncio.run(scenario())
    assert reads == 1 and samples == []  # stopped there: no read after the end, none kept from the one it ended


def test_metric_text_gives_the_gauges_summed_over_label_sets():
    body = (
        b"# TYPE sglang:num_running_reqs gauge\n"
        b'sglang:num_running_reqs{tp_rank="0",dp_rank="0"} 3.0\n'
        b'sglang:num_running_reqs{tp_rank="0",dp_rank="1"} 5.0\n'
        b'sglang:num_queue_reqs{tp_rank="0"} 2.0\n'
        b'sglang:token_usage{dp_rank="0"} 0.25\n'
        b'sglang:token_usage{dp_rank="1"} 0.5\n'
        b"sglang:generation_tokens_total 1e3\n"
    )
    found = stream_client.metric_values(body, stream_client.GAUGES)
    assert found == {
        "sglang:num_running_reqs": [3.0, 5.0],
        "sglang:num_queue_reqs": [2.0],
        "sglang:token_usage": [0.25, 0.5],
    }


def test_a_chunked_body_split_anywhere_gives_the_same_events():
    """Blocks read from the socket cut HTTP chunks and SSE lines anywhere: the events come out whole, once."""
    events = [b'{"n": %d}' % i for i in range(50)]
    body = b"".join(b"%x\r\n" % (len(b"data: " + e + b"\n\n")) + b"data: " + e + b"\n\n\r\n" for e in events)
    body += b"0\r\n\r\n"

    class Reader:
        def __init__(self, data: bytes, size: int) -> None:
            self.data, self.size = data, size

        async def read(self, _n: int) -> bytes:
            piece, self.data = self.data[: self.size], self.data[self.size :]
            return piece

    for size in (1, 7, 64, len(body)):
        got: list[bytes] = []
        parser = stream_client.SseParser(lambda payload, t, got=got: got.append(payload))
        conn = stream_client.Connection("127.0.0.1", 1, 5.0)
        asyncio.run(conn.read_chunked(Reader(body, size), parser.feed))  # type: ignore[arg-type]
        assert got == events, size


def test_a_cut_heard_late_drops_the_chunks_read_after_it():
    """A worker that hears of another's window cut after reading on keeps only what it had at the cut."""
    record = stream_client.Record(10.0)
    record.chunk_times, record.chunk_tokens = [10.1, 10.2, 10.3], [4, 4, 4]
    record.output_tokens, record.finished = 12, True
    record.trim(10.25)
    assert record.chunk_times == [10.1, 10.2] and record.chunk_tokens == [4, 4]
    assert record.output_tokens == 8 and not record.finished
    record.trim(11.0)  # nothing after it: unchanged
    assert record.output_tokens == 8 and record.chunk_times == [10.1, 10.2]


def test_a_trimmed_record_keeps_the_verify_count_of_its_last_kept_chunk():
    """A grader replays a record's verify steps from its tokens: a count from a dropped chunk would disagree."""
    record = stream_client.Record(10.0)
    record.chunk_times, record.chunk_tokens, record.chunk_verify = [10.1, 10.2, 10.3], [1, 4, 3], [0, 1, 2]
    record.output_tokens, record.verify_ct = 8, 2
    record.trim(10.25)
    assert record.output_tokens == 5 and record.verify_ct == 1 and record.chunk_verify == [0, 1]


def _request(start: float, chunks: list[float], end: float | None, cut: bool = False) -> dict:
    return {"start_s": start, "chunk_s": [c - start for c in chunks], "end_s": end, "cut": cut}


def test_chunks_of_the_steps_at_a_window_s_edges_are_placed_as_one_process_reads_them():
    """Two requests, steps every 100 ms: the second's first token comes at 0.105 (the window opens there), but the
    first's chunk of that same step was stamped later by its process (0.107); the first finishes at 0.605 (the
    window closes), but the second's chunk of that step was stamped after (0.607)."""
    a = _request(0.0, [0.005, 0.107, 0.205, 0.305, 0.405, 0.505, 0.6049], 0.605)
    b = _request(0.001, [0.105, 0.205, 0.305, 0.405, 0.505, 0.607], 0.61, cut=True)
    assert stream_client.align_edges([a, b], read_until=0.62) == 2  # a's at 0.107, b's at 0.607
    arrivals_a = [a["start_s"] + c for c in a["chunk_s"]]
    arrivals_b = [b["start_s"] + c for c in b["chunk_s"]]
    assert arrivals_a[1] <= 0.105 and arrivals_a[2:] == pytest.approx([0.205, 0.305, 0.405, 0.505, 0.6049])
    assert 0.105 - 1e-6 < arrivals_b[-1] <= 0.605 and arrivals_b[:-1] == pytest.approx(
        [0.105, 0.205, 0.305, 0.405, 0.505]
    )
    # Within (start, end]: five steps of each, as one process reading in the server's order counts them.
    inside = sum(1 for t in arrivals_a + arrivals_b if 0.105 < t <= 0.605)
    assert inside == 10
