"""The graders' common shape: a deterministic pydantic-evals Evaluator over one run's evidence.

Each grader implements `grade(evidence) -> Verdict`; a run whose eval harness
failed (the world did not start, say) fails every grader with that cause, so a
broken harness can never read as a pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pydantic_evals.evaluators import EvaluationReason, Evaluator, EvaluatorContext

from ..evidence import RunEvidence


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str

    @classmethod
    def ok(cls, reason: str = "holds") -> Verdict:
        return cls(True, reason)

    @classmethod
    def fail(cls, reason: str) -> Verdict:
        return cls(False, reason)


@dataclass
class Grader(Evaluator):
    """Subclasses set `name` (the column in tables, JSON and JUnit) and implement grade()."""

    name: ClassVar[str]

    def grade(self, evidence: RunEvidence) -> Verdict:  # pragma: no cover - abstract
        raise NotImplementedError

    def get_default_evaluation_name(self) -> str:
        return self.name

    def evaluate(self, ctx: EvaluatorContext) -> EvaluationReason:
        verdict = self.check(ctx.output)
        return EvaluationReason(value=verdict.passed, reason=verdict.reason)

    def check(self, evidence: RunEvidence) -> Verdict:
        if evidence.run.harness_error:
            return Verdict.fail(
                f"the eval harness failed, nothing to grade: {evidence.run.harness_error.splitlines()[0]}"
            )
        return self.grade(evidence)
