"""No question was asked in non-interactive mode: no ask tool call, no approval answered by a person."""

from __future__ import annotations

from dataclasses import dataclass

from specops.agent.questions import ASK_TOOL

from ..evidence import RunEvidence
from ._base import Grader, Verdict

# Who may answer an approval without a person: a flag, a file given up front, or the non-interactive refusal.
UNATTENDED = ("--allow-delete", "non-interactive default", "answers file")


@dataclass
class NoQuestionAsked(Grader):
    name = "no_question_asked"

    def grade(self, evidence: RunEvidence) -> Verdict:
        asked = evidence.steps_of(ASK_TOOL)
        if asked:
            return Verdict.fail(f"{len(asked)} question(s) asked with {ASK_TOOL}")
        start = evidence.run_start
        if start is not None and start.config.get("interactive"):
            return Verdict.fail("the run was interactive")
        people = [a for a in evidence.approvals if a.by not in UNATTENDED]
        if people:
            return Verdict.fail(f"approval answered by {people[0].by}: {people[0].asked}")
        return Verdict.ok()
