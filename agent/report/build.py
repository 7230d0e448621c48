"""build_report: the transcript's events (and the policy's final answer) to a Report."""

from __future__ import annotations

from collections.abc import Sequence

from specops.agent.final import FinalAnswer
from specops.transcripts import Event

from .budget import budget_section
from .card import beside_card
from .claims import check_claims
from .comparison import bracketing_levels, compare_levels, find_crossover
from .critique import answer_critique
from .drafters import Drafters
from .evidence import gather_evidence
from .failures import list_failures
from .goodput import goodput_targets_used
from .head_to_head import drafters_head_to_head, rows_by_drafter
from .naming import ConfigNames
from .pareto import pareto_points
from .payoff import payoff_warning
from .recommendation import recommend
from .requests import request_rows
from .rows import benchmark_rows
from .schema import AcceptanceSection, LevelComparison, Report
from .sections import (
    acceptance_sections,
    configs_tried,
    drafter_sections,
    host_section,
    last_read,
    left_running,
    run_section,
)
from .servers import ServerTimeline
from .shapes import compare_shapes
from .timing import time_spent
from .tuning import tuning_section


def build_report(events: Sequence[Event], final: FinalAnswer | None, *, status: str) -> Report:
    """The report of a run, built from the recorded tool results; `final` adds only words, which are checked."""
    evidence = gather_evidence(events)
    notes = list(evidence.notes)
    # Names are handed out in launch order, so the first configuration tried keeps the plain name.
    names = ConfigNames(launch.config for launch in evidence.launches)
    timeline = ServerTimeline(evidence, names)
    rows = benchmark_rows(evidence, timeline, notes)
    comparisons = compare_levels(rows)
    crossover = find_crossover(comparisons, bracketing_levels(rows))
    recommendation = recommend(rows, final.recommendation if final else None)
    drafters = Drafters(evidence)
    serving = drafters.serving({names.name(launch.config): launch.config for launch in evidence.launches})
    sections = drafter_sections(evidence, drafters, serving, list(dict.fromkeys(r.config for r in rows)))
    cards = {s.identity: s.card for s in sections}
    # Each drafter's acceptance pays off or not against its own comparison when several were benchmarked.
    own = rows_by_drafter(rows, serving)
    baseline = [r for r in rows if not r.speculative]
    per_drafter = {d: compare_levels([*baseline, *mine]) for d, mine in own.items()} if len(own) > 1 else {}
    acceptance = [
        beside_card(
            _with_payoff(section, per_drafter.get(section.drafter or "", comparisons)),
            cards.get(section.drafter),
        )
        for section in acceptance_sections(evidence, timeline, drafters)
    ]
    head_to_head = drafters_head_to_head(rows, serving, drafters.identities)
    failures = list_failures(evidence)
    running = left_running(evidence, timeline, final)
    flags = check_claims(
        final,
        status=status,
        rows=rows,
        comparisons=comparisons,
        crossover=crossover,
        acceptance=acceptance,
        failures=failures,
        running=running,
        exchanges=evidence.exchanges,
        head_to_head=head_to_head,
    )
    latest_acceptance = acceptance[-1] if acceptance else None
    configs = configs_tried(evidence, names, drafters)
    for section in acceptance:
        if section.warning:
            notes.append(f"acceptance on {section.config}: {section.warning}")
    timing = time_spent(evidence)
    timing = timing.model_copy(update={"budget": budget_section(evidence, rows, timing.host, final)})
    return Report(
        run=run_section(evidence, final, status),
        host=host_section(evidence),
        drafter=last_read(sections, drafters),
        drafters=sections,
        configs=configs,
        acceptance=latest_acceptance,
        acceptance_runs=acceptance,
        benchmarks=rows,
        comparison=comparisons,
        head_to_head=head_to_head,
        crossover=crossover,
        recommendation=recommendation,
        pareto=pareto_points(rows, configs),
        shapes=compare_shapes(rows, configs),
        tuning=tuning_section(configs, rows),
        failures=failures,
        timing=timing,
        left_running=running,
        unresolved_text=list(final.unresolved) if final else [],
        flags=flags,
        critique=answer_critique(rows, comparisons, latest_acceptance, recommendation),
        notes=notes,
        # Goodput (goodput.py) and every request (requests.py, for requests.jsonl).
        goodput_targets=goodput_targets_used(evidence, notes),
        requests=request_rows(evidence, timeline),
    )


def _with_payoff(section: AcceptanceSection, comparisons: Sequence[LevelComparison]) -> AcceptanceSection:
    """The section, its warning extended when the measured acceptance does not pay off on this host."""
    slower = payoff_warning(section, comparisons)
    if slower is None:
        return section
    return section.model_copy(update={"warning": f"{section.warning} {slower}" if section.warning else slower})
