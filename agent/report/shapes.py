"""One server across the nodes, or replicas behind SGLang's Model Gateway: the two shapes compared at each level.

A host group can serve a model that fits one node either way. At each level where both shapes were measured, the
fastest configuration of each (speculative or not) is set side by side, in total output tok/s and per GPU (the
replicas may hold fewer GPUs than one server across every node); the faster in total is the winner, and the
per-GPU winner is named too where it differs.
"""

from __future__ import annotations

from collections.abc import Sequence

from .schema import BenchmarkRow, ConfigTried, ShapeComparison, ShapeFigure


def compare_shapes(rows: Sequence[BenchmarkRow], configs: Sequence[ConfigTried]) -> list[ShapeComparison]:
    """Per level with both shapes measured (no request failed), the fastest of each; empty when only one ran."""
    by_name = {c.name: c for c in configs}
    best: dict[int, dict[bool, ShapeFigure]] = {}
    for row in rows:
        config = by_name.get(row.config)
        if config is None or row.requests_failed or row.output_tok_s <= 0:
            continue
        replicas = config.replicas > 1
        figure = ShapeFigure(
            config=row.config,
            output_tok_s=row.output_tok_s,
            gpus=config.gpus,
            tok_s_per_gpu=row.output_tok_s / config.gpus,
        )
        held = best.setdefault(row.concurrency, {}).get(replicas)
        if held is None or figure.output_tok_s > held.output_tok_s:
            best[row.concurrency][replicas] = figure
    found = []
    for level in sorted(best):
        shapes = best[level]
        if False not in shapes or True not in shapes:
            continue
        one, many = shapes[False], shapes[True]
        found.append(
            ShapeComparison(
                concurrency=level,
                one_server=one,
                replicas=many,
                faster="replicas" if many.output_tok_s > one.output_tok_s else "one_server",
                faster_per_gpu="replicas" if many.tok_s_per_gpu > one.tok_s_per_gpu else "one_server",
            )
        )
    return found
