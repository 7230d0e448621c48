"""Comparison, crossover and recommendation logic on benchmark results built as a run records them."""

from __future__ import annotations

import statistics

import pytest

from specops.agent.report import build_report
from specops.agent.report.naming import ConfigNames, base_name
from specops.tools.sglang.config import ServerConfig, SpeculativeAlgorithm

from .test_report_scenario import Transcript, running, server_config, sweep

LEVELS = [1, 8, 64]


def _run(autoregressive: list[list[float]], speculative: list[list[float]], levels=LEVELS):
    """One server of each kind, each swept once per list given (repeats give spreads)."""
    t = Transcript()
    for pid, (name, sweeps, accept) in enumerate((("tp8", autoregressive, None), ("tp8+dflash", speculative, 3.8)), 1):
        config = server_config(name)
        t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, pid))
        for figures in sweeps:
            t.tool("benchmark", {"port": 30000, "levels": levels}, sweep(figures, accept=accept, levels=levels))
    return build_report(t.events, None, status="completed")


def test_speculation_winning_everywhere_puts_the_crossover_beyond_the_range():
    report = _run([[100, 500, 900]], [[150, 600, 950]])
    assert report.crossover.kind == "beyond_range" and report.crossover.concurrency is None
    assert "beyond C=64" in report.crossover.statement
    assert [b.config for b in report.recommendation.bands] == ["tp8+dflash"]


def test_speculation_losing_everywhere_never_wins():
    report = _run([[100, 500, 900]], [[90, 400, 600]])
    assert report.crossover.kind == "never_wins"
    assert all(c.winner == "autoregressive" for c in report.comparison)
    assert report.recommendation.bands[0].config == "tp8" and report.recommendation.single_config == "tp8"


def test_speculation_paying_only_at_high_load_is_not_called_a_crossover_where_it_stops():
    report = _run([[100, 500, 900]], [[80, 450, 1000]])
    assert report.crossover.kind == "starts_paying_only"
    assert [c.direction for c in report.crossover.crossings] == ["starts_paying"]


def test_crossover_interpolates_in_log2_concurrency():
    report = _run([[100, 500, 1000]], [[200, 500 * 1.5, 500]])
    # Speedup 1.5 at C=8, 0.5 at C=64: it crosses 1 halfway in log2, at C=2**4.5.
    assert report.crossover.between == (8, 64)
    assert report.crossover.concurrency == pytest.approx(2**4.5, abs=0.1)


def test_repeated_sweeps_give_throughput_and_speedup_intervals():
    report = _run(
        [[100, 500, 900], [104, 510, 880], [98, 505, 905]], [[150, 520, 700], [154, 500, 690], [149, 530, 710]]
    )
    rows = {(r.config, r.concurrency): r for r in report.benchmarks}
    base = rows[("tp8", 1)]
    assert base.samples == 3 and base.output_tok_s == pytest.approx(302 / 3)
    # Student-t with 2 degrees of freedom: mean +- t * sd / sqrt(3), t(0.975, 2) = 0.95 / sqrt(2 * 0.975 * 0.025) = 4.3027
    # (closed form for df = 2; the printed 4.303 is rounded).
    t = 0.95 / (2 * 0.975 * 0.025) ** 0.5
    sd = statistics.stdev([100, 104, 98])
    assert base.output_tok_s_ci95 == pytest.approx((302 / 3 - t * sd / 3**0.5, 302 / 3 + t * sd / 3**0.5))
    at = {c.concurrency: c for c in report.comparison}
    # C=1: clearly faster; C=8: the intervals overlap across 1, so it is a tie, not a win; C=64: clearly slower.
    assert at[1].winner == "speculative" and at[1].speedup_ci95[0] > 1
    assert at[8].speedup_ci95[0] < 1 < at[8].speedup_ci95[1] and at[8].winner == "tie"
    assert at[64].winner == "autoregressive" and at[64].speedup_ci95[1] < 1


def test_a_second_change_of_winner_at_a_tied_level_is_said_to_be_within_the_spread():
    levels = [1, 8, 64, 128]
    # C=1 clearly speculative, C=8 clearly autoregressive, C=64 a noisy 1.04x, C=128 clearly autoregressive.
    report = _run(
        [[100, 500, 900, 1000], [102, 505, 880, 1010]], [[150, 400, 950, 800], [152, 410, 900, 805]], levels=levels
    )
    at = {c.concurrency: c for c in report.comparison}
    assert at[64].winner == "tie" and at[64].speedup > 1 and at[8].winner == at[128].winner == "autoregressive"
    statement = report.crossover.statement
    assert "the winner changes more than once" in statement
    assert "(C=64 is a tie within the measurement spread: the later changes may be noise)" in statement
    clean = _run([[100, 500, 900, 1000]], [[150, 400, 950, 800]], levels=levels)  # no spread known: no tie
    assert "more than once" in clean.crossover.statement and "noise" not in clean.crossover.statement


