"""Level statistics: the steady window, its fallbacks, and a simulated host's clock converted."""

from __future__ import annotations

import pytest

from specops.tools.benchmark.statistics import batch_means_interval, level_result, steady_tok_s, steady_window


def request(start: float, *, tokens: int = 10, length: float = 1.0, per_chunk: list[int] | None = None) -> dict:
    """One request streaming `tokens` one per chunk, evenly over `length` seconds."""
    return {
        "start_s": start,
        "end_s": start + length,
        "chunk_s": [length * (i + 1) / tokens for i in range(tokens)],
        "chunk_tokens": per_chunk if per_chunk is not None else [1] * tokens,
        "output_tokens": tokens,
        "prompt_tokens": 4,
        "spec_verify_ct": None,
        "error": None,
    }


# A closed loop at C=2: the second request starts half a second late (the ramp), then each
# finished request is replaced at once; the last ones drain.
LOOP = [request(0.0), request(0.5), request(1.0), request(1.5), request(2.0)]


def test_the_steady_window_leaves_out_ramp_and_drain():
    assert steady_window(LOOP) == (0.5, 2.5)
    tok_s, window, _ = steady_tok_s(LOOP, duration=3.0)
    # From 0.6 (the second request's first token) to 2.5: two requests at 10 tok/s each.
    assert (tok_s, window) == (pytest.approx(20.0), pytest.approx(1.9))
    level = level_result({"concurrency": 2, "duration_s": 3.0, "requests": LOOP})
    assert level.output_tok_s == pytest.approx(20.0)
    assert level.output_tok_s_overall == pytest.approx(50 / 3.0)  # ramp and drain included
    assert level.steady_window_s == pytest.approx(1.9)


def test_without_trustworthy_chunk_counts_the_overall_figure_stands():
    miscounted = [request(0.0), request(0.5, per_chunk=[2] * 10)]  # says 20 tokens, the server counted 10
    assert steady_tok_s(miscounted, duration=1.5) is None
    level = level_result({"concurrency": 2, "duration_s": 1.5, "requests": miscounted})
    assert level.steady_window_s is None and level.output_tok_s == pytest.approx(20 / 1.5)


def test_times_are_taken_in_the_clock_the_client_read():
    # Nothing is converted: the client's clock is the host's (a sim host's python gives it the modelled host's).
    level = level_result({"concurrency": 2, "duration_s": 3.0, "requests": LOOP, "client_cpu_s": 1.5})
    assert level.duration_s == pytest.approx(3.0)
    assert level.client.cpu_fraction == pytest.approx(0.5)  # CPU seconds / the level's seconds, one clock's pace
    with pytest.raises(TypeError):
        level_result({"concurrency": 2, "duration_s": 3.0, "requests": LOOP}, time_scale=10)  # type: ignore[call-arg]


def _closed_loop(concurrency: int, seconds: float, *, slow_after: float | None = None) -> list[dict]:
    """`concurrency` streams of 1-token chunks every 10 ms, replaced as they end; 4x slower after `slow_after`."""
    requests = []
    for lane in range(concurrency):
        start = lane * 0.001
        while start < seconds:
            gap = 0.04 if slow_after is not None and start >= slow_after else 0.01
            requests.append(request(start, tokens=20, length=20 * gap))
            start += 20 * gap
    return requests


def test_a_steady_level_has_a_narrow_interval_around_its_figure():
    level = level_result({"concurrency": 4, "duration_s": 4.0, "requests": _closed_loop(4, 4.0)})
    low, high = level.output_tok_s_ci95
    assert low <= level.output_tok_s <= high
    assert (high - low) / 2 < 0.05 * level.output_tok_s
    assert not level.unstable


def test_a_level_whose_rate_moves_is_flagged_unstable():
    level = level_result({"concurrency": 4, "duration_s": 4.0, "requests": _closed_loop(4, 4.0, slow_after=2.0)})
    assert level.output_tok_s_ci95 is not None
    assert level.unstable


