"""Does the measured acceptance pay off? A warning when the drafter is slower than the baseline where it should win.

Speculation gains most at the lowest concurrency (the GPU has spare compute to
verify a block). If the best speculative configuration loses to the best
autoregressive one even there, the acceptance measured is below what this host
needs, whatever the tau looks like on its own. Throughput at low load is close to
proportional to tau at a fixed verify cost, so tau / speedup estimates the
break-even acceptance length.
"""

from __future__ import annotations

from collections.abc import Sequence

from .schema import AcceptanceSection, LevelComparison


def payoff_warning(acceptance: AcceptanceSection, comparisons: Sequence[LevelComparison]) -> str | None:
    measured = [c for c in comparisons if c.speedup is not None]
    if not measured:
        return None
    lowest = min(measured, key=lambda c: c.concurrency)
    if lowest.winner != "autoregressive":
        return None
    assert lowest.speedup is not None, "measured holds only levels with a speedup"
    tau = acceptance.overall.request_mean
    return (
        f"at the measured acceptance length {tau:.2f} the drafter is slower than the baseline even at C={lowest.concurrency} "
        f"({lowest.best_speculative} {lowest.speculative_tok_s:.1f} vs {lowest.best_autoregressive} "
        f"{lowest.autoregressive_tok_s:.1f} tok/s, {lowest.speedup:.2f}x): it would need about {tau / lowest.speedup:.1f} "
        "to break even here"
    )
