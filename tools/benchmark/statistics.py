"""From raw request timings (stream_client.py's output) to one LevelResult per concurrency.

Definitions (the ones SGLang's bench_serving and vLLM use, named so a reader cannot mix them up):
- output tok/s at the level = tokens streamed while the level's concurrency was held (the steady
  window: from when the requests in flight first reach their peak, and have each had their first
  token, to when they last leave it), divided by that window; the ramp-up, the burst of prefills
  that opens a level, and the drain, where fewer requests decode, are left out;
- requests `cut` by the client at the end of a timed level (stream_client.py) are neither
  completed nor failed: their streamed tokens and chunks count, their latencies (e2e, TPOT) do not;
- overall output tok/s = sum of the server-counted output tokens / (first dispatch .. last response),
  bench_serving's figure, ramp and drain included;
- achieved concurrency = sum of request latencies / that duration (measured, not the requested level);
- TTFT = first streamed chunk carrying output - request start;
- TPOT = (e2e - TTFT) / (output tokens - 1), per request (per token);
- TPOT per chunk = (e2e - TTFT) / (chunks - 1), per request: under speculative decoding a
  chunk is one verify step, so this is the step time a request saw;
- ITL per token: each gap between chunks divided evenly over the tokens the later chunk carries,
  counted once per token (SGLang's native backend does the same);
- inter-chunk gap: the same gaps, counted once per chunk.
- accept length of the level = sum(completion_tokens) / sum(spec_verify_ct) over the level's completed
  requests whose meta_info has spec_verify_ct (native API; SGLang sets it only after a verify step)
  when at least as many finished as were cut (else those few are the fastest: biased high),
  else the level's difference of the counters sglang:generation_tokens_total / spec_verify_calls_total
  (read just before and after its measured requests); never the server's lifetime average, which
  mixes earlier work in (it is kept apart as accept_length_lifetime).
- goodput (goodput.py's targets): a request is good when it completed with
  TTFT and TPOT within the targets; goodput tok/s = the level's output tok/s x the share of the
  completed requests' tokens in the same window (steady, else the whole level) that good requests
  streamed: good tokens / window exactly when nothing was cut, and cut requests, which cannot be
  judged, taken at the completed ones' share; good fraction = good / (completed + failed).
Percentiles interpolate linearly between order statistics (numpy's default).

The throughput's 95% interval is a batch-means interval: the steady window is cut into
STEADY_BATCHES equal slices, each slice's tok/s is one sample, and a Student-t interval
is taken over them (slices long enough to be nearly independent; one sweep gives it, no
repeat needed). A chunk's tokens are spread over the gap since its request's previous
chunk, the time that made them: counted at arrival, a batch decoding in lockstep
(speculative verify steps of 150 ms at C=32 against slices of 400 ms) would give each
slice two or three whole steps, a 2:3 spread of no real instability. A level whose
interval is wider than UNSTABLE_HALF_WIDTH of its figure is flagged unstable: the
figure moved during the window (a server warming up or stalling, a client falling
behind) and should not be compared to a few per cent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..acceptance_intervals import request_mean_interval
from .goodput import DEFAULT_GOODPUT_TARGETS, GoodputTargets, meets, request_tpot_s
from .models import ClientLoad, LatencySummary, LevelRequests, LevelResult
from .server_metrics import summarize_server_metrics

MAX_ERRORS_KEPT = 5
# A steady window shorter than this share of the level is too thin to stand for it.
MIN_STEADY_SHARE = 0.2
# A client that spends most of a core, or whose timers fire this late, distorts sub-ms gaps.
CLIENT_CPU_LIMIT = 0.85
CLIENT_LAG_LIMIT_MS = 5.0
STEADY_BATCHES = 8
UNSTABLE_HALF_WIDTH = 0.10
REQUEST_LOG_DIGITS = 4  # per-request times kept to 0.1 ms: finer than any latency compared, and short


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """q in [0, 1]; linear interpolation between the closest ranks (numpy's default method)."""
    if not sorted_values:
        raise ValueError("no values")
    import numpy as np  # here, not at the top: this module loads at CLI start-up, where numpy would add about 0.1 s

    return float(np.quantile(sorted_values, q))


def summarize(values_s: Sequence[float]) -> LatencySummary:
    """Seconds in, milliseconds out."""
    if not values_s:
        return LatencySummary(samples=0, mean_ms=None, p50_ms=None, p90_ms=None, p95_ms=None, p99_ms=None)
    ordered = sorted(values_s)
    return LatencySummary(
        samples=len(ordered),
        mean_ms=1e3 * sum(ordered) / len(ordered),
        p50_ms=1e3 * percentile(ordered, 0.50),
        p90_ms=1e3 * percentile(ordered, 0.90),
        p95_ms=1e3 * percentile(ordered, 0.95),
        p99_ms=1e3 * percentile(ordered, 0.99),
    )


def chunk_gaps(chunk_s: Sequence[float]) -> list[float]:
    return [b - a for a, b in zip(chunk_s, chunk_s[1:], strict=False)]


def itl_per_token(chunk_s: Sequence[float], chunk_tokens: Sequence[int]) -> list[float]:
    """One value per token after the first chunk: the chunk's gap / its token count."""
    out: list[float] = []
    for gap, tokens in zip(chunk_gaps(chunk_s), chunk_tokens[1:], strict=False):
        if tokens > 0:
            out.extend([gap / tokens] * tokens)
    return out


def steady_window(requests: Sequence[dict[str, Any]]) -> tuple[float, float] | None:
    """(start, end) of the span in which the most requests were in flight at once, or None."""
    events = sorted(
        [(r["start_s"], 1) for r in requests] + [(r["end_s"], -1) for r in requests], key=lambda e: (e[0], e[1])
    )
    inflight, peak, first, last_end = 0, 0, None, None
    for i, (t, step) in enumerate(events):
        inflight += step
        if inflight > peak:
            peak, first, last_end = inflight, t, None
        if inflight == peak and i + 1 < len(events):
            last_end = events[i + 1][0]
    if first is None or last_end is None or last_end <= first:
        return None
    return first, last_end


def _token_spans(requests: Sequence[dict[str, Any]]) -> list[tuple[float, float, int]]:
    """(absolute start, arrival, tokens) of every streamed chunk: made since the request's previous chunk (its
    first since the request was sent)."""
    spans = []
    for r in requests:
        made_from = r["start_s"]
        for offset, n in zip(r["chunk_s"], r["chunk_tokens"], strict=False):
            arrival = r["start_s"] + offset
            spans.append((made_from, arrival, n))
            made_from = arrival
    return spans


def batch_means_interval(
    spans: Sequence[tuple[float, float, int]], start: float, end: float, batches: int = STEADY_BATCHES
) -> tuple[float, float] | None:
    """95% t-interval (acceptance_intervals.request_mean_interval) of tok/s from `batches` equal slices of
    (start, end], each span's tokens spread evenly over it (a span of no length: all at its end); None for an
    empty window or fewer than two slices."""
    width = (end - start) / batches
    if width <= 0:
        return None
    counts = [0.0] * batches
    for made_from, arrival, n in spans:
        if arrival <= made_from:
            if start < arrival <= end:
                counts[min(int((arrival - start) / width), batches - 1)] += n
            continue
        lo, hi = max(made_from, start), min(arrival, end)
        if hi <= lo:
            continue
        for i in range(int((lo - start) / width), min(int((hi - start) / width), batches - 1) + 1):
            overlap = min(hi, start + (i + 1) * width) - max(lo, start + i * width)
            if overlap > 0:
                counts[i] += n * overlap / (arrival - made_from)
    _, interval = request_mean_interval([c / width for c in counts])
    return interval


def _first_tokens_in(requests: Sequence[dict[str, Any]], start: float, end: float) -> float:
    """When the requests in flight at `start` have all had their first token (bounded by `end`)."""
    firsts = [
        r["start_s"] + r["chunk_s"][0]
        for r in requests
        if r["chunk_s"] and r["start_s"] <= start < (r["end_s"] if r["end_s"] is not None else end)
    ]
    first_of_all: float = min(max([start, *firsts]), end)
    return first_of_all


def steady_bounds(requests: Sequence[dict[str, Any]], duration: float) -> tuple[float, float] | None:
    """(start, end) of the window output tok/s is taken over: the steady window from when its requests all have
    their first token; None when per-chunk counts are unknown or the window is too thin."""
    # Per-chunk counts must add up to the server's own count, or they cannot place tokens in time.
    if not requests or any(r["chunk_tokens"] is None or sum(r["chunk_tokens"]) != r["output_tokens"] for r in requests):
        return None
    window = steady_window(requests)
    if window is None:
        return None
    start, end = _first_tokens_in(requests, *window), window[1]
    if end - start < MIN_STEADY_SHARE * duration:
        return None
    return start, end


def steady_tok_s(
    requests: Sequence[dict[str, Any]], duration: float
) -> tuple[float, float, tuple[float, float] | None] | None:
    """(tok/s, window seconds, 95% interval) over the steady window, from per-chunk token counts; None when
    unknown or too thin."""
    bounds = steady_bounds(requests, duration)
    return window_tok_s(requests, bounds) if bounds is not None else None


def window_tok_s(
    requests: Sequence[dict[str, Any]], bounds: tuple[float, float]
) -> tuple[float, float, tuple[float, float] | None]:
    """(tok/s, window seconds, 95% interval) over `bounds` (steady_bounds)."""
    start, end = bounds
    spans = _token_spans(requests)
    tok_s = sum(n for _, arrival, n in spans if start < arrival <= end) / (end - start)
    interval = batch_means_interval(spans, start, end)
    if interval is not None:
        # The spread slices give the spread; the figure is what arrived in the window, so centre on it.
        half = (interval[1] - interval[0]) / 2
        interval = (max(0.0, tok_s - half), tok_s + half)
    return tok_s, end - start, interval


def tokens_in(request: dict[str, Any], bounds: tuple[float, float] | None) -> int:
    """The tokens `request` streamed inside `bounds` (start, end]; all it streamed when bounds is None."""
    if bounds is None:
        return int(request["output_tokens"] or 0)
    start, end = bounds
    arrivals = (request["start_s"] + t for t in request["chunk_s"])
    return sum(n for t, n in zip(arrivals, request["chunk_tokens"] or [], strict=False) if start < t <= end)


def is_good(request: dict[str, Any], targets: GoodputTargets) -> bool:
    """A completed request's TTFT and TPOT against the targets (in the seconds the client measured)."""
    if not request["chunk_s"]:
        return False
    ttft = request["chunk_s"][0]
    e2e = request["end_s"] - request["start_s"]
    return meets(ttft, request_tpot_s(ttft, e2e, int(request["output_tokens"])), targets)


def level_goodput(
    ok: Sequence[dict[str, Any]],
    good: Sequence[bool],
    tok_s: float,
    bounds: tuple[float, float] | None,
) -> float | None:
    """output tok/s x the share of the completed requests' tokens in the window (bounds; the whole level when None)
    that good ones streamed; None with no completed request. Without cut requests: good tokens in the window / the
    window exactly, since then tok/s is the completed requests' tokens over it."""
    if not ok:
        return None
    in_window = [tokens_in(r, bounds) for r in ok]
    if bounds is not None and not sum(in_window):  # the completed requests streamed nothing in the window
        in_window = [tokens_in(r, None) for r in ok]
    judged = sum(in_window)
    if judged <= 0:
        return None
    return tok_s * sum(n for n, g in zip(in_window, good, strict=True) if g) / judged


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, REQUEST_LOG_DIGITS)


