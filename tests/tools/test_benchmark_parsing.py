"""The benchmark's pure parts: bad input refused, statistics, and sglang.bench_serving's JSONL parser.

The JSONL sample is built from the field list of SGLang's `--output-file` lines
(shared/reference/sglang-dflash.md): one run at --max-concurrency 16.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from specops.tools.benchmark import BenchmarkArgs, BenchServingUnavailable, parse_bench_serving_line, run_benchmark
from specops.tools.benchmark.bench_serving import BenchServingLineError, bench_serving_argv, find_bench_serving
from specops.tools.benchmark.statistics import itl_per_token, level_result, percentile, summarize

from .worlds import ctx, host, world  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

BENCH_SERVING_LINE = {
    "backend": "sglang",
    "dataset_name": "random",
    "request_rate": "inf",
    "max_concurrency": 16,
    "duration": 41.87,
    "completed": 64,
    "total_input_tokens": 32768,
    "total_output_tokens": 16384,
    "total_output_tokens_retokenized": 16001,
    "request_throughput": 1.5286,
    "input_throughput": 782.6,
    "output_throughput": 391.3,
    "total_throughput": 1173.9,
    "mean_e2e_latency_ms": 10410.2,
    "median_e2e_latency_ms": 10398.7,
    "std_e2e_latency_ms": 120.4,
    "p99_e2e_latency_ms": 10702.3,
    "mean_ttft_ms": 312.5,
    "median_ttft_ms": 290.1,
    "std_ttft_ms": 45.0,
    "p99_ttft_ms": 420.9,
    "mean_tpot_ms": 39.6,
    "median_tpot_ms": 39.5,
    "std_tpot_ms": 0.8,
    "p99_tpot_ms": 41.7,
    "mean_itl_ms": 39.5,
    "median_itl_ms": 12.1,
    "std_itl_ms": 30.2,
    "p95_itl_ms": 95.0,
    "p99_itl_ms": 110.4,
    "concurrency": 15.92,
    "accept_length": 3.61,
    "server_info": {"version": "0.5.10"},
}


def test_bench_serving_jsonl_lines_parse_into_levels():
    lines = [
        json.dumps(BENCH_SERVING_LINE),
        json.dumps({**BENCH_SERVING_LINE, "max_concurrency": 1, "accept_length": None}),
    ]
    first, second = (parse_bench_serving_line(line, prompts_sent=64) for line in lines)
    assert first.concurrency == 16 and first.achieved_concurrency == 15.92
    assert first.output_tok_s == 391.3 and first.total_output_tokens == 16384 and first.requests_completed == 64
    assert (first.ttft.mean_ms, first.ttft.p50_ms, first.ttft.p90_ms, first.ttft.p99_ms) == (312.5, 290.1, None, 420.9)
    assert first.itl_per_token.p50_ms == 12.1 and first.e2e.p99_ms == 10702.3 and first.tpot.mean_ms == 39.6
    assert first.itl_per_token.p95_ms == 95.0 and first.ttft.p95_ms is None  # 0.5.10 reports p95 of ITL only
    # bench_serving's accept_length is the server's running average: kept apart, never the level's own.
    assert (
        first.accept_length_lifetime == 3.61 and first.accept_length is None and second.accept_length_lifetime is None
    )
    assert second.concurrency == 1 and first.requests_failed == 0
    assert first.client is None and first.inter_chunk_gap is None
    for bad in ("not json", json.dumps({"duration": 1.0})):
        with pytest.raises(BenchServingLineError):
            parse_bench_serving_line(bad)


def test_bench_serving_command_line_is_built_as_words():
    args = BenchmarkArgs(levels=[4], input_len=1024, output_len=256, rounds=2, client="bench_serving")
    argv = bench_serving_argv("sglang.bench_serving", args, 4, "/root/.cache/specops/bench/out.jsonl")
    assert argv[:3] == ["python3", "-m", "sglang.bench_serving"]
    joined = " ".join(argv)
    for flag in (
        "--max-concurrency 4",
        "--num-prompts 8",
        "--random-range-ratio 1.0",
        "--request-rate inf",
        "--random-input-len 1024",
        "--random-output-len 256",
        "--flush-cache",
    ):
        assert flag in joined
    assert "--disable-ignore-eos" not in argv


def test_bench_serving_is_found_where_sglang_ships_it_and_refused_for_other_prompts(ctx):  # noqa: F811
    # seed-ct200 has SGLang installed, so its python3 finds the release's module (test_bench_serving_sim runs it).
    module, release = find_bench_serving(ctx)
    assert release is not None and module == release.bench_serving.module
    with pytest.raises(BenchServingUnavailable, match="random token ids only"):
        run_benchmark(ctx, BenchmarkArgs(levels=[1], client="bench_serving", prompts="math"))


def test_bench_serving_figures_are_taken_as_it_reports_them():
    # In the host's seconds, as bench_serving measured them: nothing is converted (a sim host's python gives the
    # benchmark the modelled host's clock, sim/host/host_time.py).
    level = parse_bench_serving_line(json.dumps(BENCH_SERVING_LINE))
    assert level.duration_s == pytest.approx(41.87) and level.output_tok_s == pytest.approx(391.3)
    assert level.request_rate_per_s == pytest.approx(1.5286) and level.ttft.p99_ms == pytest.approx(420.9)
    assert (
        level.achieved_concurrency == 15.92
        and level.total_output_tokens == 16384
        and level.accept_length_lifetime == 3.61
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"levels": [0]},
        {"levels": []},
        {"levels": [4, 4]},
        {"levels": [5000]},
        {"levels": [1], "port": 70000},
        {"levels": [1], "requests_per_level": 10, "duration_s": 5},
        {"levels": [1], "output_len": 0},
        {"levels": [1], "model": "bad\nname"},
        {"levels": [1], "prompts": "poetry"},
        {"levels": [1], "client": "elsewhere"},
        {"levels": [1], "client": "bench_serving", "duration_s": 10},
    ],
)
def test_bad_input_is_refused_before_anything_runs(bad):
    with pytest.raises(ValidationError):
        BenchmarkArgs(**bad)


def test_percentiles_and_per_token_itl():
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert summarize([0.001, 0.003]).mean_ms == pytest.approx(2.0)
    # Chunks at 0, 10 and 16 ms carrying 1, 4 and 2 tokens: gaps 10 and 6 ms over 4 and 2 tokens.
    assert itl_per_token([0.0, 0.010, 0.016], [1, 4, 2]) == pytest.approx([0.0025] * 4 + [0.003] * 2)


def test_a_level_counts_the_servers_tokens_not_chunks():
    raw = {
        "concurrency": 2,
        "duration_s": 1.0,
        "client_cpu_s": 0.1,
        "loop_lag_ms": {"p99": 0.5},
        "cache_flushed": True,
        "server_info": {"internal_states": [{"avg_spec_accept_length": 3.2}]},
        "requests": [
            {
                "start_s": 0.0,
                "end_s": 0.5,
                "chunk_s": [0.1, 0.2, 0.3],
                "chunk_tokens": [1, 4, 4],
                "output_tokens": 9,
                "prompt_tokens": 10,
                "spec_verify_ct": 3,
                "error": None,
            },
            {
                "start_s": 0.0,
                "end_s": 1.0,
                "chunk_s": [0.2, 0.6],
                "chunk_tokens": [3, 5],
                "output_tokens": 8,
                "prompt_tokens": 10,
                "spec_verify_ct": 2,
                "error": None,
            },
            {
                "start_s": 0.5,
                "end_s": 0.6,
                "chunk_s": [],
                "chunk_tokens": None,
                "output_tokens": None,
                "prompt_tokens": None,
                "spec_verify_ct": None,
                "error": "HTTP 503: busy",
            },
        ],
    }
    level = level_result(raw)
    assert level.total_output_tokens == 17 and level.output_tok_s == 17.0
    assert level.tokens_per_chunk == pytest.approx(17 / 5)
    assert level.requests_completed == 2 and level.requests_failed == 1 and level.errors == ["HTTP 503: busy"]
    assert level.achieved_concurrency == pytest.approx(1.5)
    assert level.ttft.mean_ms == pytest.approx(150.0)
    assert level.tpot.samples == 2 and level.tpot.p50_ms == pytest.approx(((0.4 / 8) + (0.8 / 7)) / 2 * 1e3)
    assert level.itl_per_token.samples == 13 and level.inter_chunk_gap.samples == 3
    # The level's own acceptance: its requests' tokens over their verify steps, not the server's running 3.2.
    assert level.accept_length == pytest.approx(17 / 5) and level.accept_length_source == "meta_info"
    assert level.accept_verify_steps == 5 and level.accept_length_lifetime == 3.2 and level.client.limited is False
