"""The terminal table: a row that lacks a grader (a grader added since, or one that never ran) shows '-' there."""

from __future__ import annotations

from rich.console import Console

from specops.evals.results import EvalReport, GraderResult, ScenarioResult
from specops.evals.table import render


def _result(run: str, graders: dict[str, bool]) -> ScenarioResult:
    return ScenarioResult(
        scenario=run,
        run=run,
        why="-",
        graders={g: GraderResult(passed=ok, reason=f"{g} said so") for g, ok in graders.items()},
        run_status="completed",
        steps=3,
        duration_s=1.0,
        cost_usd=None,
        run_dir=f"runs/{run}",
    )


def test_a_row_missing_a_grader_shows_a_dash_and_the_others_still_render():
    report = EvalReport(
        policy="playbook",
        pass_bar=1.0,
        wall_s=2.0,
        results=[
            _result("full", {"outcome": True, "plan_first": False}),
            _result("partial", {"outcome": True}),  # no plan_first verdict at all
        ],
    )
    console = Console(record=True, width=200, color_system=None)
    render(report, console)
    text = console.export_text()
    rows = {
        line.split()[1]: line.split() for line in text.splitlines() if line.strip().startswith(("│ full", "│ partial"))
    }
    # Columns: scenario, outcome, plan, steps, time, cost (between box characters).
    cells = {run: [c for c in row if c != "│"] for run, row in rows.items()}
    assert cells["full"][:3] == ["full", "ok", "FAIL"]
    assert cells["partial"][:3] == ["partial", "ok", "-"]
    assert "full / plan_first" in text and "partial / plan_first" not in text
