"""The benchmark client against a server with known timing (tools/benchmark/reference_server.py), over real SSH.

The reference server waits 40 ms, then sends a 4-token chunk every 8 ms: TTFT,
inter-chunk gap, ITL per token (2 ms) and tok/s are known, so the client's own
error is measured, both where it runs on the host and here through a forward.
The sim backend's ports are virtual (only its serving simulator registers one), so
this file reaches the world over ssh://, whose ports are the machine's own. The
world runs at time scale 1: the tool converts a faster sim host's figures to
modelled time, and the reference server keeps real time.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from specops.tools.benchmark import BenchmarkArgs, ServerNotReachable, run_benchmark
from specops.tools.benchmark.reference_server import __file__ as REFERENCE_SERVER
from specops.tools.context import ToolContext
from specops.tools.hosts import LocalHost

from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(90), pytest.mark.serial]
TTFT_MS, CHUNK_MS, PER_CHUNK, OUTPUT = 40.0, 8.0, 4, 160


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
        ["python3", path, "--port", str(port), "--ttft-ms", str(TTFT_MS), "--chunk-ms", str(CHUNK_MS),
         "--tokens-per-chunk", str(PER_CHUNK)],
        log_path="logs/reference.log",
    )
    deadline = time.monotonic() + 15
    while "listening" not in host.tail("logs/reference.log"):
        assert time.monotonic() < deadline, host.tail("logs/reference.log")
        time.sleep(0.05)
    yield port
    host.stop(server)


def test_the_client_on_the_host_measures_a_known_server_within_a_few_percent(ctx, reference):  # noqa: F811
    result = run_benchmark(ctx, BenchmarkArgs(port=reference, levels=[1, 8], output_len=OUTPUT, rounds=2))
    assert result.api == "openai" and result.model == "reference" and result.client == "host"
    decode_s = (OUTPUT / PER_CHUNK - 1) * CHUNK_MS / 1e3
    for level in result.levels:
        assert level.requests_completed == 2 * level.concurrency and level.requests_failed == 0
        assert level.total_output_tokens == OUTPUT * level.requests_completed
        assert level.tokens_per_chunk == PER_CHUNK
        assert level.ttft.p50_ms == pytest.approx(TTFT_MS, abs=4)
        assert level.inter_chunk_gap.p50_ms == pytest.approx(CHUNK_MS, rel=0.1)
        assert level.itl_per_token.p50_ms == pytest.approx(CHUNK_MS / PER_CHUNK, rel=0.1)
        assert level.tpot.p50_ms == pytest.approx(decode_s * 1e3 / (OUTPUT - 1), rel=0.1)
        ideal = OUTPUT * level.concurrency / (TTFT_MS / 1e3 + decode_s)
        assert level.output_tok_s == pytest.approx(ideal, rel=0.08)
        assert level.cache_flushed is None  # the reference server has no /flush_cache
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


def test_a_local_host_runs_the_client_too(reference):
    with LocalHost() as local:
        # The reference server listens on this machine's loopback (sim and ssh worlds live here).
        result = run_benchmark(ToolContext(host=local, home=str(Path.home()), allowed_roots=(str(Path.home()),)),
                               BenchmarkArgs(port=reference, levels=[2], output_len=40, rounds=1))
    assert result.levels[0].total_output_tokens == 80


def test_a_timed_level_is_cut_at_its_end_drained_or_ended_with_its_window(ctx, reference):  # noqa: F811
    # Answers of 4,000 tokens take 8 s; a cut level of 0.5 s does not wait for them.
    started = time.monotonic()
    cut = run_benchmark(ctx, BenchmarkArgs(port=reference, levels=[4], output_len=4000, duration_s=0.5, end="cut",
                                           warmup_requests=0)).levels[0]  # fmt: skip
    assert time.monotonic() - started < 4
    assert cut.requests_cut == 4 and cut.requests_completed == 0 and cut.requests_failed == 0
    assert cut.e2e.samples == 0 and cut.ttft.p50_ms == pytest.approx(TTFT_MS, abs=4)
    # Every stream decoding: 4 x 4 tokens every 8 ms.
    assert cut.output_tok_s == pytest.approx(4 * PER_CHUNK / (CHUNK_MS / 1e3), rel=0.08)
    drained = run_benchmark(ctx, BenchmarkArgs(port=reference, levels=[4], output_len=OUTPUT, duration_s=0.5,
                                               end="drain", warmup_requests=0)).levels[0]  # fmt: skip
    assert drained.requests_cut == 0 and drained.requests_completed > 4
    assert drained.total_output_tokens == OUTPUT * drained.requests_completed
    # Ending with the steady window reads the same throughput as the drain (the streams here run in step).
    windowed = run_benchmark(ctx, BenchmarkArgs(port=reference, levels=[4], output_len=OUTPUT, duration_s=0.5,
                                                warmup_requests=0)).levels[0]  # fmt: skip
    assert windowed.requests_failed == 0 and windowed.requests_completed >= 4
    assert windowed.output_tok_s == pytest.approx(drained.output_tok_s, rel=0.05)
