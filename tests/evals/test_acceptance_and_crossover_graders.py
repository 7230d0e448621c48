"""The acceptance-per-dataset and crossover-bracketed graders pass a sound report and fail the faults they exist for.

Reports are the real schema models; the crossover is built by the report's own comparison code from benchmark
rows, so each statement is the one a run would write.
"""

from __future__ import annotations

from typing import Any

from specops.agent.report.comparison import bracketing_levels, compare_levels, find_crossover
from specops.agent.report.schema import AcceptanceSection, AcceptanceStat, BenchmarkRow
from specops.evals.graders import GRADER_NAMES, AcceptancePerDataset, CrossoverBracketed
from specops.tools.acceptance import AcceptanceResult, CategoryAcceptance
from specops.tools.drafters.card_acceptance import CardAcceptance
from specops.tools.drafters.tool import DrafterConfig

from .evidence_builder import Run, bench_row

HISTOGRAM = [2, 10, 20, 30, 20, 10, 6, 2]  # verify steps that accepted k drafts (block 8)
PROMPTS = 4
CARD = {"gsm8k": 4.12, "mbpp": 3.62, "humaneval": 3.84}
MBPP_NOTE = (
    "mbpp: downloading google-research-datasets/mbpp/sanitized/test-00000-of-00001.parquet on the host failed: not "
    "found on the Hub; measured on the shipped code set instead (the offline fallback): its figures do not compare "
    "with a model card's"
)
PROMPT_SETS = {"gsm8k": "openai/gsm8k (main, test)", "humaneval": "openai/openai_humaneval (test)", "code": "code"}


def _tails(histogram: list[int]) -> list[float]:
    steps = sum(histogram)
    return [round(sum(histogram[k:]) / steps, 4) for k in range(1, len(histogram))]


def _figures(histogram: list[int], prompts: int) -> dict[str, Any]:
    """A row's figures as the acceptance tool computes them from its requests: the histogram's tokens plus each
    request's first token, over its verify steps."""
    steps = sum(histogram)
    tau = (sum((k + 1) * h for k, h in enumerate(histogram)) + prompts) / steps
    return {
        "prompts": prompts,
        "request_mean": tau,
        "request_mean_ci95": (tau - 0.2, tau + 0.2),
        "token_weighted": tau,
        "token_weighted_ci95": (tau - 0.15, tau + 0.1),
        "histogram": histogram,
        "position_accept_rate": _tails(histogram),
    }


def _stat(category: str, card: float | None = None, **changes: Any) -> AcceptanceStat:
    fields = {"category": category, "thinking": None, "prompt_set": PROMPT_SETS.get(category, category)}
    prompts = PROMPTS * 3 if category == "overall" else PROMPTS
    return AcceptanceStat.model_validate({**fields, **_figures(HISTOGRAM, prompts), "card": card, **changes})


def _tool_row(stat: AcceptanceStat) -> CategoryAcceptance:
    fields = stat.model_dump(exclude={"card"})
    steps = sum(HISTOGRAM)
    return CategoryAcceptance.model_validate(
        {
            **fields,
            "completion_tokens": round(stat.token_weighted * steps),
            "verify_steps": steps,
            "min_request": stat.request_mean,
            "max_request": stat.request_mean,
        }
    )


def _drafter_card() -> dict[str, Any]:
    return DrafterConfig(
        algorithm="DFLASH",
        identified_by="architectures: DFlashDraftModel",
        drafter=None,
        target=None,
        sglang_version="0.5.23",
        sglang_defaults=None,
        checks=[],
        notes=[],
        summary="a DFlash drafter",
        card_acceptance=CardAcceptance(figures=CARD, label="Acceptance length (τ)"),
    ).model_dump(mode="json")


