"""The terminal table: one row per scenario run, pass/fail per grader, steps, time and cost."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .results import EvalReport

# Short column heads, so that fourteen graders fit a terminal.
SHORT = {
    "outcome": "outcome",
    "plan_first": "plan",
    "todos_closed": "todos",
    "disk_checked_before_download": "disk",
    "nothing_unallowed_deleted": "deletes",
    "no_question_asked": "no-ask",
    "numbers_match_truth": "numbers",
    "best_baseline_per_concurrency": "baseline",
    "algorithm_chosen": "algo",
    "settings_tried": "tuned",
    "recommendation_follows_measurements": "advice",
    "no_repeated_failure": "no-loop",
    "budgets_respected": "budget",
    "host_left_clean": "clean",
}


def render(report: EvalReport, console: Console) -> None:
    graders = list(dict.fromkeys(g for r in report.results for g in r.graders))
    table = Table(title=f"specops eval: {report.policy}", show_lines=False)
    # The scenario's name whole: with fourteen graders a narrow terminal would otherwise fold it.
    table.add_column("scenario", no_wrap=True, min_width=max((len(r.run) for r in report.results), default=8))
    for g in graders:
        table.add_column(SHORT.get(g, g), justify="center")
    table.add_column("steps", justify="right")
    table.add_column("time", justify="right")
    table.add_column("cost", justify="right")
    for r in report.results:
        marks = [
            "-" if g not in r.graders else "[green]ok[/]" if r.graders[g].passed else "[red]FAIL[/]" for g in graders
        ]
        cost = "-" if r.cost_usd is None else f"${r.cost_usd:.3f}"
        table.add_row(r.run, *marks, str(r.steps), f"{r.duration_s:.0f}s", cost)
    console.print(table)
    for r in report.results:
        for g in r.failed_graders:
            console.print(f"[red]{r.run} / {g}[/]: {r.graders[g].reason}")
    passed = sum(r.passed for r in report.results)
    console.print(
        f"{passed}/{len(report.results)} scenario runs pass every grader ({report.pass_rate:.0%}; bar "
        f"{report.pass_bar:.0%}) in {report.wall_s:.0f} s"
    )
    if report.baseline is not None:
        b = report.baseline
        console.print(
            f"against {b.baseline}: pass rate {b.pass_rate_before:.0%} -> {b.pass_rate_after:.0%}; "
            f"{len(b.regressions)} regression(s), {len(b.fixed)} fixed"
        )
        for reg in b.regressions:
            console.print(f"[red]regression[/] {reg.scenario} / {reg.grader}: {reg.now}")