def request_log(requests: Sequence[dict[str, Any]], letters: Sequence[str]) -> LevelRequests:
    """The level's requests as LevelRequests columns (`letters`: each one's status letter)."""
    verify = [r.get("spec_verify_ct") for r in requests]
    scheduled = [r.get("scheduled_s") for r in requests]
    return LevelRequests(
        start_s=[round(r["start_s"], REQUEST_LOG_DIGITS) for r in requests],
        scheduled_s=[_rounded(s) for s in scheduled] if any(s is not None for s in scheduled) else None,
        ttft_s=[_rounded(r["chunk_s"][0]) if r["chunk_s"] else None for r in requests],
        e2e_s=[_rounded(r["end_s"] - r["start_s"]) if r["end_s"] is not None else None for r in requests],
        output_tokens=[r["output_tokens"] for r in requests],
        status="".join(letters),
        spec_verify_ct=[int(v) if v is not None else None for v in verify]
        if any(v is not None for v in verify)
        else None,
    )


def level_acceptance(
    ok: Sequence[dict[str, Any]], counters: dict[str, Any] | None, cut: int = 0
) -> tuple[float, str, int] | None:
    """(accept length, source, verify steps) of one level from counts over that level only, or None.

    Per-request counts come only with a finished request, and when a timed level cuts most of its requests
    the few that finished are the fastest, those that accepted most: a biased sample. Then only the
    counters (every token the server made) give the level's figure, or none is given.
    """
    spec = [r for r in ok if r.get("spec_verify_ct") and r["output_tokens"] is not None]
    if spec and len(ok) >= cut:
        steps = sum(int(r["spec_verify_ct"]) for r in spec)
        return sum(int(r["output_tokens"]) for r in spec) / steps, "meta_info", steps
    before, after = (counters or {}).get("before"), (counters or {}).get("after")
    if before and after:
        tokens = after["sglang:generation_tokens_total"] - before["sglang:generation_tokens_total"]
        steps = after["sglang:spec_verify_calls_total"] - before["sglang:spec_verify_calls_total"]
        if steps > 0 and tokens > 0:
            return tokens / steps, "metrics_counters", int(steps)
    return None


