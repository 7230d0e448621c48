"""The compare tool answers from the run's transcript what the report will say: the same levels, verdicts, crossover."""

from __future__ import annotations

import json

from specops.agent.compare import compare_run, compare_view
from specops.agent.report import build_report

from .test_report_scenario import HONEST_ANSWER, seed_run


def _write(events, path):
    path.write_text("".join(json.dumps(e.model_dump(mode="json")) + "\n" for e in events), encoding="utf-8")
    return path


def test_compare_gives_the_reports_comparison_and_crossover(tmp_path):
    events = seed_run().events
    compared = compare_run(_write(events, tmp_path / "events.jsonl"))
    report = build_report(events, HONEST_ANSWER, status="completed")
    assert compared.levels == report.comparison and compared.crossover == report.crossover
    assert {"tp8", "tp8-ep4"} <= set(compared.configurations)
    verdicts = {c.concurrency: c.winner for c in compared.levels}
    assert verdicts[1] == "speculative" and "autoregressive" in verdicts.values()


def test_the_view_is_a_row_per_level_with_the_verdict(tmp_path):
    result = compare_run(_write(seed_run().events, tmp_path / "events.jsonl"))
    view = compare_view(result)
    assert [row[0] for row in view["levels"]] == [c.concurrency for c in result.levels]
    first = dict(zip(view["columns"], view["levels"][0], strict=False))
    assert first["verdict"] == result.levels[0].winner and first["speedup"] == result.levels[0].speedup
    assert view["crossover"] == result.crossover.statement and "interval includes 1" in view["tie_rule"]


def test_before_any_benchmark_there_is_nothing_to_compare(tmp_path):
    events = seed_run().events
    first_benchmark = next(i for i, e in enumerate(events) if getattr(e, "tool", None) == "benchmark")
    result = compare_run(_write(events[:first_benchmark], tmp_path / "events.jsonl"))
    assert result.levels == [] and result.crossover.kind == "unknown"
