"""The optional LLM judge of the report's quality (pydantic-evals' judge_output), only when a model is configured.

It reads report.md against a rubric drawn from the seed's critique. It is not one
of the deterministic graders: it runs only with `specops eval --judge MODEL`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic_evals.evaluators import EvaluationReason, EvaluatorContext
from pydantic_evals.evaluators.llm_as_a_judge import judge_output

from ..evidence import RunEvidence
from ._base import Grader

RUBRIC = (
    "The report of a speculative-decoding deployment run. Pass if it states plainly what was done and found; "
    "compares the drafter with the best autoregressive configuration at each concurrency; states the acceptance "
    "method; recommends what to serve for which load; and says what failed and how it was handled. When the run "
    "stopped early, pass if it explains why and what the user can do."
)


@dataclass
class ReportJudge(Grader):
    model: str | None = None
    name = "llm_judge"

    async def evaluate(self, ctx: EvaluatorContext) -> EvaluationReason:  # type: ignore[override]
        evidence: RunEvidence = ctx.output
        if evidence.run.harness_error:  # as every grader: a broken harness never reads as a pass
            return EvaluationReason(value=False, reason=self.check(evidence).reason)
        report_md = Path(evidence.run.run_dir) / "report.md"
        text = report_md.read_text(encoding="utf-8") if report_md.exists() else evidence.final_text
        verdict = await judge_output(text, RUBRIC, model=self.model)
        return EvaluationReason(value=verdict.pass_, reason=verdict.reason)
