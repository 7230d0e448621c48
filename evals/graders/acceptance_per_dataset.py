"""Acceptance per dataset: the report's latest acceptance section measured each dataset asked for, or says why not.

Applies when the run measured acceptance. Read from the report's latest acceptance
section and the `acceptance` call that produced it (the transcript step at the
section's seq: what was asked, and the result's notes):

- every standard dataset asked for (gsm8k, math500, humaneval, mbpp, mt-bench; the
  call's `categories`, or all five, the default, when it gave none) was measured
  from the Hub (a row of that name whose prompt set names the dataset's repo), or a
  note names it and says the shipped set of its kind (math, code, chat) stood in,
  and a row of that shipped set is in the section. A shipped set's row was asked
  for by name or stands in for a noted dataset. Where the scenario's Hub serves no
  such dataset (fault `datasets_missing`), it must be the fallback: a row claiming
  the Hub there reads a figure from nothing fetched;
- every row (per dataset, per thinking mode, and overall) has both weightings, each
  with its 95% interval once two requests or more counted, the request mean inside
  its interval;
- where the server's release reports SGLang's per-request acceptance histogram
  (sglang_releases facts; the acceptance result names the server's version), every
  row has it: verify steps by drafts accepted, a positive total whose tokens agree
  with the row's token-weighted figure (sum((k+1)*h_k) per verify step, plus each
  request's first token from prefill, less at most block-1 per request for a last
  step cut at max_new_tokens or EOS), and per-position rates that are the
  histogram's tail shares, non-increasing, within [0, 1];
- where the drafter's model card states figures (read_drafter_config's
  card_acceptance), each row of a dataset the card states carries its figure
  (`card`, the section's `card_label` set); a shipped set's row carries none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specops.agent.report.schema import AcceptanceSection, AcceptanceStat, Report
from specops.sglang_releases.facts import for_version
from specops.sim.faults import DatasetsMissing
from specops.tools.acceptance import HISTOGRAM_KEYS, AcceptanceResult
from specops.tools.datasets import DATASET_NAMES, standard_dataset
from specops.tools.drafters.tool import DrafterConfig
from specops.transcripts import ToolPair

from ..evidence import RunEvidence
from ..sim_host import scenario_faults
from ._base import Grader, Verdict

RATE_SLACK = 1e-3  # position rates are rounded to 4 places
TOKENS_SLACK = 1e-6


def _label(stat: AcceptanceStat) -> str:
    return stat.category + (f" (thinking {stat.thinking})" if stat.thinking else "")


def _step_of(evidence: RunEvidence, section: AcceptanceSection) -> ToolPair | None:
    return next(
        (s for s in evidence.steps_of("acceptance") if s.ok and s.result is not None and s.result.seq == section.seq),
        None,
    )


def weighting_problems(stat: AcceptanceStat) -> list[str]:
    """Both weightings, each with its interval once two requests counted (a single one has none)."""
    label = _label(stat)
    problems = []
    for name, value, interval in (
        ("request mean", stat.request_mean, stat.request_mean_ci95),
        ("token weighted", stat.token_weighted, stat.token_weighted_ci95),
    ):
        if not value >= 1.0:  # tau counts the bonus token: never below 1 (and not NaN)
            problems.append(f"{label}: {name} {value} is below 1")
        if interval is None:
            if stat.prompts >= 2:
                problems.append(f"{label}: {name} has no interval over {stat.prompts} requests")
            continue
        lo, hi = interval
        if not lo <= hi:
            problems.append(f"{label}: {name} interval {lo:.3f}..{hi:.3f} is reversed")
        elif name == "request mean" and not lo - TOKENS_SLACK <= value <= hi + TOKENS_SLACK:
            problems.append(f"{label}: request mean {value:.3f} lies outside its interval {lo:.3f}..{hi:.3f}")
    return problems


def histogram_problems(stat: AcceptanceStat, required: bool) -> list[str]:
    """The histogram's tokens agree with the token-weighted figure; the position rates are its tail shares."""
    label, histogram, rates = _label(stat), stat.histogram, stat.position_accept_rate
    if histogram is None:
        return [f"{label}: no acceptance histogram, though the server reports one"] if required else []
    steps = sum(histogram)
    if not histogram or steps <= 0 or any(h < 0 for h in histogram):
        return [f"{label}: histogram {histogram} counts no verify step"]
    problems = []
    tokens = sum((k + 1) * h for k, h in enumerate(histogram))  # accepted drafts plus the bonus token, per step
    measured = stat.token_weighted * steps  # the row's completion tokens over these verify steps
    n, most_cut = stat.prompts, len(histogram) - 1
    low, high = tokens - n * most_cut, tokens + n  # +1 per request: its first token comes from prefill
    if not low - TOKENS_SLACK * steps <= measured <= high + TOKENS_SLACK * steps:
        problems.append(
            f"{label}: the histogram ({steps} verify steps, {tokens} tokens with the bonus) does not fit token "
            f"weighted {stat.token_weighted:.3f} over {n} requests ({measured:.0f} tokens, expected "
            f"{max(low, 0)}..{high})"
        )
    if rates is None:
        return [*problems, f"{label}: histogram without per-position accept rates"]
    tails = [sum(histogram[k:]) / steps for k in range(1, len(histogram))]
    if len(rates) != len(tails):
        problems.append(f"{label}: {len(rates)} position rates for a histogram of {len(histogram)} bins")
    elif any(abs(r - t) > RATE_SLACK for r, t in zip(rates, tails, strict=True)):
        problems.append(
            f"{label}: position rates {rates} are not the histogram's tail shares {[round(t, 4) for t in tails]}"
        )
    if any(not 0.0 <= r <= 1.0 for r in rates) or any(
        b > a + RATE_SLACK for a, b in zip(rates, rates[1:], strict=False)
    ):
        problems.append(f"{label}: position rates {rates} are not non-increasing within [0, 1]")
    return problems


