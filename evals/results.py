"""The eval report: per scenario run, each grader's verdict, steps, time and cost; the pass bar; the baseline diff.

Written as JSON (`eval-report.json`, this schema) so that a later run can compare
against it (`--baseline FILE`) and CI can keep it as an artifact.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

REPORT_FILE = "eval-report.json"
JUNIT_FILE = "junit.xml"


class GraderResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    reason: str


class ScenarioResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str
    run: str = Field(description="The run's folder name under runs/ (scenario, with -rN for repeats)")
    why: str
    graders: dict[str, GraderResult]
    run_status: str | None
    steps: int = Field(description="Tool calls the agent made")
    duration_s: float
    cost_usd: float | None
    run_dir: str

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.graders.values())

    @property
    def failed_graders(self) -> list[str]:
        return [name for name, g in self.graders.items() if not g.passed]


class Regression(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario: str
    grader: str
    now: str = Field(description="The reason it fails now")


class BaselineDiff(BaseModel):
    model_config = ConfigDict(extra="forbid")

    baseline: str
    regressions: list[Regression] = Field(description="Grader verdicts that passed in the baseline and fail now")
    fixed: list[str] = Field(description="scenario/grader that failed in the baseline and pass now")
    pass_rate_before: float
    pass_rate_after: float


class EvalReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: str = "1"
    policy: str
    pass_bar: float = Field(ge=0, le=1, description="Share of scenario runs that must pass every grader")
    results: list[ScenarioResult]
    wall_s: float
    baseline: BaselineDiff | None = None

    @property
    def pass_rate(self) -> float:
        return sum(r.passed for r in self.results) / len(self.results) if self.results else 0.0

    @property
    def passed(self) -> bool:
        return (
            bool(self.results) and self.pass_rate >= self.pass_bar and not (self.baseline and self.baseline.regressions)
        )

    def write(self, out_dir: Path) -> Path:
        path = out_dir / REPORT_FILE
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path


def compare_with_baseline(report: EvalReport, baseline_file: Path) -> BaselineDiff:
    """Which verdicts went from pass to fail (regressions) and back (fixed), scenario by scenario."""
    before = EvalReport.model_validate_json(baseline_file.read_text(encoding="utf-8"))
    old = {(r.scenario, g): v.passed for r in before.results for g, v in r.graders.items()}
    regressions, fixed = [], []
    for result in report.results:
        for grader, verdict in result.graders.items():
            was = old.get((result.scenario, grader))
            if was is True and not verdict.passed:
                regressions.append(Regression(scenario=result.scenario, grader=grader, now=verdict.reason))
            elif was is False and verdict.passed:
                fixed.append(f"{result.scenario}/{grader}")
    return BaselineDiff(
        baseline=str(baseline_file),
        regressions=regressions,
        fixed=sorted(set(fixed)),
        pass_rate_before=before.pass_rate,
        pass_rate_after=report.pass_rate,
    )
