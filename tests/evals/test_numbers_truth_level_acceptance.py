"""The numbers grader judges a speculative level's throughput at the acceptance its own requests drew (replayed
from the simulator's seeded draws), and still fails a figure off that truth."""

from __future__ import annotations

import pytest

from specops.evals.graders.numbers_match_truth import BenchmarkSweep, NumbersMatchTruth, Truth
from specops.sim.serving.performance import Launch, build_performance_model, default_random_seed, ids_prompt_text
from specops.sim.serving.truth import replayed_verify_steps
from specops.tools.benchmark.models import BenchmarkArgs, BenchmarkResult, LevelRequests, LevelResult

from .evidence_builder import Run, bench_row, config_tried, report_of

CONFIG = config_tried("tp8-ep4+dflash", ep=4, speculative=True, block_size=8)
ARGS = BenchmarkArgs(port=30000, levels=[1, 32], input_len=128, output_len=64, duration_s=0.4, warmup_requests=0)


def _sweep(tokens: list[int], verify: list[int | None] | None = None) -> BenchmarkSweep:
    """A sweep whose C=32 level (the second) streamed `tokens` per request, cut at the window's end."""
    n = len(tokens)
    records = LevelRequests(
        start_s=[0.0] * n,
        ttft_s=[0.1] * n,
        e2e_s=[2.0] * n,
        output_tokens=list(tokens),
        status="c" * n,
        spec_verify_ct=verify,
    )
    level = LevelResult.model_construct(concurrency=32, requests=records)
    return BenchmarkSweep(
        ARGS, BenchmarkResult.model_construct(levels=[LevelResult.model_construct(concurrency=1), level])
    )


def _replayed(sweep: BenchmarkSweep, tokens: list[int]) -> float:
    launch = Launch(tp=8, ep=4, speculative_algorithm="DFLASH")  # CONFIG's, as the simulator sees it
    model = build_performance_model(Truth.of("seed-ct200", []).serving, launch, 8)
    steps = 0
    for index, out in enumerate(tokens):
        ids = sweep.prompt_ids(1, index)
        assert ids is not None and len(ids) == 128
        found = replayed_verify_steps(model, ids_prompt_text(ids), out, random_seed=default_random_seed("DFLASH"))
        assert found is not None
        steps += found
    return sum(t - 1 for t in tokens) / steps


def test_a_speculative_level_is_judged_at_its_own_requests_acceptance():
    truth = Truth.of("seed-ct200", [])
    tokens = [40] * 32
    sweep = _sweep(tokens)
    per_step = truth.level_tokens_per_step(CONFIG, 32, sweep)
    assert per_step == pytest.approx(_replayed(sweep, tokens))
    report = report_of(configs=[CONFIG], benchmarks=[bench_row(CONFIG.name, 32, 700.0, speculative=True, seqs=[7])])
    [(_, at_own, _)] = truth.row_errors(report, {7: sweep})
    assert at_own == pytest.approx(truth.tok_s(CONFIG, 32, per_step))
    [(_, at_mean, _)] = truth.row_errors(report)  # no sweep: the kind's mean acceptance
    assert at_mean == pytest.approx(truth.tok_s(CONFIG, 32))
    assert at_own / at_mean == pytest.approx(per_step / 3.55)


def test_a_replay_that_disagrees_with_the_servers_counts_is_not_used():
    truth = Truth.of("seed-ct200", [])
    tokens = [64] * 4
    agree = _sweep(tokens, [round((64 - 1) / _replayed(_sweep([64]), [64]))] + [None] * 3)
    assert truth.level_tokens_per_step(CONFIG, 32, agree) is not None
    wrong = _sweep(tokens, [999, None, None, None])  # another server seed, another prompt rule: not these draws
    assert truth.level_tokens_per_step(CONFIG, 32, wrong) is None
    sampled = BenchmarkSweep(ARGS.model_copy(update={"temperature": 0.7}), agree.result)
    assert truth.level_tokens_per_step(CONFIG, 32, sampled) is None


@pytest.mark.parametrize("off", [0.05, -0.05])
def test_a_level_five_per_cent_off_its_truth_fails_at_a_three_per_cent_tolerance(off):
    def run(tok_s: float):
        r = Run({"host": {"profile": "seed-ct200"}, "expect": {"throughput_tolerance": 0.03}})
        r.report.update(configs=[CONFIG], benchmarks=[bench_row(CONFIG.name, 32, tok_s, speculative=True)])
        return r.end()

    exact = Truth.of("seed-ct200", []).tok_s(CONFIG, 32)
    grader = NumbersMatchTruth()
    assert grader.check(run(exact * 1.01)).passed
    failed = grader.check(run(exact * (1 + off)))
    assert not failed.passed and "5.0%" in failed.reason
