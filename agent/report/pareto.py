"""The throughput/interactivity frontier: output tok/s per GPU against output tok/s per user, per measured level.

Serving teams compare deployments on this plane: a point per (configuration, level),
tok/s per GPU (the aggregate over the GPUs the server holds) against tok/s per user
(the aggregate over the requests actually in flight). A point is on its kind's
frontier when no other point of that kind (speculative, or autoregressive) is at
least as good on both axes and better on one. Levels where a request failed are
left out: they say nothing of what the configuration serves.
"""

from __future__ import annotations

from collections.abc import Sequence

from .schema import BenchmarkRow, ConfigTried, ParetoPoint


def pareto_points(rows: Sequence[BenchmarkRow], configs: Sequence[ConfigTried]) -> list[ParetoPoint]:
    by_name = {c.name: c for c in configs}
    points = []
    for row in rows:
        config = by_name.get(row.config)
        in_flight = row.achieved_concurrency or row.concurrency
        if config is None or row.requests_failed or row.output_tok_s <= 0 or in_flight <= 0:
            continue
        points.append(
            ParetoPoint(
                config=row.config,
                concurrency=row.concurrency,
                speculative=row.speculative,
                gpus=config.gpus,
                tok_s_per_gpu=row.output_tok_s / config.gpus,
                tok_s_per_user=row.output_tok_s / in_flight,
                on_frontier=False,
            )
        )
    return [p.model_copy(update={"on_frontier": not _dominated(p, points)}) for p in points]


def _dominated(point: ParetoPoint, points: Sequence[ParetoPoint]) -> bool:
    return any(
        other.speculative == point.speculative
        and other.tok_s_per_gpu >= point.tok_s_per_gpu
        and other.tok_s_per_user >= point.tok_s_per_user
        and (other.tok_s_per_gpu > point.tok_s_per_gpu or other.tok_s_per_user > point.tok_s_per_user)
        for other in points
    )


def frontier(points: Sequence[ParetoPoint], *, speculative: bool) -> list[ParetoPoint]:
    """One kind's frontier, from the most interactive point to the most economical."""
    mine = [p for p in points if p.on_frontier and p.speculative == speculative]
    return sorted(mine, key=lambda p: -p.tok_s_per_user)
