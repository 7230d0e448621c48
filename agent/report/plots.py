"""The report's plots, as PNG files: throughput vs concurrency, latency percentiles, acceptance per category, and
the throughput/interactivity frontier.

Figures are drawn with matplotlib's object API on the Agg canvas: no pyplot,
no global state, nothing that needs a display.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .naming import acceptance_rows, stat_label
from .pareto import frontier
from .schema import AcceptanceSection, BenchmarkRow, ParetoPoint

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_DPI = 110


def _configs(rows: Sequence[BenchmarkRow]) -> list[str]:
    return list(dict.fromkeys(r.config for r in rows))


def preload_in_background() -> None:
    """Import matplotlib on a thread now, while a run mostly waits on its host, so the report draws at once.

    (The import takes ~0.6 s; the import system's locks make the report's own import wait for this one.)
    """
    threading.Thread(
        target=importlib.import_module,
        args=("matplotlib.backends.backend_agg",),
        name="preload-matplotlib",
        daemon=True,
    ).start()


def _new_figure(**kwargs: Any) -> Figure:
    # matplotlib loads only when a plot is drawn: a second of start-up every `specops` command would pay.
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _save(figure: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    figure.savefig(path, dpi=_DPI, format="png")
    return path


def _log_concurrency_axis(axes: Axes, levels: list[int]) -> None:
    if len(levels) > 1 and levels[-1] / max(levels[0], 1) >= 8:
        axes.set_xscale("log", base=2)
    axes.set_xticks(levels)
    axes.set_xticklabels([str(c) for c in levels])
    axes.set_xlabel("concurrency (requests in flight)")
    axes.grid(True, alpha=0.3)


def plot_throughput(rows: Sequence[BenchmarkRow], path: Path) -> Path:
    figure = _new_figure(figsize=(8, 5), layout="constrained")
    axes = figure.add_subplot()
    levels = sorted({r.concurrency for r in rows})
    for config in _configs(rows):
        mine = sorted((r for r in rows if r.config == config), key=lambda r: r.concurrency)
        speculative = mine[0].speculative
        axes.plot(
            [r.concurrency for r in mine],
            [r.output_tok_s for r in mine],
            marker="o",
            linestyle="--" if speculative else "-",
            label=config + (" (speculative)" if speculative else ""),
        )
        spread = [(r.concurrency, r.output_tok_s_ci95) for r in mine if r.output_tok_s_ci95 is not None]
        if spread:
            axes.vlines(
                [c for c, _ in spread],
                [ci[0] for _, ci in spread],
                [ci[1] for _, ci in spread],
                alpha=0.5,
            )
    if levels:
        _log_concurrency_axis(axes, levels)
    axes.set_ylabel("output tokens / s (aggregate)")
    axes.set_title("Throughput by concurrency (dashed: speculative)")
    if rows:
        axes.legend(fontsize="small")
    return _save(figure, path)


def has_latency(rows: Sequence[BenchmarkRow]) -> bool:
    return any(r.ttft_ms_p50 is not None or r.itl_ms_p50 is not None for r in rows)


def plot_latency(rows: Sequence[BenchmarkRow], path: Path) -> Path:
    figure = _new_figure(figsize=(11, 4.5), layout="constrained")
    levels = sorted({r.concurrency for r in rows})
    panels = (("TTFT", "ttft_ms"), ("ITL per token", "itl_ms"))
    for i, (title, prefix) in enumerate(panels):
        axes = figure.add_subplot(1, 2, i + 1)
        for n, config in enumerate(_configs(rows)):
            mine = sorted((r for r in rows if r.config == config), key=lambda r: r.concurrency)
            color = f"C{n % 10}"
            for percentile, style in (("p50", "-"), ("p90", "--"), ("p99", ":")):
                points = [(r.concurrency, getattr(r, f"{prefix}_{percentile}")) for r in mine]
                points = [(c, v) for c, v in points if v is not None]
                if points:
                    axes.plot(
                        *zip(*points, strict=False),
                        linestyle=style,
                        marker="." if percentile == "p50" else None,
                        color=color,
                        label=f"{config} {percentile}" if percentile == "p50" else None,
                    )
        _log_concurrency_axis(axes, levels)
        axes.set_yscale("log")
        axes.set_ylabel("ms")
        axes.set_title(f"{title}: p50 solid, p90 dashed, p99 dotted")
        if i == 0:
            axes.legend(fontsize="x-small")
    return _save(figure, path)


def plot_acceptance(acceptance: AcceptanceSection, path: Path) -> Path:
    figure = _new_figure(figsize=(8, 4.5), layout="constrained")
    axes = figure.add_subplot()
    stats = acceptance_rows(acceptance)
    width = 0.38
    for offset, (label, value, interval) in enumerate(
        (
            ("request mean", "request_mean", "request_mean_ci95"),
            ("token weighted", "token_weighted", "token_weighted_ci95"),
        )
    ):
        xs = [i + (offset - 0.5) * width for i in range(len(stats))]
        heights = [getattr(s, value) for s in stats]
        errors = [
            [h - (getattr(s, interval) or (h, h))[0] for s, h in zip(stats, heights, strict=False)],
            [(getattr(s, interval) or (h, h))[1] - h for s, h in zip(stats, heights, strict=False)],
        ]
        axes.bar(xs, heights, width, yerr=errors, capsize=3, label=label)
    axes.set_xticks(range(len(stats)))
    axes.set_xticklabels([f"{stat_label(s)}\nn={s.prompts}" for s in stats], fontsize="small")
    axes.set_ylabel("acceptance length (tokens per verify step)")
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set_title(f"Acceptance on {acceptance.config} (95% intervals)")
    axes.legend(fontsize="small")
    return _save(figure, path)


def plot_pareto(points: Sequence[ParetoPoint], path: Path) -> Path:
    """Every measured level as a point (tok/s per user, tok/s per GPU); each kind's frontier as a line."""
    figure = _new_figure(figsize=(8, 5), layout="constrained")
    axes = figure.add_subplot()
    for speculative, marker, style, label in ((False, "o", "-", "autoregressive"), (True, "^", "--", "speculative")):
        mine = [p for p in points if p.speculative == speculative]
        if not mine:
            continue
        axes.scatter([p.tok_s_per_user for p in mine], [p.tok_s_per_gpu for p in mine], marker=marker, alpha=0.35)
        edge = frontier(points, speculative=speculative)
        axes.plot(
            [p.tok_s_per_user for p in edge],
            [p.tok_s_per_gpu for p in edge],
            marker=marker,
            linestyle=style,
            label=f"{label} frontier",
        )
        for p in edge:
            axes.annotate(f"{p.config} C={p.concurrency}", (p.tok_s_per_user, p.tok_s_per_gpu), fontsize="x-small")
    axes.set_xlabel("output tokens / s per user (interactivity)")
    axes.set_ylabel("output tokens / s per GPU (throughput)")
    axes.set_title("Throughput per GPU against speed per user (dashed: speculative)")
    axes.grid(True, alpha=0.3)
    if points:
        axes.legend(fontsize="small")
    return _save(figure, path)
