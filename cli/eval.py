"""`specops eval`: run the agent eval scenarios (or re-grade saved runs), print the table, write JSON and JUnit.

Exit status: 0 when the pass rate reaches --pass-bar and nothing regressed
against --baseline; 1 below the bar or on a regression; 2 when the eval itself
could not run (no scenario matched, a broken scenario file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from ..evals.graders.judge import ReportJudge
from ..evals.junit import write_junit
from ..evals.results import JUNIT_FILE, EvalReport
from ..evals.runner import EvalHarnessError, default_jobs, run_eval
from ..evals.runner import regrade as regrade_runs
from ..evals.scenario import SCENARIO_DIR, ScenarioError, load_scenarios
from ..evals.table import render
from ..tools.inputs import one_line
from .streams import RedactingConsole, fail


def check_baseline(baseline: Path) -> None:
    """--baseline is read after every scenario ran: a file that is no eval report is refused before, in one line."""
    try:
        EvalReport.model_validate_json(baseline.read_bytes())
    except OSError as exc:
        raise fail(f"--baseline: cannot read {baseline}: {exc.strerror or exc}", 2) from None
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise fail(
            f"--baseline: {baseline} is not an eval-report.json: {where + ': ' if where else ''}{one_line(problem['msg'])}",
            2,
        ) from None


def eval_command(
    model: Annotated[
        str | None, typer.Option(help="Policy for every scenario (default: the playbook with each scenario's settings)")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible base URL for an openai-chat: --model (default $OPENAI_BASE_URL)"),
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding its API key (default OPENAI_API_KEY)")
    ] = None,
    scenario: Annotated[str, typer.Option(help="Glob(s) of scenario names, comma-separated")] = "*",
    scenario_dir: Annotated[
        Path, typer.Option(help="Folder of scenario YAML files (default: the built-in ones)")
    ] = SCENARIO_DIR,
    repeat: Annotated[int, typer.Option(min=1, help="Runs per scenario")] = 1,
    out: Annotated[Path, typer.Option(help="Where runs, eval-report.json and junit.xml go")] = Path("eval-out"),
    baseline: Annotated[Path | None, typer.Option(help="A saved eval-report.json to compare with")] = None,
    regrade: Annotated[
        Path | None, typer.Option(help="Re-grade the saved runs in this eval output folder; run nothing")
    ] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Scenarios at once")] = default_jobs(),
    pass_bar: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of scenario runs that must pass every grader")
    ] = 1.0,
    judge: Annotated[
        str | None, typer.Option(help="Model for the optional LLM judge of report quality (pydantic-ai model name)")
    ] = None,
) -> None:
    """Run agent eval scenarios with injected faults; grade transcripts and host state; gate on the pass bar."""
    if baseline is not None:
        check_baseline(baseline)
    width = max(Console().width, 150)  # a CI log is not a terminal: keep the table whole
    console = RedactingConsole(width=width)  # the table and what was written, on stdout; progress and errors on stderr
    extra = [ReportJudge(model=judge)] if judge else []
    try:
        if regrade is not None:
            report = regrade_runs(regrade, pass_bar=pass_bar, baseline=baseline, extra_graders=extra)
            out = regrade
        else:
            scenarios = load_scenarios(scenario, scenario_dir)
            RedactingConsole(stderr=True, width=width).print(
                f"running {len(scenarios)} scenario(s) x {repeat}, {jobs} at once, into {out}"
            )
            report = run_eval(
                scenarios,
                out_dir=out,
                model=model,
                repeat=repeat,
                jobs=jobs,
                pass_bar=pass_bar,
                baseline=baseline,
                extra_graders=extra,
                base_url=base_url,
                api_key_env=api_key_env,
            )
    except (ScenarioError, EvalHarnessError) as exc:
        raise fail(one_line(str(exc)), 2, label="eval could not run:", highlight=True) from None
    out.mkdir(parents=True, exist_ok=True)
    json_path = report.write(out)
    junit_path = write_junit(report, out / JUNIT_FILE)
    render(report, console)
    console.print(f"wrote {json_path} and {junit_path}")
    raise typer.Exit(0 if report.passed else 1)
