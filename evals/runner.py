"""The eval runner: scenarios as a pydantic-evals Dataset, each run in its own process, graded, reported.

    report = run_eval(load_scenarios("*"), out_dir=Path("eval-out"), jobs=2)
    report = regrade(Path("eval-out"))          # the saved runs, graded again; nothing re-run

Each scenario run executes `python -m specops.evals.execute RUN_DIR POLICY` (the
Scenario on stdin), so runs proceed side by side on separate cores without
sharing logging or worlds; the Dataset's max_concurrency bounds how many. The
graders then read only what the run left in RUN_DIR, which is why re-grading
needs nothing else.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_evals import Case, Dataset

from .evidence import RunEvidence
from .execute import EVAL_RUN
from .graders import Grader, all_graders
from .results import EvalReport, GraderResult, ScenarioResult, compare_with_baseline
from .scenario import Scenario, as_dataset

RUNS = "runs"
# A scenario's own wall budget plus the child's start-up and the world's set-up and teardown.
CHILD_SLACK_S = 60.0


class EvalHarnessError(RuntimeError):
    """The eval could not run (no scenarios, a child that died without a record); says which and why."""


def default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def policy_env(base_url: str | None = None, api_key_env: str | None = None) -> dict[str, str] | None:
    """The environment of a scenario's child for an `openai-chat:` policy's server: the child's run reads the base URL
    from $OPENAI_BASE_URL and the key from $OPENAI_API_KEY (agent/policies/openai_chat.py); None: this process's own."""
    if base_url is None and api_key_env is None:
        return None
    env = dict(os.environ)
    if base_url is not None:
        env["OPENAI_BASE_URL"] = base_url
    if api_key_env is not None:
        if api_key_env not in os.environ:
            raise EvalHarnessError(f"--api-key-env {api_key_env}: no such variable in the environment")
        env["OPENAI_API_KEY"] = os.environ[api_key_env]
    return env


async def _execute_in_child(
    scenario: Scenario, run_dir: Path, policy: str, env: dict[str, str] | None = None
) -> RunEvidence:
    run_dir.mkdir(parents=True, exist_ok=True)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "specops.evals.execute",
        str(run_dir),
        policy,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    try:
        out, _ = await asyncio.wait_for(
            proc.communicate(scenario.model_dump_json().encode()), scenario.run.max_wall_s + CHILD_SLACK_S
        )
    except TimeoutError:
        proc.kill()
        await proc.wait()
        out = b"killed: the scenario ran past its wall budget plus slack"
    (run_dir / "execute.log").write_bytes(out or b"")
    if not (run_dir / EVAL_RUN).exists():
        raise EvalHarnessError(
            f"scenario {scenario.name}: the child exited {proc.returncode} without {EVAL_RUN}; "
            f"its output is in {run_dir / 'execute.log'}: {(out or b'')[-800:].decode(errors='replace')}"
        )
    return RunEvidence.load(run_dir)


def _result(case: Any, graders: list[Grader]) -> ScenarioResult:
    evidence: RunEvidence = case.output
    verdicts = {name: GraderResult(passed=bool(r.value), reason=r.reason or "") for name, r in case.assertions.items()}
    for failure in case.evaluator_failures:  # a grader that raised fails, with its error
        verdicts[failure.name] = GraderResult(passed=False, reason=f"grader error: {failure.error_message}")
    ordered = {g.name: verdicts[g.name] for g in graders if g.name in verdicts}
    ordered.update({k: v for k, v in verdicts.items() if k not in ordered})
    end = evidence.run_end
    return ScenarioResult(
        scenario=evidence.scenario.name,
        run=Path(evidence.run.run_dir).name,
        why=evidence.scenario.why,
        graders=ordered,
        run_status=evidence.run.run_status,
        steps=len(evidence.steps),
        duration_s=evidence.run.duration_s,
        cost_usd=end.cost_usd if end is not None else None,
        run_dir=evidence.run.run_dir,
    )


def _report(
    dataset_report: Any, graders: list[Grader], policy: str, pass_bar: float, wall_s: float, baseline: Path | None
) -> EvalReport:
    results = sorted((_result(c, graders) for c in dataset_report.cases), key=lambda r: r.run)
    failed = getattr(dataset_report, "failures", [])
    if failed:
        raise EvalHarnessError("; ".join(f"{f.name}: {f.error_message}" for f in failed))
    report = EvalReport(policy=policy, pass_bar=pass_bar, results=results, wall_s=round(wall_s, 2))
    if baseline is not None:
        report.baseline = compare_with_baseline(report, baseline)
    return report


