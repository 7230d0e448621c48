"""A level's server load, from the samples of the server's Prometheus gauges the client took during it.

The client (stream_client.py) adds to a level `server_metrics: [{"t", "running", "queued", "token_usage"}, ...]`:
`t` when the sample was taken, the gauges sglang:num_running_reqs, sglang:num_queue_reqs and sglang:token_usage
(a share of the KV-cache pool, 0-1). A gauge the server does not export is absent or null in a sample. The
summary is a plain mean over the samples (they are taken at a steady pace, so it is the time average) and the
highest sample; gauges are levels, not durations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .models import ServerMetricsSummary

GAUGES = ("running", "queued", "token_usage")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def summarize_server_metrics(samples: Sequence[Any] | None) -> ServerMetricsSummary | None:
    """Mean and max of each gauge over the level's samples; None when the level has none."""
    if not samples:
        return None
    rows = [s for s in samples if isinstance(s, dict)]
    if not rows:
        return None
    figures: dict[str, float | None] = {}
    for gauge in GAUGES:
        values = [v for v in (_number(s.get(gauge)) for s in rows) if v is not None]
        figures[f"{gauge}_mean"] = sum(values) / len(values) if values else None
        figures[f"{gauge}_max"] = max(values) if values else None
    return ServerMetricsSummary(samples=len(rows), **figures)