def level_result(raw: dict[str, Any], *, targets: GoodputTargets = DEFAULT_GOODPUT_TARGETS) -> LevelResult:
    """Aggregate one level of stream_client output, in the seconds of the clock the client read.

    `targets`: the latency targets a request must meet to count in the goodput (goodput.py).
    """
    # One pass: completed (ok), cut by the client at the level's end (cut), or failed; each request's status
    # letter (LevelRequests.status) is set once the completed ones are judged.
    ok: list[dict[str, Any]] = []
    cut: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []  # as classified (a cut one that streamed nothing holds 0 tokens)
    letters: list[str] = []
    for r in raw["requests"]:
        if r["error"] is not None:
            failed.append(r)
            letter = "f"
        elif r.get("cut"):
            # A cut request that had streamed nothing holds no tokens: count it as 0, not unknown.
            if not r["chunk_s"]:
                r = {**r, "output_tokens": r["output_tokens"] or 0, "chunk_tokens": r["chunk_tokens"] or []}
            cut.append(r)
            letter = "c"
        elif r["output_tokens"] is not None:
            ok.append(r)
            letter = "g" if is_good(r, targets) else "o"
        else:
            failed.append(r)
            letter = "f"
        requests.append(r)
        letters.append(letter)
    good = [letter == "g" for letter in letters if letter in "go"]
    streamed = ok + [r for r in cut if r["chunk_s"]]
    errors = [r["error"] or "no token count from the server (no usage in the stream)" for r in failed]
    duration = float(raw["duration_s"])
    ttft, tpot, tpot_chunk, e2e, itl, gaps = [], [], [], [], [], []
    per_chunk_known = True
    chunks = 0
    for r in ok:
        first, latency = r["chunk_s"][0], r["end_s"] - r["start_s"]
        e2e.append(latency)
        if r["output_tokens"] > 1:
            tpot.append((latency - first) / (r["output_tokens"] - 1))
        if len(r["chunk_s"]) > 1:
            tpot_chunk.append((latency - first) / (len(r["chunk_s"]) - 1))
    for r in streamed:
        ttft.append(r["chunk_s"][0])
        gaps.extend(chunk_gaps(r["chunk_s"]))
        chunks += len(r["chunk_s"])
        if r["chunk_tokens"] is None:
            per_chunk_known = False
        else:
            itl.extend(itl_per_token(r["chunk_s"], r["chunk_tokens"]))
    output_tokens = sum(r["output_tokens"] or 0 for r in streamed)
    overall_tok_s = output_tokens / duration if duration > 0 else 0.0
    # Open loop holds no concurrency: its figure is the whole level's (tokens / first dispatch .. last response).
    open_loop = (raw.get("rate") or {}).get("per_s")
    bounds = steady_bounds(ok + cut, duration) if not failed and open_loop is None else None
    steady = window_tok_s(ok + cut, bounds) if bounds is not None else None
    in_flight_s = sum(r["end_s"] - r["start_s"] for r in ok + cut if r["end_s"] is not None)
    cpu_fraction = float(raw.get("client_cpu_s", 0.0)) / duration if duration > 0 else 0.0
    # With worker processes client_cpu_s sums them all; the busiest one is the one that falls behind first.
    busiest = float(raw.get("client_cpu_busiest_s", raw.get("client_cpu_s", 0.0))) / duration if duration > 0 else 0.0
    lag_p99 = float(raw.get("loop_lag_ms", {}).get("p99", 0.0))
    states = (raw.get("server_info") or {}).get("internal_states") or [{}]
    lifetime = states[0].get("avg_spec_accept_length") if states and isinstance(states[0], dict) else None
    acceptance = level_acceptance(ok, raw.get("counters"), cut=len(cut))
    interval = steady[2] if steady else None
    figure = steady[0] if steady else overall_tok_s
    judged = len(ok) + len(failed)
    return LevelResult(
        concurrency=int(raw["concurrency"]),
        arrival_rate_per_s=float(open_loop) if open_loop is not None else None,
        achieved_concurrency=in_flight_s / duration if duration > 0 else 0.0,
        requests_completed=len(ok),
        requests_cut=len(cut),
        requests_failed=len(failed),
        errors=errors[:MAX_ERRORS_KEPT],
        duration_s=duration,
        total_input_tokens=sum(r["prompt_tokens"] or 0 for r in streamed),
        total_output_tokens=output_tokens,
        output_tok_s=figure,
        output_tok_s_ci95=interval,
        unstable=interval is not None and figure > 0 and (interval[1] - interval[0]) / 2 > UNSTABLE_HALF_WIDTH * figure,
        output_tok_s_overall=overall_tok_s,
        steady_window_s=steady[1] if steady else None,
        request_rate_per_s=len(ok) / duration if duration > 0 else 0.0,
        ttft=summarize(ttft),
        tpot=summarize(tpot),
        tpot_per_chunk=summarize(tpot_chunk),
        itl_per_token=summarize(itl) if per_chunk_known and streamed else None,
        inter_chunk_gap=summarize(gaps) if streamed else None,
        e2e=summarize(e2e),
        tokens_per_chunk=output_tokens / chunks if chunks else None,
        accept_length=acceptance[0] if acceptance else None,
        accept_length_source=acceptance[1] if acceptance else None,
        accept_verify_steps=acceptance[2] if acceptance else None,
        accept_length_lifetime=float(lifetime) if lifetime is not None else None,
        cache_flushed=raw.get("cache_flushed"),
        client=ClientLoad(
            cpu_fraction=round(cpu_fraction, 4),
            loop_lag_p99_ms=round(lag_p99, 3),
            limited=busiest > CLIENT_CPU_LIMIT or lag_p99 > CLIENT_LAG_LIMIT_MS,
            edge_aligned_chunks=int(raw.get("edge_aligned_chunks", 0)),
        ),
        goodput_tok_s=level_goodput(ok, good, figure, bounds),
        good_requests=sum(good),
        good_fraction=sum(good) / judged if judged else None,
        server_metrics=summarize_server_metrics(raw.get("server_metrics")),
        requests=request_log(requests, letters),
    )
