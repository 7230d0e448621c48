"""The benchmark client against a server with known timing (tools/benchmark/reference_server.py), over real SSH.

The reference server waits 40 ms, then sends a 4-token chunk every 8 ms, each
chunk on a fixed schedule from the request's arrival (chunk k at 40 + 8k ms). The
tests assert what the client computes from that stream, never how fast this
machine is:
- counts: requests, tokens, chunks, tokens per chunk and latency samples, exactly;
- the figures' definitions: overall tok/s = tokens / duration, ITL per token x
  tokens per chunk = inter-chunk gap (means), TPOT per chunk / TPOT = (tokens - 1) /
  (chunks - 1), achieved concurrency <= the level's;
- one-sided bounds the schedule guarantees on any machine: the server is never
  early, so TTFT >= 40 ms, e2e >= 40 + 39 x 8 ms, and overall tok/s <= the schedule's ideal;
- throughput of timed levels measured one after the other, compared with generous bounds
  (the fixed schedule keeps throughput steady when a chunk is late).
How close the measured figures come to the known ones on this machine is a
benchmark, not a test: benchmarks/benchmark_known_timing.py prints them beside
their targets.

The sim backend's ports are virtual (only its serving simulator registers one), so
this file reaches the world over ssh://, whose ports are the machine's own. The
world runs at time scale 1: its clock runs at one second a second, as the
reference server's (the programs the host's python runs read the host's clock).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from specops.tools.benchmark import BenchmarkArgs, ServerNotReachable, run_benchmark
from specops.tools.benchmark.reference_server import __file__ as REFERENCE_SERVER
from specops.tools.benchmark.statistics import level_result
from specops.tools.benchmark.sweep import client_config, run_client, server_url
from specops.tools.context import ToolContext
from specops.tools.hosts import LocalHost

from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(90), pytest.mark.serial, pytest.mark.slow]
TTFT_MS, CHUNK_MS, PER_CHUNK, OUTPUT = 40.0, 8.0, 4, 160
CHUNKS = OUTPUT // PER_CHUNK
# The least time one request can take: the last chunk is due CHUNKS - 1 chunk times after the first.
E2E_MIN_MS = TTFT_MS + (CHUNKS - 1) * CHUNK_MS
# Timers may fire a hair early, and figures are rounded on the way (stream_client.py rounds to 0.1 us).
SLACK_MS = 1.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ssh_host():
    with start_world(time_scale=1.0) as world, reach(world, "ssh") as host:
        yield host


@pytest.fixture(scope="module")
def ctx(ssh_host):
    return ToolContext.for_host(ssh_host)


@pytest.fixture(scope="module")
def reference(ssh_host, ctx):  # noqa: F811
    host = ssh_host
    path = f"{ctx.home}/bench/reference_server.py"
    host.write_file(path, Path(REFERENCE_SERVER).read_bytes())
    port = _free_port()
    server = host.start_detached(
        [
            "python3",
            path,
            "--port",
            str(port),
            "--ttft-ms",
            str(TTFT_MS),
            "--chunk-ms",
            str(CHUNK_MS),
            "--tokens-per-chunk",
            str(PER_CHUNK),
        ],
        log_path="logs/reference.log",
    )
    deadline = time.monotonic() + 15
    while "listening" not in host.tail("logs/reference.log"):
        assert time.monotonic() < deadline, host.tail("logs/reference.log")
        time.sleep(0.05)
    yield port
    host.stop(server)


def test_the_client_on_the_host_counts_every_token_and_computes_its_figures_from_them(ctx, reference):  # noqa: F811
    result = run_benchmark(ctx, BenchmarkArgs(port=reference, levels=[1, 8], output_len=OUTPUT, rounds=2))
    assert result.api == "openai" and result.model == "reference" and result.client == "host"
    for level in result.levels:
        requests = 2 * level.concurrency
        assert level.requests_completed == requests and level.requests_failed == 0 and level.requests_cut == 0
        assert level.total_output_tokens == OUTPUT * requests
        assert level.tokens_per_chunk == PER_CHUNK
        assert level.cache_flushed is None  # the reference server has no /flush_cache
        # One sample per request, per chunk gap, per token after a request's first chunk.
        assert level.ttft.samples == level.e2e.samples == level.tpot.samples == requests
        assert level.inter_chunk_gap.samples == requests * (CHUNKS - 1)
        assert level.itl_per_token.samples == requests * (OUTPUT - PER_CHUNK)
        # The figures' definitions, from the same timings.
        assert level.output_tok_s_overall == pytest.approx(level.total_output_tokens / level.duration_s, rel=1e-9)
        assert level.request_rate_per_s == pytest.approx(requests / level.duration_s, rel=1e-9)
        assert level.itl_per_token.mean_ms * PER_CHUNK == pytest.approx(level.inter_chunk_gap.mean_ms, rel=1e-9)
        assert level.tpot_per_chunk.p50_ms == pytest.approx(level.tpot.p50_ms * (OUTPUT - 1) / (CHUNKS - 1), rel=1e-9)
        assert 0 < level.achieved_concurrency <= level.concurrency + 1e-6
        assert level.ttft.p50_ms <= level.e2e.p50_ms
        # The server is never early: bounds that hold however busy this machine is.
        assert level.ttft.p50_ms >= TTFT_MS - SLACK_MS
        assert level.e2e.p50_ms >= E2E_MIN_MS - SLACK_MS
        ideal = OUTPUT * level.concurrency / ((E2E_MIN_MS - SLACK_MS) / 1e3)
        assert 0 < level.output_tok_s_overall <= ideal
    assert any("no /flush_cache" in w for w in result.warnings)


def test_the_client_here_counts_the_same_tokens_but_the_ssh_link_adds_latency(ctx, reference):  # noqa: F811
    result = run_benchmark(ctx, BenchmarkArgs(port=reference, levels=[4], output_len=OUTPUT, rounds=1, client="local"))
    level = result.levels[0]
    assert level.total_output_tokens == OUTPUT * 4 and level.tokens_per_chunk == PER_CHUNK
    assert level.ttft.p50_ms > TTFT_MS - 1  # never faster than the server; the forward only adds
    assert "port forward" in result.method


def test_nothing_listening_is_a_typed_error(ctx):  # noqa: F811
    with pytest.raises(ServerNotReachable):
        run_benchmark(ctx, BenchmarkArgs(port=_free_port(), levels=[1]))


def test_a_local_host_runs_the_client_too(reference, tmp_path):
    with LocalHost() as local:
        # The reference server listens on this machine's loopback (sim and ssh worlds live here); the client
        # script is written under the context's home, here a temporary one.
        result = run_benchmark(
            ToolContext(host=local, home=str(tmp_path), allowed_roots=(str(tmp_path),)),
            BenchmarkArgs(port=reference, levels=[2], output_len=40, rounds=1),
        )
    assert result.levels[0].total_output_tokens == 80


def test_a_timed_level_is_cut_at_its_end_drained_or_ended_with_its_window(ctx, reference):  # noqa: F811
    # Answers of 4,000 tokens take at least 8 s; a cut level of 0.5 s does not wait for them: none completes.
    cut = run_benchmark(
        ctx, BenchmarkArgs(port=reference, levels=[4], output_len=4000, duration_s=0.5, end="cut", warmup_requests=0)
    ).levels[0]
    assert cut.requests_cut == 4 and cut.requests_completed == 0 and cut.requests_failed == 0
    # Cut requests' tokens count, their latencies do not (TTFT does: each had its first token).
    assert cut.e2e.samples == 0 and cut.tpot.samples == 0 and cut.ttft.samples == 4
    assert cut.ttft.p50_ms >= TTFT_MS - SLACK_MS
    assert 0 < cut.total_output_tokens < 4 * 4000 and cut.tokens_per_chunk == PER_CHUNK
    assert cut.output_tok_s > 0
    drained = run_benchmark(
        ctx,
        BenchmarkArgs(port=reference, levels=[4], output_len=OUTPUT, duration_s=0.5, end="drain", warmup_requests=0),
    ).levels[0]
    assert drained.requests_cut == 0 and drained.requests_completed > 4
    assert drained.total_output_tokens == OUTPUT * drained.requests_completed
    windowed = run_benchmark(
        ctx, BenchmarkArgs(port=reference, levels=[4], output_len=OUTPUT, duration_s=0.5, warmup_requests=0)
    ).levels[0]
    assert windowed.requests_failed == 0 and windowed.requests_completed >= 4
    # All three hold 4 streams decoding on the server's fixed schedule (4 x 4 tokens every 8 ms), so their
    # steady figures agree; the bound is generous (measured together they agree within a few per cent,
    # benchmarks/benchmark_known_timing.py prints how closely): 12 busy processes on 2 cores left it passing.
    assert windowed.output_tok_s == pytest.approx(drained.output_tok_s, rel=0.25)
    assert cut.output_tok_s == pytest.approx(drained.output_tok_s, rel=0.25)


def test_worker_processes_on_the_host_count_the_same_tokens_with_the_same_definitions(ctx, reference):  # noqa: F811
    """The client uploaded to the host splits the level over two processes (spawned by the host's python3): the
    merged level counts what one process counts, and the schedule's bounds hold for both processes' requests."""
    args = BenchmarkArgs(port=reference, levels=[8], output_len=OUTPUT, rounds=2)
    with server_url(ctx.host, args.port, args.client) as url:
        raw = run_client(ctx, args, {**client_config(args, url), "workers": 2})
    raw_level = raw["levels"][0]
    assert [w["concurrency"] for w in raw_level["workers"]] == [4, 4]
    assert sum(w["requests"] for w in raw_level["workers"]) == 16
    level = level_result(raw_level)
    assert level.requests_completed == 16 and level.requests_failed == 0 and level.requests_cut == 0
    assert level.total_output_tokens == OUTPUT * 16 and level.tokens_per_chunk == PER_CHUNK
    assert level.inter_chunk_gap.samples == 16 * (CHUNKS - 1)
    assert level.output_tok_s_overall == pytest.approx(level.total_output_tokens / level.duration_s, rel=1e-9)
    assert 0 < level.achieved_concurrency <= 8 + 1e-6
    assert level.ttft.p50_ms >= TTFT_MS - SLACK_MS and level.e2e.p50_ms >= E2E_MIN_MS - SLACK_MS
