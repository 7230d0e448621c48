"""Goodput per level, the server's load per level and every request kept: computed from hand-made raw levels."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from specops.tools.benchmark import BenchmarkArgs
from specops.tools.benchmark.for_model import benchmark_view
from specops.tools.benchmark.goodput import DEFAULT_GOODPUT_TARGETS, GoodputTargets, meets
from specops.tools.benchmark.models import BenchmarkResult, LevelRequests
from specops.tools.benchmark.server_metrics import summarize_server_metrics
from specops.tools.benchmark.statistics import level_result


def timed(start: float, *, ttft: float, tpot: float, tokens: int, cut: bool = False, error: str | None = None) -> dict:
    """A request streaming one token a chunk: the first at `ttft`, then one every `tpot` seconds."""
    chunks = [ttft + k * tpot for k in range(tokens)]
    return {
        "start_s": start,
        "end_s": start + chunks[-1],
        "chunk_s": chunks,
        "chunk_tokens": [1] * tokens,
        "output_tokens": None if error else tokens,
        "prompt_tokens": 8,
        "spec_verify_ct": None,
        "error": error,
        "cut": cut,
    }


def test_the_default_targets_are_the_stated_ones():
    assert (DEFAULT_GOODPUT_TARGETS.ttft_ms, DEFAULT_GOODPUT_TARGETS.tpot_ms) == (2000.0, 50.0)
    assert DEFAULT_GOODPUT_TARGETS.words() == "TTFT <= 2000 ms and TPOT <= 50 ms"
    # A latency at a target meets it, even as a float a hair above it.
    assert meets(2.0, 0.5 / 10, DEFAULT_GOODPUT_TARGETS)
    assert not meets(2.0001, 0.01, DEFAULT_GOODPUT_TARGETS) and not meets(0.1, 0.0501, DEFAULT_GOODPUT_TARGETS)


# At the thresholds, over them, a cut one, a failed one and a one-token one.
MIXED = [
    timed(0.0, ttft=0.5, tpot=0.05, tokens=11),  # good: TPOT at the target
    timed(0.1, ttft=2.0, tpot=0.01, tokens=11),  # good: TTFT at the target
    timed(0.2, ttft=2.0001, tpot=0.01, tokens=11),  # TTFT over
    timed(0.3, ttft=0.5, tpot=0.0501, tokens=11),  # TPOT over
    timed(0.4, ttft=0.1, tpot=0.01, tokens=5, cut=True),  # cut: not judged
    timed(0.5, ttft=0.1, tpot=0.01, tokens=3, error="HTTP 500"),  # failed: not good
    timed(0.6, ttft=0.1, tpot=0.0, tokens=1),  # one token: no TPOT to miss
]


def test_good_requests_meet_both_targets_and_cut_and_failed_ones_are_not_good():
    level = level_result({"concurrency": 7, "duration_s": 4.0, "requests": MIXED})
    assert (level.requests_completed, level.requests_cut, level.requests_failed) == (5, 1, 1)
    assert level.good_requests == 3
    assert level.good_fraction == pytest.approx(3 / 6)  # good / (completed + failed): the cut one is not judged
    # A failure: no steady window, so tok/s is the overall figure (streamed tokens / duration) and goodput is its
    # share that good requests streamed, of the completed ones' tokens.
    assert level.steady_window_s is None
    assert level.output_tok_s == pytest.approx((4 * 11 + 5 + 1) / 4.0)
    assert level.goodput_tok_s == pytest.approx(level.output_tok_s * (11 + 11 + 1) / (4 * 11 + 1))


def test_every_request_is_kept_with_its_status_in_order():
    log = level_result({"concurrency": 7, "duration_s": 4.0, "requests": MIXED}).requests
    assert isinstance(log, LevelRequests)
    assert log.status == "ggoocfg"
    assert log.start_s == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert log.ttft_s == [0.5, 2.0, 2.0001, 0.5, 0.1, 0.1, 0.1]
    assert log.e2e_s[0] == pytest.approx(1.0) and log.e2e_s[6] == pytest.approx(0.1)
    assert log.output_tokens == [11, 11, 11, 11, 5, None, 1]
    assert log.spec_verify_ct is None and log.scheduled_s is None


def _loop(slow_first: bool = False) -> list[dict]:
    """A closed loop at C=2 (test_benchmark_statistics' LOOP): ten tokens a second each, one every 0.1 s; the
    third request's first chunk carries two tokens at 0.2 s (`slow_first`): its TTFT is twice the others'."""
    requests = [timed(start, ttft=0.1, tpot=0.1, tokens=10) for start in (0.0, 0.5, 1.0, 1.5, 2.0)]
    if slow_first:
        third = requests[2]
        requests[2] = {**third, "chunk_s": third["chunk_s"][1:], "chunk_tokens": [2] + [1] * 8}
    return requests


def test_without_cut_requests_goodput_is_good_tokens_in_the_steady_window_over_it():
    targets = GoodputTargets(ttft_ms=150, tpot_ms=100)  # TPOT 100 ms: at the target
    every = level_result({"concurrency": 2, "duration_s": 3.0, "requests": _loop()}, targets=targets)
    assert every.steady_window_s == pytest.approx(1.9) and every.output_tok_s == pytest.approx(20.0)
    assert every.goodput_tok_s == pytest.approx(every.output_tok_s) and every.good_fraction == 1.0
    # The third request's TTFT (200 ms) misses: its 10 tokens, all inside the window (0.6, 2.5], leave the 38.
    mixed = level_result({"concurrency": 2, "duration_s": 3.0, "requests": _loop(slow_first=True)}, targets=targets)
    assert mixed.output_tok_s == pytest.approx(20.0) and mixed.requests.status == "ggogg"
    assert mixed.goodput_tok_s == pytest.approx(28 / 1.9)
    none = level_result({"concurrency": 2, "duration_s": 3.0, "requests": _loop()}, targets=GoodputTargets(tpot_ms=99))
    assert none.goodput_tok_s == 0.0 and none.good_requests == 0


def test_cut_requests_take_the_completed_ones_share_of_the_window():
    requests = _loop(slow_first=True)
    # The last request cut at 2.5 s: its tokens so far count in tok/s, and it is not judged.
    last = requests[4]
    requests[4] = {**last, "cut": True, "end_s": 2.5, "chunk_s": last["chunk_s"][:5], "chunk_tokens": [1] * 5}
    requests[4]["output_tokens"] = 5
    targets = GoodputTargets(ttft_ms=150, tpot_ms=100)
    level = level_result({"concurrency": 2, "duration_s": 3.0, "requests": requests}, targets=targets)
    assert level.requests_cut == 1 and level.requests.status == "ggogc"
    assert (level.good_requests, level.good_fraction) == (3, pytest.approx(3 / 4))
    # Completed requests streamed 4 + 9 + 10 + 10 tokens in the window; good ones 4 + 9 + 10 of them.
    assert level.goodput_tok_s == pytest.approx(level.output_tok_s * 23 / 33)


def test_the_targets_apply_to_the_latencies_as_the_client_measured_them():
    # 2.5 s to the first token (the host's seconds, as the client read them): over 2000 ms.
    raw = {"concurrency": 1, "duration_s": 10.0, "requests": [timed(0.0, ttft=2.5, tpot=0.04, tokens=11)]}
    late = level_result(raw)
    assert late.good_requests == 0 and late.goodput_tok_s == 0.0 and late.requests.status == "o"
    assert late.requests.ttft_s == [2.5] and late.requests.e2e_s == [pytest.approx(2.9)]
    # TPOT 40 ms: within 50 ms, so a TTFT target of 3 s makes it good.
    loose = level_result(raw, targets=GoodputTargets(ttft_ms=3000))
    assert loose.good_requests == 1 and loose.goodput_tok_s == pytest.approx(loose.output_tok_s)


def test_open_loop_scheduled_times_are_kept_as_measured():
    request = {**timed(0.3, ttft=0.1, tpot=0.01, tokens=3), "scheduled_s": 0.25}
    log = level_result({"concurrency": 1, "duration_s": 1.0, "requests": [request]}).requests
    assert log.scheduled_s == [0.25] and log.start_s == [0.3]


def test_the_servers_load_is_summarised_from_its_samples():
    samples = [
        {"t": 0.0, "running": 4, "queued": 0, "token_usage": 0.10},
        {"t": 0.5, "running": 8, "queued": 2, "token_usage": 0.30},
        {"t": 1.0, "running": 6, "queued": None, "token_usage": 0.25},
        {"t": 1.5, "running": 6, "queued": 4},  # a gauge missing from a sample
    ]
    summary = summarize_server_metrics(samples)
    assert summary.samples == 4
    assert (summary.running_mean, summary.running_max) == (6.0, 8.0)
    assert (summary.queued_mean, summary.queued_max) == (2.0, 4.0)
    assert summary.token_usage_mean == pytest.approx(0.65 / 3) and summary.token_usage_max == 0.30
    assert summarize_server_metrics(None) is None and summarize_server_metrics([]) is None
    no_usage = summarize_server_metrics([{"t": 0.0, "running": 1, "queued": 0}])
    assert no_usage.token_usage_mean is None and no_usage.token_usage_max is None
    raw = {"concurrency": 1, "duration_s": 1.0, "requests": [timed(0.0, ttft=0.1, tpot=0.01, tokens=3)]}
    assert level_result(raw).server_metrics is None
    assert level_result({**raw, "server_metrics": samples}).server_metrics == summary


def test_the_models_view_leaves_the_requests_out():
    level = level_result({"concurrency": 7, "duration_s": 4.0, "requests": MIXED})
    result = BenchmarkResult(
        host="sim:x",
        port=30000,
        client="host",
        api="sglang",
        model=None,
        server_version=None,
        speculative_algorithm=None,
        prompts="random",
        input_len=8,
        output_len=11,
        ignore_eos=True,
        warmup_requests=0,
        levels=[level],
        best_output_tok_s=level.output_tok_s,
        best_at_concurrency=7,
        method="",
        warnings=[],
    )
    assert result.goodput_targets == DEFAULT_GOODPUT_TARGETS
    assert "ggoocfg" in result.model_dump_json()  # the transcript keeps them
    assert "ggoocfg" not in json.dumps(benchmark_view(result))


def test_a_level_request_log_has_one_entry_per_request():
    with pytest.raises(ValueError, match="one entry per request"):
        LevelRequests(start_s=[0.0, 1.0], ttft_s=[0.1], e2e_s=[1.0, 1.0], output_tokens=[3, 3], status="gg")
    with pytest.raises(ValueError, match="status letters"):
        LevelRequests(start_s=[0.0], ttft_s=[0.1], e2e_s=[1.0], output_tokens=[3], status="x")


def test_open_loop_and_goodput_arguments_are_checked_before_anything_runs():
    args = BenchmarkArgs(levels=[64], rates=[0.5, 2.0], duration_s=30, ttft_target_ms=500)
    assert args.goodput_targets.ttft_ms == 500 and args.goodput_targets.tpot_ms == DEFAULT_GOODPUT_TARGETS.tpot_ms
    for bad in (
        {"levels": [64], "rates": [1.0]},  # arrivals go on until a count or a duration
        {"levels": [32, 64], "rates": [1.0], "duration_s": 10},  # one cap, not levels
        {"levels": [64], "rates": [0.0], "duration_s": 10},
        {"levels": [64], "rates": [1.0], "requests_per_level": 8, "client": "bench_serving"},
        {"levels": [1], "tpot_target_ms": 0},
    ):
        with pytest.raises(ValidationError):
            BenchmarkArgs(**bad)
