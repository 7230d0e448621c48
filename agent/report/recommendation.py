"""Which configuration to serve for which load, derived from the measured table (never from the policy's words).

Each measured level has a fastest configuration; neighbouring levels with the
same fastest configuration form a load band. Beside the bands, for a host that
can run only one server: the configuration measured at every level whose worst
ratio to that level's best is the highest (the least regret over the range).
"""

from __future__ import annotations

from collections.abc import Sequence

from .schema import BenchmarkRow, LoadBand, Recommendation


def _band(levels: list[int], config: str, rows: Sequence[BenchmarkRow]) -> LoadBand:
    mine = {r.concurrency: r for r in rows if r.config == config}
    speculative = mine[levels[0]].speculative
    margins = []
    runner_ups = []
    for level in levels:
        others = [r for r in rows if r.concurrency == level and r.speculative != speculative]
        other = max(others, key=lambda r: r.output_tok_s, default=None)
        if other is not None and other.output_tok_s > 0:
            margins.append(mine[level].output_tok_s / other.output_tok_s)
            runner_ups.append(other.config)
    return LoadBand(
        min_concurrency=levels[0],
        max_concurrency=levels[-1],
        config=config,
        speculative=speculative,
        output_tok_s=(mine[levels[0]].output_tok_s, mine[levels[-1]].output_tok_s),
        runner_up=max(set(runner_ups), key=runner_ups.count) if runner_ups else None,
        margin=(min(margins), max(margins)) if margins else None,
    )


def _single_config(rows: Sequence[BenchmarkRow], levels: list[int]) -> tuple[str | None, float | None]:
    best = {c: max(r.output_tok_s for r in rows if r.concurrency == c) for c in levels}
    everywhere = [
        name
        for name in dict.fromkeys(r.config for r in rows)
        if {r.concurrency for r in rows if r.config == name} >= set(levels)
    ]
    if not everywhere:
        return None, None
    worst = {
        name: min(r.output_tok_s / best[r.concurrency] for r in rows if r.config == name and best[r.concurrency] > 0)
        for name in everywhere
    }
    name = max(worst, key=lambda n: worst[n])
    return name, worst[name]


def _load(band: LoadBand) -> str:
    if band.min_concurrency == band.max_concurrency:
        return f"C={band.min_concurrency}"
    return f"C={band.min_concurrency}..{band.max_concurrency}"


def recommend(rows: Sequence[BenchmarkRow], policy_text: str | None) -> Recommendation:
    levels = sorted({r.concurrency for r in rows})
    if not levels:
        return Recommendation(
            bands=[],
            single_config=None,
            single_config_worst_ratio=None,
            text="nothing was benchmarked: no configuration can be recommended",
            policy_text=policy_text,
        )
    fastest = [(c, max((r for r in rows if r.concurrency == c), key=lambda r: r.output_tok_s).config) for c in levels]
    groups: list[tuple[str, list[int]]] = []
    for level, config in fastest:
        if groups and groups[-1][0] == config:
            groups[-1][1].append(level)
        else:
            groups.append((config, [level]))
    bands = [_band(group, config, rows) for config, group in groups]
    single, worst = _single_config(rows, levels)
    sentences = []
    for band in bands:
        sentence = f"{_load(band)}: serve {band.config} ({band.output_tok_s[0]:.0f}"
        sentence += f"-{band.output_tok_s[1]:.0f} tok/s)" if band.min_concurrency != band.max_concurrency else " tok/s)"
        if band.margin is not None and band.runner_up is not None:
            low, high = band.margin
            ratio = f"{low:.2f}x" if abs(high - low) < 0.005 else f"{low:.2f}-{high:.2f}x"
            sentence += f", {ratio} the best {'autoregressive' if band.speculative else 'speculative'} configuration"
        sentences.append(sentence)
    text = "; ".join(sentences) + "."
    if single is not None and len(bands) > 1:
        text += f" One server for every load: {single} (at worst {worst:.0%} of the best measured at a level)."
    return Recommendation(
        bands=bands, single_config=single, single_config_worst_ratio=worst, text=text, policy_text=policy_text
    )