def _acceptance_run(
    rows: list[AcceptanceStat],
    notes: list[str],
    *,
    asked: list[str] | None = None,
    card_label: str | None = "Acceptance length (τ)",
    scenario: dict[str, Any] | None = None,
    server_version: str | None = "0.5.23",
    overall: AcceptanceStat | None = None,
):
    """A run that read the drafter's card, measured acceptance once (the `asked` sets), and reported `rows`."""
    run = Run(scenario).tool("read_drafter_config", {"drafter": "x/y-DFlash"}, _drafter_card())
    overall = overall or _stat("overall")
    result = AcceptanceResult(
        host="sim:/w",
        port=30000,
        speculative_algorithm="DFLASH",
        block_size=8,
        server_version=server_version,
        max_new_tokens=256,
        temperature=0.0,
        categories=[_tool_row(r) for r in rows],
        overall=_tool_row(overall),
        failed_requests=0,
        errors=[],
        notes=notes,
        server_avg_accept_length=None,
        method="",
        warning=None,
    ).model_dump(mode="json")
    args = {"port": 30000, "prompts_per_category": PROMPTS, **({"categories": asked} if asked else {})}
    run.tool("acceptance", args, result)
    section = AcceptanceSection(
        config="tp8+dflash-b8",
        overall=overall,
        categories=rows,
        prompt_counts={r.category: r.prompts for r in rows},
        card_label=card_label if any(r.card is not None for r in rows) else None,
        method="",
        block_size=8,
        server_avg_accept_length=None,
        warning=None,
        failed_requests=0,
        seq=run.events[-1].seq,
    )
    run.report = {"acceptance": section, "acceptance_runs": [section]}
    return run.end()


ASKED = ["gsm8k", "humaneval", "mbpp"]


def _good_rows() -> list[AcceptanceStat]:
    return [_stat("gsm8k", CARD["gsm8k"]), _stat("humaneval", CARD["humaneval"]), _stat("code")]


def test_graders_are_registered():
    assert {"acceptance_per_dataset", "crossover_bracketed"} <= set(GRADER_NAMES)


def test_acceptance_from_the_hub_and_a_noted_fallback_passes():
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [MBPP_NOTE], asked=ASKED))
    assert verdict.passed, verdict.reason
    assert "2 datasets from the Hub" in verdict.reason and "shipped sets for mbpp" in verdict.reason


def test_a_run_without_acceptance_passes_and_one_whose_report_lost_it_fails():
    assert AcceptancePerDataset().check(Run().end()).passed
    evidence = _acceptance_run(_good_rows(), [MBPP_NOTE], asked=ASKED)
    assert evidence.report is not None
    evidence.report = evidence.report.model_copy(update={"acceptance": None})
    verdict = AcceptancePerDataset().check(evidence)
    assert not verdict.passed and "no acceptance section" in verdict.reason


def test_a_dataset_neither_measured_nor_noted_fails():
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [], asked=ASKED))
    assert not verdict.passed and "mbpp: asked for, neither measured nor named in a fallback note" in verdict.reason


