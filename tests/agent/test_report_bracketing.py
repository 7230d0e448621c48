"""Bracketing the crossover: the octaves between two levels far apart where the winner changes, and what the report
says of levels measured to bracket it."""

from __future__ import annotations

from specops.agent.report.bracketing import added_levels, octave_levels, unbracketed
from specops.agent.report.comparison import bracketing_levels, compare_levels, find_crossover
from specops.agent.report.schema import BenchmarkRow

from ..evals.evidence_builder import bench_row


def test_octaves_between_two_levels_leave_no_gap_wider_than_a_factor_of_2():
    assert octave_levels(1, 32) == [2, 4, 8, 16]
    assert octave_levels(3, 32) == [6, 12, 24]
    assert octave_levels(32, 64) == [] and octave_levels(64, 128) == []


def test_only_changes_of_winner_more_than_2x_apart_need_bracketing():
    assert unbracketed([(1, 1.4), (32, 0.8), (64, 0.7)]) == [(1, 32)]
    assert unbracketed([(32, 0.8), (1, 1.4)]) == [(1, 32)]  # in any order
    assert unbracketed([(1, 1.4), (32, 1.2), (64, 0.9)]) == []  # 32..64 is within a factor of 2
    assert unbracketed([(1, 0.9), (32, 0.8)]) == []  # no change of winner


def test_added_levels_are_those_measured_on_two_configurations_between_levels_measured_on_more():
    assert added_levels({1: 6, 2: 2, 4: 2, 8: 2, 16: 2, 32: 6, 64: 5}) == [2, 4, 8, 16]
    assert added_levels({1: 2, 64: 2}) == []  # a narrow run (one configuration a kind) adds nothing
    assert added_levels({1: 6, 32: 6, 256: 2}) == []  # the top level, measured on fewer: not between


def _rows(levels: dict[int, tuple[float, float]], everyone: int = 3) -> list[BenchmarkRow]:
    """At each level the autoregressive and speculative tok/s; levels 1 and 32+ on `everyone` configurations more."""
    rows = []
    for c, (ar, spec) in levels.items():
        rows += [bench_row("tp8", c, ar), bench_row("tp8+dflash-b8", c, spec, speculative=True)]
        if c == 1 or c >= 32:
            rows += [bench_row(f"tp{k}", c, ar / 2) for k in (1, 2, 4)[:everyone]]
    return rows


def test_the_crossover_names_the_levels_added_to_bracket_it():
    rows = _rows({1: (100, 150), 2: (180, 250), 4: (300, 380), 8: (500, 520), 16: (700, 600), 32: (900, 700)})
    crossover = find_crossover(compare_levels(rows), bracketing_levels(rows))
    assert crossover.between == (8, 16) and crossover.added_levels == [2, 4, 8, 16]
    assert (
        "C=2, C=4, C=8, C=16 were added (on tp8 and tp8+dflash-b8) because the winner changed between levels further "
        "apart: the change is bracketed within a factor of 2" in crossover.statement
    )


def test_a_change_of_winner_left_unbracketed_says_which_levels_would_find_it():
    rows = _rows({1: (100, 150), 32: (900, 700)})
    crossover = find_crossover(compare_levels(rows), bracketing_levels(rows))
    assert crossover.added_levels == []
    assert "not bracketed within a factor of 2 (measure C=2, C=4, C=8, C=16 to find it)" in crossover.statement
