"""A quoted figure is judged within its own rounding: 0.01x for a measured 0.0113x is right, 0.02x is not."""

from __future__ import annotations

from specops.agent.report.claims import _speedup_flags
from specops.agent.report.schema import LevelComparison


def _level(speedup: float, concurrency: int = 128) -> LevelComparison:
    return LevelComparison(
        concurrency=concurrency,
        best_autoregressive="tp8",
        autoregressive_tok_s=1180.0,
        best_speculative="tp8+dflash",
        speculative_tok_s=1180.0 * speedup,
        speedup=speedup,
        speedup_ci95=None,
        tpot_speedup=None,
        winner="autoregressive",
        notes=[],
    )


def test_a_tiny_speedup_printed_to_two_decimals_matches_what_was_measured():
    level = [_level(0.0113)]
    assert _speedup_flags("summary", "C=128: tp8+dflash 13.3 tok/s vs tp8 1180.0 tok/s (0.01x)", level) == []
    wrong = _speedup_flags("summary", "C=128: tp8+dflash vs tp8 (0.02x)", level)
    assert [f.kind for f in wrong] == ["contradicted"] and "0.02x" in wrong[0].evidence


def test_rounding_does_not_widen_the_tolerance_for_ordinary_figures():
    level = [_level(1.27, concurrency=1)]
    assert _speedup_flags("summary", "DFlash wins at C=1 (1.3x)", level) == []  # within 8%
    assert _speedup_flags("summary", "DFlash wins at C=1 (1.4x)", level)  # 10% off; rounding of 1.4 is only 0.05


def test_a_slowdown_is_judged_as_the_inverse_speedup_with_the_same_tolerance():
    level = [_level(0.62, concurrency=256)]  # 1/0.62 = 1.61
    assert _speedup_flags("summary", "At C=256 DFlash is 1.6x slower", level) == []
    assert _speedup_flags("summary", "At C=256 the speculative config is 1.5x-1.7x slower", level) == []
    wrong = _speedup_flags("summary", "At C=256 DFlash is 1.8x slower", level)  # 12% off
    assert [f.evidence for f in wrong] == ["1.8x slower: measured speedups C=256: 0.62x"]