def test_batch_means_interval_is_the_t_interval_of_the_slice_rates():
    # Slices of 1 s carrying 10, 10, ..., 10 and then 30 tokens: mean 12.5, sd sqrt(50)
    chunks = [(i + 0.5, i + 0.5, 10) for i in range(7)] + [(7.5, 7.5, 30)]
    low, high = batch_means_interval(chunks, 0.0, 8.0, batches=8)
    assert (low + high) / 2 == pytest.approx(12.5)
    assert (high - low) / 2 == pytest.approx(2.365 * 50**0.5 / 8**0.5, rel=1e-3)  # t(0.975, 7) * sd / sqrt(n)


def test_a_chunks_tokens_count_over_the_gap_that_made_them_not_at_its_arrival():
    # Lockstep verify steps of 1.5 s carrying 15 tokens (10 tok/s) against 1 s slices: counted at arrival the
    # slices get 0, 15 or 15 tokens; spread over their steps every slice gets 10, and the rate is steady.
    steps = [(1.5 * i, 1.5 * (i + 1), 15) for i in range(6)]
    low, high = batch_means_interval(steps, 0.0, 8.0, batches=8)
    assert low == pytest.approx(10.0) and high == pytest.approx(10.0)
    at_arrival = batch_means_interval([(t, t, n) for _, t, n in steps], 0.0, 8.0, batches=8)
    assert at_arrival[1] - at_arrival[0] > 5.0


def test_tpot_is_reported_per_token_and_per_chunk():
    # Speculative-like: 12 tokens in 4 chunks of 3 over 0.4 s after the first chunk at 0.1 s.
    spec = {
        "start_s": 0.0,
        "end_s": 0.4,
        "chunk_s": [0.1, 0.2, 0.3, 0.4],
        "chunk_tokens": [3, 3, 3, 3],
        "output_tokens": 12,
        "prompt_tokens": 4,
        "spec_verify_ct": 4,
        "error": None,
    }
    level = level_result({"concurrency": 1, "duration_s": 0.4, "requests": [spec]})
    assert level.tpot.p50_ms == pytest.approx(300 / 11)  # per token
    assert level.tpot_per_chunk.p50_ms == pytest.approx(100.0)  # per chunk: one verify step
    assert level.itl_per_token.p50_ms == pytest.approx(100 / 3) and level.inter_chunk_gap.p50_ms == pytest.approx(100.0)


def test_requests_cut_at_the_end_of_a_timed_level_count_their_tokens_not_their_latency():
    # C=2 for 1 s: each stream 10 tok/s; both cut at 1.0 s after 10 and 5 tokens.
    first = request(0.0, tokens=20, length=2.0)
    first.update(end_s=1.0, chunk_s=first["chunk_s"][:10], chunk_tokens=[1] * 10, output_tokens=10, cut=True)
    second = request(0.5, tokens=20, length=2.0)
    second.update(end_s=1.0, chunk_s=second["chunk_s"][:5], chunk_tokens=[1] * 5, output_tokens=5, cut=True)
    level = level_result({"concurrency": 2, "duration_s": 1.0, "requests": [first, second]})
    assert level.requests_cut == 2 and level.requests_completed == 0 and level.requests_failed == 0
    assert level.total_output_tokens == 15
    assert level.e2e.samples == 0 and level.tpot.samples == 0 and level.ttft.samples == 2
    assert level.output_tok_s == pytest.approx(20.0, rel=0.15)  # the window where both decode: 0.6 .. 1.0
    # A request issued just before the end, cut before its first token: counted as cut, holding no tokens.
    early = request(0.0, tokens=20, length=2.0)
    early.update(end_s=0.05, chunk_s=[], chunk_tokens=[], output_tokens=None, cut=True)
    alone = level_result({"concurrency": 1, "duration_s": 0.05, "requests": [early]})
    assert alone.requests_cut == 1 and alone.requests_failed == 0 and alone.total_output_tokens == 0


def test_the_prefill_burst_at_a_levels_start_is_left_out_of_the_window():
    # Four requests start together; their first tokens come at 0.4 s (a long prefill), then 10 tok/s each.
    burst = []
    for _ in range(4):
        r = request(0.0, tokens=20, length=2.4)
        r["chunk_s"] = [0.4 + 0.1 * k for k in range(20)]
        burst.append(r)
    tok_s, window, _ = steady_tok_s(burst, duration=2.4)
    assert window == pytest.approx(2.0) and tok_s == pytest.approx(40.0, rel=0.06)
