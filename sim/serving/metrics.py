"""`/metrics` (with --enable-metrics): SGLang's Prometheus names, as text exposition format.

Only the names the host's release registers (ReleaseFacts.metrics) are written:
`sglang:spec_verify_calls_total` exists in 0.5.23 and not before, so a client can
take per-interval acceptance from counter differences only where the release
offers them.
"""

from __future__ import annotations

from ...sglang_releases.facts import ReleaseFacts
from .engine import Engine

_TTFT_BUCKETS = (0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 60.0, 120.0)
_E2E_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0)


def _labels(model_name: str) -> str:
    escaped = model_name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{{model_name="{escaped}",engine_type="unified",tp_rank="0",pp_rank="0"}}'


def _histogram(
    lines: list[str], name: str, help_text: str, values: list[float], buckets: tuple[float, ...], labels: str
) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} histogram")
    inner = labels[1:-1]
    for bound in buckets:
        lines.append(f'{name}_bucket{{{inner},le="{bound}"}} {sum(1 for v in values if v <= bound)}')
    lines.append(f'{name}_bucket{{{inner},le="+Inf"}} {len(values)}')
    lines.append(f"{name}_sum{labels} {sum(values)}")
    lines.append(f"{name}_count{labels} {len(values)}")


def render_metrics(engine: Engine, model_name: str, release: ReleaseFacts) -> str:
    s, labels = engine.stats, _labels(model_name)
    gauges = [
        ("sglang:num_running_reqs", "The number of running requests.", len(engine.running)),
        ("sglang:num_queue_reqs", "The number of requests in the waiting queue.", engine.queue_len),
        ("sglang:num_used_tokens", "The number of used tokens.", engine.num_tokens),
        ("sglang:token_usage", "The token usage.", round(engine.token_usage, 4)),
        ("sglang:gen_throughput", "The generation throughput (token/s).", round(s.last_gen_throughput, 3)),
        ("sglang:cache_hit_rate", "The prefix cache hit rate.", 0.0),
        (
            "sglang:spec_accept_length",
            "The average acceptance length of speculative decoding.",
            round(s.last_accept_length, 4),
        ),
        (
            "sglang:spec_accept_rate",
            "The average acceptance rate of speculative decoding.",
            round(s.last_accept_rate, 4),
        ),
        (
            "sglang:max_total_num_tokens",
            "Maximum total number of tokens in the KV cache pool.",
            engine.max_total_tokens,
        ),
        ("sglang:max_running_requests", "The maximum number of running requests.", engine.max_running_requests),
    ]
    counters = [
        ("sglang:prompt_tokens_total", "Number of prefill tokens processed.", s.prompt_tokens_total),
        ("sglang:generation_tokens_total", "Number of generation tokens processed.", s.generation_tokens_total),
        ("sglang:num_requests_total", "Number of requests processed.", s.finished_total),
        ("sglang:num_aborted_requests_total", "Number of requests aborted.", s.aborted_total),
        (
            "sglang:spec_verify_calls_total",
            "Number of speculative decoding verification calls.",
            s.spec_verify_calls_total,
        ),
    ]
    known = set(release.metrics)
    lines: list[str] = []
    for name, help_text, value in gauges:
        if name in known:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", f"{name}{labels} {value}"]
    for name, help_text, value in counters:
        if name in known:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} counter", f"{name}{labels} {value}"]
    _histogram(
        lines,
        "sglang:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        s.ttft_seconds,
        _TTFT_BUCKETS,
        labels,
    )
    _histogram(
        lines,
        "sglang:e2e_request_latency_seconds",
        "Histogram of End-to-end request latency in seconds",
        s.e2e_seconds,
        _E2E_BUCKETS,
        labels,
    )
    return "\n".join(lines) + "\n"