def test_a_noted_fallback_without_the_shipped_row_fails():
    rows = [_stat("gsm8k", CARD["gsm8k"]), _stat("humaneval", CARD["humaneval"])]
    verdict = AcceptancePerDataset().check(_acceptance_run(rows, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "shipped code set stood in; no such row" in verdict.reason


def test_a_row_without_an_interval_fails():
    rows = [_stat("gsm8k", CARD["gsm8k"], token_weighted_ci95=None), *_good_rows()[1:]]
    verdict = AcceptancePerDataset().check(_acceptance_run(rows, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "gsm8k: token weighted has no interval over 4 requests" in verdict.reason


def test_a_missing_or_inconsistent_histogram_fails():
    no_histogram = [_stat("gsm8k", CARD["gsm8k"], histogram=None, position_accept_rate=None), *_good_rows()[1:]]
    verdict = AcceptancePerDataset().check(_acceptance_run(no_histogram, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "gsm8k: no acceptance histogram, though the server reports one" in verdict.reason
    # An old release's record without the histogram is not held against it when no row has one.
    bare = {"histogram": None, "position_accept_rate": None}
    old = [r.model_copy(update=bare) for r in _good_rows()]
    evidence = _acceptance_run(old, [MBPP_NOTE], asked=ASKED, server_version=None, overall=_stat("overall", **bare))
    assert AcceptancePerDataset().check(evidence).passed

    rising = _tails(HISTOGRAM)
    rising[2], rising[3] = rising[3], rising[2]
    bad_rates = [_stat("gsm8k", CARD["gsm8k"], position_accept_rate=rising), *_good_rows()[1:]]
    verdict = AcceptancePerDataset().check(_acceptance_run(bad_rates, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "not the histogram's tail shares" in verdict.reason
    assert "not non-increasing" in verdict.reason

    other = [_stat("gsm8k", CARD["gsm8k"], histogram=[40, 40, 10, 5, 3, 2, 0, 0]), *_good_rows()[1:]]
    verdict = AcceptancePerDataset().check(_acceptance_run(other, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "does not fit token weighted" in verdict.reason


def test_card_figures_must_be_beside_the_datasets_the_card_states_and_only_there():
    without = [_stat("gsm8k"), _stat("humaneval", CARD["humaneval"]), _stat("code")]
    verdict = AcceptancePerDataset().check(_acceptance_run(without, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "gsm8k: the card states 4.12, the row carries None" in verdict.reason
    on_shipped = [*_good_rows()[:2], _stat("code", CARD["mbpp"])]
    verdict = AcceptancePerDataset().check(_acceptance_run(on_shipped, [MBPP_NOTE], asked=ASKED))
    assert not verdict.passed and "code: card figure 3.62 where the card states none" in verdict.reason
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [MBPP_NOTE], asked=ASKED, card_label=""))
    assert not verdict.passed and "card_label" in verdict.reason


def test_where_the_hub_serves_no_datasets_a_row_from_the_hub_fails_and_the_noted_fallback_passes():
    offline = {"host": {"profile": "seed-ct200", "faults": ["datasets_missing"]}}
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [MBPP_NOTE], asked=ASKED, scenario=offline))
    assert not verdict.passed and "gsm8k: reported as measured from the Hub, which serves no such dataset here" in (
        verdict.reason
    )
    notes = [
        f"{name}: not found on the Hub; measured on the shipped {kind} set instead (the offline fallback)"
        for name, kind in (("gsm8k", "math"), ("humaneval", "code"), ("mbpp", "code"))
    ]
    rows = [_stat("math"), _stat("code")]
    verdict = AcceptancePerDataset().check(_acceptance_run(rows, notes, asked=ASKED, scenario=offline))
    assert verdict.passed, verdict.reason
    assert "shipped sets for gsm8k, humaneval, mbpp" in verdict.reason


# -- crossover_bracketed ---------------------------------------------------------------------------------

SPEC, AR, AR2 = "tp8+dflash-b8", "tp8", "tp8-ep8"
# Output tok/s per level: DFlash wins up to C=32 and loses from C=64.
SPEC_TOK_S = {1: 107.0, 2: 193.0, 4: 309.0, 8: 460.0, 16: 592.0, 32: 702.0, 64: 807.0}
AR_TOK_S = {1: 97.0, 2: 173.0, 4: 288.0, 8: 432.0, 16: 581.0, 32: 683.0, 64: 954.0}


def _rows(levels: list[int], *, extra: dict[int, str] | None = None) -> list[BenchmarkRow]:
    """SPEC and AR at `levels`, a second baseline layout at the two ends (so that the levels between read as
    added), and any `extra` configuration at a level."""
    rows = [bench_row(SPEC, c, SPEC_TOK_S[c], speculative=True) for c in levels]
    rows += [bench_row(AR, c, AR_TOK_S[c]) for c in levels]
    rows += [bench_row(AR2, c, AR_TOK_S[c] * 0.7) for c in (levels[0], levels[-1])]
    rows += [bench_row(name, c, AR_TOK_S[c] * 0.5) for c, name in (extra or {}).items()]
    return rows


def _crossover_run(rows: list[BenchmarkRow], **crossover_changes: Any):
    comparison = compare_levels(rows)
    crossover = find_crossover(comparison, bracketing_levels(rows))
    run = Run()
    run.report = {
        "benchmarks": rows,
        "comparison": comparison,
        "crossover": crossover.model_copy(update=crossover_changes),
    }
    return run.end()


def test_a_bracketed_crossover_with_its_added_levels_passes():
    verdict = CrossoverBracketed().check(_crossover_run(_rows([1, 2, 4, 8, 16, 32, 64])))
    assert verdict.passed, verdict.reason
    assert "C=32..64" in verdict.reason and "C=2, 4, 8, 16, 32 added" in verdict.reason


def test_an_unbracketed_change_passes_only_when_the_statement_says_so_and_which_levels_would_find_it():
    evidence = _crossover_run(_rows([1, 64]))
    assert evidence.report is not None and "measure C=2, C=4, C=8, C=16, C=32 to find it" in (
        evidence.report.crossover.statement
    )
    assert CrossoverBracketed().check(evidence).passed
    silent = evidence.report.crossover.statement.split("; not bracketed")[0]
    verdict = CrossoverBracketed().check(_crossover_run(_rows([1, 64]), statement=silent))
    assert not verdict.passed and "does not say it is not bracketed" in verdict.reason
    vague = silent + "; not bracketed within a factor of 2 (measure C=2, C=4 to find it)"
    verdict = CrossoverBracketed().check(_crossover_run(_rows([1, 64]), statement=vague))
    assert not verdict.passed and "C=8, C=16, C=32 not named" in verdict.reason


def test_added_levels_must_be_measured_on_exactly_the_configurations_the_statement_names():
    # A third configuration measured at an added level (C=8): not what the statement says the levels were for.
    rows = _rows([1, 2, 4, 8, 16, 32, 64])
    rows.append(bench_row("tp8-ep4", 8, 300.0))
    comparison = compare_levels(rows)
    added = [2, 4, 8, 16, 32]
    crossover = find_crossover(comparison, added)
    run = Run()
    run.report = {"benchmarks": rows, "comparison": comparison, "crossover": crossover}
    verdict = CrossoverBracketed().check(run.end())
    assert not verdict.passed and "C=8 was measured on tp8-ep4 too" in verdict.reason

    good = _crossover_run(_rows([1, 2, 4, 8, 16, 32, 64]))
    assert good.report is not None
    wrong = good.report.crossover.statement.replace(f"(on {AR} and {SPEC})", f"(on {AR2} and {SPEC})")
    verdict = CrossoverBracketed().check(_crossover_run(_rows([1, 2, 4, 8, 16, 32, 64]), statement=wrong))
    assert not verdict.passed and f"C=2 was measured on {AR} too" in verdict.reason
    unnamed = good.report.crossover.statement.split("; C=2")[0]
    verdict = CrossoverBracketed().check(_crossover_run(_rows([1, 2, 4, 8, 16, 32, 64]), statement=unnamed))
    assert not verdict.passed and "does not name the added levels" in verdict.reason


def test_crossings_that_are_not_the_measured_changes_of_winner_fail():
    evidence = _crossover_run(_rows([1, 2, 4, 8, 16, 32, 64]), crossings=[])
    verdict = CrossoverBracketed().check(evidence)
    assert not verdict.passed and "not the changes of winner measured [(32, 64)]" in verdict.reason


def test_no_change_of_winner_passes():
    rows = [bench_row(SPEC, c, SPEC_TOK_S[c], speculative=True) for c in (1, 32)]
    rows += [bench_row(AR, c, AR_TOK_S[c]) for c in (1, 32)]
    verdict = CrossoverBracketed().check(_crossover_run(rows))
    assert verdict.passed and "does not change" in verdict.reason


def test_a_shipped_row_must_be_asked_for_or_stand_in_for_a_noted_dataset():
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [], asked=["gsm8k", "humaneval"]))
    assert not verdict.passed and "the shipped code set, neither asked for nor standing in" in verdict.reason
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [], asked=["gsm8k", "humaneval", "code"]))
    assert verdict.passed, verdict.reason


def test_a_call_without_categories_asked_for_every_standard_dataset():
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [MBPP_NOTE]))
    assert not verdict.passed
    assert (
        "math500: asked for, neither measured nor named" in verdict.reason and "mt-bench: asked for" in verdict.reason
    )


def test_one_missing_dataset_repo_needs_the_fallback_for_that_dataset_only():
    mbpp_gone = {
        "host": {"profile": "seed-ct200", "faults": ["datasets_missing:repo_id=google-research-datasets/mbpp"]}
    }
    verdict = AcceptancePerDataset().check(_acceptance_run(_good_rows(), [MBPP_NOTE], asked=ASKED, scenario=mbpp_gone))
    assert verdict.passed, verdict.reason
    from_hub = [*_good_rows()[:2], _stat("mbpp", CARD["mbpp"], prompt_set="google-research-datasets/mbpp (test)")]
    verdict = AcceptancePerDataset().check(_acceptance_run(from_hub, [], asked=ASKED, scenario=mbpp_gone))
    assert not verdict.passed and "mbpp: reported as measured from the Hub" in verdict.reason
