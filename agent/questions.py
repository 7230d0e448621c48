"""--ask-once: one round of questions before the first action, answered on the terminal or from a file.

Runs are non-interactive by default and the model is not offered this tool at
all. With --ask-once it gets `ask_user` until it has asked once or has used any
other tool (the first action): the user in the seed allowed "at most one round
of questions right now before performing actions". Answers come from the
terminal, or from `--answers FILE` (JSON or YAML: a list of answers in order,
or a mapping from question to answer). Each question is an approval event.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import RunContext, Tool

from specops.tools.errors import ToolErrorRecord
from specops.transcripts import ApprovalEvent, ToolCallEvent, ToolResultEvent

from .deps import AgentDeps
from .toolset import parse_args

ASK_TOOL = "ask_user"
NO_ANSWER = "(no answer: decide yourself and say what you decided)"
Ask = Callable[[str], str]


class AskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[str] = Field(min_length=1, max_length=10, description="All your questions, asked once together")


class Answers(BaseModel):
    answers: dict[str, str]


def load_answers(path: Path) -> list[str] | dict[str, str]:
    """An answers file: a list (answers in question order) or a mapping question -> answer."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if isinstance(data, list):
        return [str(a) for a in data]
    if isinstance(data, dict):
        return {str(k): str(v) for k, v in data.items()}
    raise ValueError(f"{path}: expected a list of answers or a mapping question -> answer")


@dataclass
class QuestionRound:
    """The one round: open until used or until the first action."""

    ask: Ask | None = None  # the terminal
    answers: list[str] | dict[str, str] | None = None  # or a file
    used: bool = False

    def answer(self, questions: list[str]) -> dict[str, str]:
        out = {}
        for index, question in enumerate(questions):
            if isinstance(self.answers, list):
                out[question] = self.answers[index] if index < len(self.answers) else NO_ANSWER
            elif isinstance(self.answers, dict):
                out[question] = self.answers.get(question, NO_ANSWER)
            elif self.ask is not None:
                out[question] = self.ask(question).strip() or NO_ANSWER
            else:
                out[question] = NO_ANSWER
        return out

    @property
    def source(self) -> str:
        return "answers file" if self.answers is not None else "terminal" if self.ask is not None else "nobody"


def ask_tool(round_: QuestionRound) -> Tool[AgentDeps]:
    async def ask_user(ctx: RunContext[AgentDeps], **raw: Any) -> dict[str, Any]:
        deps = ctx.deps
        call_id = ctx.tool_call_id or ASK_TOOL
        args = parse_args(deps, ctx, ASK_TOOL, AskArgs, raw)
        deps.recorder.record(ToolCallEvent, call_id=call_id, tool=ASK_TOOL, args=raw)
        if round_.used or deps.acted:
            error = ToolErrorRecord(
                kind="questions_closed",
                what="the one round of questions is over (it is allowed only once, before the first action)",
                remedy="decide yourself and say in the final answer what you decided and why",
            ).model_dump()
            deps.recorder.record(ToolResultEvent, call_id=call_id, tool=ASK_TOOL, ok=False, error=error,
                                 duration_s=0.0, host=deps.host_spec)  # fmt: skip
            return {"ok": False, "error": error}
        round_.used = True
        answers = round_.answer(args.questions)
        for question, answer in answers.items():
            deps.recorder.record(ApprovalEvent, asked=question, answer=answer, approved=None, by=round_.source)
        result = Answers(answers=answers).model_dump()
        deps.recorder.record(ToolResultEvent, call_id=call_id, tool=ASK_TOOL, ok=True, result=result,
                             duration_s=0.0, host=deps.host_spec)  # fmt: skip
        return {"ok": True, "result": result}

    return Tool.from_schema(
        ask_user, name=ASK_TOOL, json_schema=AskArgs.model_json_schema(), takes_ctx=True,
        description="Ask the user your questions, all at once; allowed once, before any other action.",
    )  # fmt: skip