def _histogram_reported(result: AcceptanceResult | None, report: Report, section: AcceptanceSection) -> bool:
    """Whether the server's release reports SGLang's per-request histogram; unknown release: whether any row has one."""
    version = (result.server_version if result is not None else None) or report.host.versions.sglang
    if version:
        try:
            return any(key in for_version(version).meta_info_speculative_keys for key in HISTOGRAM_KEYS)
        except ValueError:
            pass
    return any(s.histogram is not None for s in [section.overall, *section.categories])


def _offline_datasets(evidence: RunEvidence) -> list[str]:
    """The standard datasets the scenario's Hub does not serve (fault datasets_missing)."""
    host = evidence.scenario.host
    faults = scenario_faults(host.profile, host.faults) if host.profile else []
    missing = [f for f in faults if isinstance(f, DatasetsMissing)]
    return [name for name in DATASET_NAMES if any(f.covers(standard_dataset(name).repo_id) for f in missing)]


def asked_sets(step: ToolPair | None, section: AcceptanceSection, notes: Sequence[str]) -> list[str]:
    """The prompt sets the acceptance call asked for: its `categories`, or when it gave none the default of its
    time, read from what it did: every standard dataset when it measured or noted one (today's default), else the
    shipped sets it measured (the default before the standard datasets)."""
    given = step.call.args.get("categories") if step is not None else None
    if isinstance(given, list) and given:
        return [str(c) for c in given]
    on_datasets = any(s.category in DATASET_NAMES for s in section.categories) or any(
        n.split(":", 1)[0] in DATASET_NAMES for n in notes
    )
    return list(DATASET_NAMES) if on_datasets else [s.category for s in section.categories]