def test_a_baseline_interval_reaching_zero_makes_the_level_a_tie_not_an_unknown_spread():
    report = _run([[100, 900], [102, 300]], [[150, 700], [152, 800]], levels=[1, 64])
    at64 = next(c for c in report.comparison if c.concurrency == 64)
    assert at64.speedup_ci95 is None and at64.winner == "tie"
    assert any("unbounded" in note for note in at64.notes) and not any("spread unknown" in n for n in at64.notes)


def test_a_level_measured_for_one_kind_only_has_no_speedup():
    t = Transcript()
    base, spec = server_config("tp8"), server_config("tp8+dflash")
    t.tool("launch_server", {"config": base.model_dump(mode="json")}, running(base, 1))
    t.tool("benchmark", {"port": 30000, "levels": [1, 8]}, sweep([100, 500], levels=[1, 8]))
    t.tool("launch_server", {"config": spec.model_dump(mode="json")}, running(spec, 2))
    t.tool("benchmark", {"port": 30000, "levels": [1]}, sweep([150], accept=3.8, levels=[1]))
    report = build_report(t.events, None, status="completed")
    at = {c.concurrency: c for c in report.comparison}
    assert at[8].speedup is None and at[8].winner is None and "only autoregressive" in at[8].notes[0]
    assert report.crossover.kind == "beyond_range"  # the only comparable level is a win
    # Neither configuration was measured at every level... but tp8 was: it is the one-server choice.
    assert report.recommendation.single_config == "tp8"


def test_nothing_benchmarked_gives_an_unknown_crossover_and_no_recommendation():
    report = build_report(Transcript().events, None, status="failed")
    assert report.crossover.kind == "unknown" and report.recommendation.bands == []
    assert "nothing was benchmarked" in report.recommendation.text


def test_config_names_follow_the_server_config():
    model = "~/models/Kimi-K2.6"
    assert base_name(ServerConfig(model_path=model, pp=8)) == "pp8"
    assert base_name(ServerConfig(model_path=model, tp=8, ep=8, dp=8, enable_dp_attention=True)) == "tp8-ep8-dp8-dpattn"
    assert base_name(ServerConfig(model_path=model)) == "tp1"
    spec = ServerConfig(
        model_path=model,
        tp=8,
        ep=4,
        speculative_algorithm=SpeculativeAlgorithm.DFLASH,
        drafter_path="~/d",
        cuda_graphs=False,
    )
    assert base_name(spec) == "tp8-ep4+dflash+no-graphs"
    names = ConfigNames()
    first = names.name(ServerConfig(model_path=model, tp=8, mem_fraction_static=0.85))
    other = names.name(ServerConfig(model_path=model, tp=8, mem_fraction_static=0.80))
    again = names.name(ServerConfig(model_path=model, tp=8, mem_fraction_static=0.85, port=30001))
    assert (first, other, again) == ("tp8", "tp8+mem_fraction_static=0.8", "tp8")


def test_a_level_that_stalled_is_left_out_where_it_was_measured_again_and_held():
    t = Transcript()
    config = server_config("tp8")
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 1))
    first = sweep([100, 300, 900], levels=LEVELS)
    stalled = first.levels[1].model_copy(update={"output_tok_s_ci95": (80.0, 520.0), "unstable": True})
    t.tool(
        "benchmark",
        {"port": 30000, "levels": LEVELS},
        first.model_copy(update={"levels": [first.levels[0], stalled, first.levels[2]]}),
    )
    t.tool("benchmark", {"port": 30000, "levels": [8]}, sweep([500], levels=[8]))
    report = build_report(t.events, None, status="completed")
    rows = {(r.config, r.concurrency): r for r in report.benchmarks}
    assert rows[("tp8", 8)].output_tok_s == 500 and rows[("tp8", 8)].samples == 1
    assert rows[("tp8", 1)].output_tok_s == 100 and rows[("tp8", 64)].output_tok_s == 900
    assert any("tp8 at C=8 stalled inside the level" in note for note in report.notes)
    # Measured only once, a stalled level stays (flagged): there is nothing better to put there.
    alone = Transcript()
    alone.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 1))
    alone.tool(
        "benchmark", {"port": 30000, "levels": [8]}, sweep([300], levels=[8]).model_copy(update={"levels": [stalled]})
    )
    (row,) = build_report(alone.events, None, status="completed").benchmarks
    assert row.output_tok_s == 300 and row.unstable
