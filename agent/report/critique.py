"""The seed's critique, answered in so many words.

The seed's agent compared DFlash on EP4 with EP4 alone, chosen in advance,
while TP8 was faster at C=1; it left the acceptance method vague; and it gave
no advice per load. The report says, from its own tables, what the baseline was
at each level, how acceptance was measured, and what to serve for which load.
"""

from __future__ import annotations

from collections.abc import Sequence

from .schema import AcceptanceSection, BenchmarkRow, CritiqueAnswers, LevelComparison, Recommendation


def _baseline(rows: Sequence[BenchmarkRow], comparisons: Sequence[LevelComparison]) -> str:
    autoregressive = list(dict.fromkeys(r.config for r in rows if not r.speculative))
    if not autoregressive:
        return "no autoregressive configuration was benchmarked: speculative results have no baseline in this run"
    runs: list[tuple[str, list[int]]] = []
    for c in comparisons:
        if c.best_autoregressive is None:
            continue
        if runs and runs[-1][0] == c.best_autoregressive:
            runs[-1][1].append(c.concurrency)
        else:
            runs.append((c.best_autoregressive, [c.concurrency]))
    text = (
        f"Speculative throughput is compared at each concurrency with the best autoregressive configuration measured "
        f"at that same level, out of {len(autoregressive)} measured ({', '.join(autoregressive)}), not with one "
        "chosen in advance. Best baseline by load: "
        + "; ".join(
            f"{name} at C={levels[0]}" + (f"..{levels[-1]}" if len(levels) > 1 else "") for name, levels in runs
        )
        + "."
    )
    if len(autoregressive) == 1:
        text += (
            " Only one autoregressive configuration was measured, so it is the best measured, not shown best possible."
        )
    return text


def _acceptance(acceptance: AcceptanceSection | None) -> str:
    if acceptance is None:
        return "no acceptance eval was run: no acceptance length is reported"
    o = acceptance.overall
    counts = ", ".join(f"{k} {v}" for k, v in acceptance.prompt_counts.items())
    modes = "".join(
        f" Thinking {m.thinking}: request mean {m.request_mean:.2f}, token weighted {m.token_weighted:.2f}."
        for m in acceptance.overall_by_thinking
    )
    return (
        f"On {acceptance.config}: request mean {o.request_mean:.2f}, token weighted {o.token_weighted:.2f} over "
        f"{o.prompts} prompts ({counts}).{modes} Method: {acceptance.method}"
    )


def answer_critique(
    rows: Sequence[BenchmarkRow],
    comparisons: Sequence[LevelComparison],
    acceptance: AcceptanceSection | None,
    recommendation: Recommendation,
) -> CritiqueAnswers:
    return CritiqueAnswers(
        baseline=_baseline(rows, comparisons),
        acceptance_method=_acceptance(acceptance),
        recommendation_per_load=recommendation.text,
    )