def dataset_problems(
    section: AcceptanceSection, asked: Sequence[str], notes: Sequence[str], offline: Sequence[str]
) -> tuple[list[str], list[str], list[str]]:
    """(problems, datasets measured from the Hub, datasets measured on a shipped set with a note)."""
    rows = {stat.category: stat for stat in section.categories}
    problems: list[str] = []
    hub: list[str] = []
    fallback: list[str] = []
    stood_in: set[str] = set()
    for name in (a for a in asked if a in DATASET_NAMES):
        dataset = standard_dataset(name)
        noted = [n for n in notes if n.startswith(f"{name}:") and "shipped" in n and dataset.category in n]
        row = rows.get(name)
        if row is not None and not noted:
            if dataset.repo_id not in row.prompt_set:
                problems.append(f"{name}: measured on {row.prompt_set!r}, which is not {dataset.repo_id} on the Hub")
            elif name in offline:
                problems.append(f"{name}: reported as measured from the Hub, which serves no such dataset here")
            else:
                hub.append(name)
        elif noted:
            stood_in.add(dataset.category)
            if row is not None:
                problems.append(f"{name}: both a row from the Hub and a note that the shipped set stood in")
            elif dataset.category not in rows:
                problems.append(f"{name}: the note says the shipped {dataset.category} set stood in; no such row")
            else:
                fallback.append(name)
        else:
            problems.append(f"{name}: asked for, neither measured nor named in a fallback note")
    for category in rows:
        if category not in DATASET_NAMES and category not in asked and category not in stood_in:
            problems.append(f"a row of the shipped {category} set, neither asked for nor standing in for a dataset")
    return problems, hub, fallback


def card_problems(section: AcceptanceSection, figures: dict[str, float]) -> list[str]:
    problems = []
    for stat in section.categories:
        stated = figures.get(stat.category)
        if stated is None and stat.card is not None:
            problems.append(f"{_label(stat)}: card figure {stat.card} where the card states none")
        elif stated is not None and (stat.card is None or abs(stat.card - stated) > 1e-9):
            problems.append(f"{_label(stat)}: the card states {stated}, the row carries {stat.card}")
    if any(s.card is not None for s in section.categories) and not section.card_label:
        problems.append("card figures without the section's card_label")
    return problems


@dataclass
class AcceptancePerDataset(Grader):
    name = "acceptance_per_dataset"

    def grade(self, evidence: RunEvidence) -> Verdict:
        report = evidence.report
        measured = [s for s in evidence.steps_of("acceptance") if s.ok]
        section = report.acceptance if report is not None else None
        if section is None:
            if measured:
                return Verdict.fail("acceptance was measured, but the report has no acceptance section")
            return Verdict.ok("no acceptance measured")
        assert report is not None
        step = _step_of(evidence, section)
        result = step.result_as(AcceptanceResult) if step is not None else None
        notes = result.notes if result is not None else []
        asked = asked_sets(step, section, notes)
        problems, hub, fallback = dataset_problems(section, asked, notes, _offline_datasets(evidence))
        if not section.categories:
            problems.append("no per-dataset row")
        required = _histogram_reported(result, report, section)
        for stat in [*section.categories, *section.overall_by_thinking, section.overall]:
            problems += weighting_problems(stat)
            problems += histogram_problems(stat, required)
        drafters = [s.result_as(DrafterConfig) for s in evidence.steps_of("read_drafter_config") if s.ok]
        stated = next((d.card_acceptance for d in reversed(drafters) if d is not None), None)
        problems += card_problems(section, stated.figures if stated is not None else {})
        if problems:
            return Verdict.fail(
                "; ".join(problems[:4]) + (f" (and {len(problems) - 4} more)" if len(problems) > 4 else "")
            )
        parts = [f"{len(section.categories)} rows with both weightings"]
        if hub:
            parts.append(f"{len(hub)} datasets from the Hub")
        if fallback:
            parts.append(f"shipped sets for {', '.join(fallback)} (noted)")
        if required:
            parts.append("histograms agree")
        if stated is not None:
            beside = sum(s.card is not None for s in section.categories)
            parts.append(f"card figures beside {beside} rows" if beside else "no dataset the card states measured")
        return Verdict.ok("; ".join(parts))
