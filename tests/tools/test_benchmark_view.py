"""The benchmark as a model is shown it: a row per level, flags in a word, each kind of warning once with its levels."""

from __future__ import annotations

import pytest

from specops.tools.benchmark.for_model import benchmark_view
from specops.tools.benchmark.models import BenchmarkResult, ClientLoad, LatencySummary, LevelResult

BUSY = (
    "the client was busy (CPU {cpu}% of a core): read TTFT as an upper bound; run fewer requests in flight per client"
)


def _latency(p50: float, p99: float) -> LatencySummary:
    return LatencySummary(samples=10, mean_ms=p50, p50_ms=p50, p90_ms=p99, p99_ms=p99)


def _level(c: int, tok_s: float, *, busy: bool = False, accept: float | None = None, valid: bool = True) -> LevelResult:
    return LevelResult.model_construct(
        concurrency=c,
        output_tok_s=tok_s,
        output_tok_s_ci95=(tok_s * 0.98, tok_s * 1.02),
        ttft=_latency(40.0, 60.0),
        tpot=_latency(10.0, 12.0),
        accept_length=accept,
        requests_completed=c,
        requests_failed=0 if valid else c,
        valid=valid,
        invalid_reason=None if valid else "the server died (NCCL watchdog timeout)",
        unstable=False,
        client=ClientLoad(cpu_fraction=0.5, loop_lag_p99_ms=5.0, limited=busy),
        warnings=[BUSY.format(cpu=40 + c % 7)] if busy else [],
    )


def test_a_row_per_level_with_flags_and_each_warning_kind_once():
    levels = [
        _level(1, 94.0, accept=1.0),
        _level(64, 940.0, busy=True, accept=3.8),
        _level(256, 1280.0, busy=True),
        _level(512, 0.0, valid=False),
    ]
    result = BenchmarkResult.model_construct(
        speculative_algorithm="DFLASH",
        levels=levels,
        best_output_tok_s=1280.0,
        best_at_concurrency=256,
        warnings=[f"C={lv.concurrency}: {w}" for lv in levels for w in lv.warnings] + ["levels not run: C=1024"],
    )
    view = benchmark_view(result)
    rows = [dict(zip(view["columns"].split(), row, strict=True)) for row in view["levels"]]
    assert (
        [r["C"] for r in rows] == [1, 64, 256, 512]
        and rows[0]["ttft_p99"] == 60.0
        and rows[1]["ci95"] == pytest.approx([921.2, 958.8])
    )
    assert rows[0]["flags"] == "low_accept" and rows[1]["flags"] == "client_busy" and rows[2]["flags"] == "client_busy"
    assert rows[3]["flags"].startswith("INVALID: the server died") and "failures" in rows[3]["flags"]
    busy = [w for w in view["warnings"] if "client was busy" in w]
    assert len(busy) == 1 and busy[0].startswith("C=64, C=256: the client was busy (CPU 41%")
    assert "levels not run: C=1024" in view["warnings"] and "best" not in view  # the rows show it


def test_an_autoregressive_sweep_has_no_accept_column():
    result = BenchmarkResult.model_construct(
        speculative_algorithm=None, levels=[_level(1, 94.0)], best_output_tok_s=94.0, best_at_concurrency=1, warnings=[]
    )
    view = benchmark_view(result)
    assert "accept" not in view["columns"].split() and view["speculative"] is None
    (row,) = [dict(zip(view["columns"].split(), row, strict=True)) for row in view["levels"]]
    assert row["tok_s"] == 94.0 and row["ok"] == 1 and row["failed"] == 0


def test_a_level_that_stalled_is_flagged_so_and_a_short_levels_noise_only_unstable():
    noisy = _level(1, 169.0).model_copy(update={"output_tok_s_ci95": (152.0, 186.0), "unstable": True})  # +-10%
    stalled = _level(32, 3566.0).model_copy(update={"output_tok_s_ci95": (939.0, 6192.0), "unstable": True})
    assert not noisy.stalled and stalled.stalled and not _level(64, 940.0).stalled
    result = BenchmarkResult.model_construct(
        speculative_algorithm=None,
        levels=[noisy, stalled],
        best_output_tok_s=3566.0,
        best_at_concurrency=32,
        warnings=[],
    )
    rows = [
        dict(zip(benchmark_view(result)["columns"].split(), row, strict=True))
        for row in benchmark_view(result)["levels"]
    ]
    assert [r["flags"] for r in rows] == ["unstable", "stalled"]
