"""The numbers grader's per-level acceptance check can fail, and allows for few completed requests."""

from __future__ import annotations

from specops.agent.report.schema import Report
from specops.evals.graders.numbers_match_truth import Truth, _Sweep, level_acceptance_errors

from .evidence_builder import bench_row, config_tried, report_of

CONFIG = config_tried("tp8-ep4+dflash", ep=4, speculative=True, block_size=8)


def _report(accept: float) -> Report:
    row = bench_row(CONFIG.name, 32, speculative=True, accept_length=accept, seqs=[7])
    return report_of(configs=[CONFIG], benchmarks=[row])


def test_a_level_far_from_its_truth_fails_and_a_close_one_passes():
    truth = Truth.of("seed-ct200", [])
    expected, _ = truth.level_acceptance(CONFIG, 64)
    many = {7: _Sweep(output_len=64, completed={32: 1600})}
    [(error, allowed, _)] = level_acceptance_errors(truth, _report(expected + 0.3), many)
    assert allowed == 0.05 and error > allowed  # 1600 requests: the 0.05 floor holds
    [(error, allowed, _)] = level_acceptance_errors(truth, _report(expected + 0.02), many)
    assert error <= allowed
    one = {7: _Sweep(output_len=64, completed={32: 1})}
    [(error, allowed, _)] = level_acceptance_errors(truth, _report(expected + 0.3), one)
    assert error <= allowed  # one request: four standard errors of a single draw