def expected_cost(scenario: Scenario) -> float:
    """A rough relative run time, so that the longest scenarios start first and two jobs finish together: the
    benchmarks a measuring scenario runs (layouts x levels), more over SSH; early-stopping ones cost little."""
    if not scenario.expect.measures:
        return 1.0
    p = scenario.policy
    layouts = (p.ar_layouts or 8) + p.spec_layouts + (2 if p.tune else 0)  # tuning measures about two settings
    return 10.0 + layouts * len(p.levels) * (1.5 if scenario.host.over_ssh else 1.0)


def _clear_earlier_runs(runs_dir: Path) -> None:
    """An eval writes a fresh runs/ folder: the runs of an earlier eval into the same --out are removed first
    (so that a re-grade of the folder grades this eval only). Anything there that is not a scenario run is
    left alone and stops the eval, rather than being deleted."""
    if not runs_dir.is_dir():
        return
    ours = (EVAL_RUN, "execute.log", "transcript.jsonl")  # a run cut off mid-way has only its transcript
    foreign = [p.name for p in runs_dir.iterdir() if not (p.is_dir() and any((p / f).exists() for f in ours))]
    if foreign:
        raise EvalHarnessError(
            f"{runs_dir} holds things that are not scenario runs ({', '.join(sorted(foreign)[:5])}): "
            "choose another --out"
        )
    shutil.rmtree(runs_dir)


def run_eval(
    scenarios: list[Scenario],
    *,
    out_dir: Path,
    model: str | None = None,
    repeat: int = 1,
    jobs: int | None = None,
    pass_bar: float = 1.0,
    baseline: Path | None = None,
    extra_graders: Sequence[Grader] = (),
    progress: bool = False,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> EvalReport:
    """Run every scenario `repeat` times, `jobs` at once, and grade them; runs land in out_dir/runs/.

    `base_url`, `api_key_env`: where an `openai-chat:` policy's server is and which variable holds its key (as
    `specops run --base-url --api-key-env`); each scenario's run gets them.
    """
    if not scenarios:
        raise EvalHarnessError("no scenarios to run")
    env = policy_env(base_url, api_key_env)
    graders = [*all_graders(), *extra_graders]
    runs_dir = out_dir / RUNS
    _clear_earlier_runs(runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    counters = {s.name: itertools.count(1) for s in scenarios}

    async def task(scenario: Scenario) -> RunEvidence:
        n = next(counters[scenario.name])
        run_dir = runs_dir / (scenario.name if repeat == 1 else f"{scenario.name}-r{n}")
        return await _execute_in_child(scenario, run_dir, scenario.policy_spec(model), env)

    dataset = as_dataset(sorted(scenarios, key=expected_cost, reverse=True), graders)
    start = time.monotonic()
    result = dataset.evaluate_sync(task, max_concurrency=jobs or default_jobs(), repeat=repeat, progress=progress)
    policy = model or "playbook (each scenario's settings)"
    return _report(result, graders, policy, pass_bar, time.monotonic() - start, baseline)


def regrade(
    out_dir: Path, *, pass_bar: float = 1.0, baseline: Path | None = None, extra_graders: Sequence[Grader] = ()
) -> EvalReport:
    """Grade the runs saved under out_dir/runs (or out_dir itself) again, with today's graders; nothing is re-run."""
    runs_dir = out_dir / RUNS if (out_dir / RUNS).is_dir() else out_dir
    run_dirs = sorted(p.parent for p in runs_dir.glob(f"*/{EVAL_RUN}"))
    if not run_dirs:
        raise EvalHarnessError(f"no saved scenario runs under {runs_dir} (looked for */{EVAL_RUN})")
    graders = [*all_graders(), *extra_graders]
    # Here a case's input is the saved run's folder: a repeated scenario has one case per run.
    cases = [Case(name=d.name, inputs=str(d)) for d in run_dirs]

    async def task(run_dir: str) -> RunEvidence:
        return RunEvidence.load(Path(run_dir))

    dataset: Dataset = Dataset(name="specops-agent-regrade", cases=cases, evaluators=graders)
    start = time.monotonic()
    result = dataset.evaluate_sync(task, max_concurrency=4, progress=False)
    policies = sorted({case.output.run.policy for case in result.cases})  # the records just loaded, not read again
    return _report(result, graders, ", ".join(policies), pass_bar, time.monotonic() - start, baseline)
