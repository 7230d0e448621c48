"""--ask-once: one round of questions before the first change, answered on the terminal or from a file.

Runs are non-interactive by default and the model is not offered this tool at
all. With --ask-once it gets `ask_user` until it has asked once or has changed
anything on the host (the first change: a tool that mutates; read-only checks
such as host_facts, check_disk and list_freeable come first freely, so the
questions can be informed): the user in the seed allowed "at most one round of
questions right now before performing actions".

The round is also the one place, besides `--allow-delete`, where the user
approves deleting what specops did not create (agent/approval.py): `delete`
names candidates (list_freeable ids, cache:ORG/NAME, a directory); each is asked
as a yes/no question that says what it is and what it frees, figured by the
tool (not the model), and a yes is an approval free_space honours.

Answers come from the terminal, or from `--answers FILE` (JSON or YAML: a list
of answers in order, the questions' first and then the deletions', or a mapping
from question, or from a deletion's spec, to answer). Each question is an
approval event.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_ai import RunContext, Tool
from pydantic_ai.messages import ToolReturn

from specops.tools.context import ToolContext
from specops.tools.disk import human_bytes
from specops.tools.errors import ErrorKind, ToolError, ToolErrorRecord
from specops.tools.hosts import HostError
from specops.tools.space import FreeableItem, approval_covers, cache_expected, gather_freeable
from specops.transcripts import ApprovalEvent, ToolCallEvent, ToolResultEvent

from .answers import ASK_TOOL as ASK_TOOL  # the ask tool's name, read with the tool (run.py, the evals)
from .answers import Answers, DeletionAnswer
from .approval import AskYesNo, check_delete_spec
from .deps import AgentDeps
from .tool_answer import answer_error, answer_ok
from .tool_schema import parameters_schema
from .toolset import parse_args

NO_ANSWER = "(no answer: decide yourself and say what you decided)"
YES = ("y", "yes", "ok", "approve", "approved", "allow", "delete")
Ask = Callable[[str], str]


class AskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[str] = Field(
        default_factory=list, max_length=10, description="All your questions, asked once together"
    )
    delete: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="What you ask the user's approval to delete: list_freeable ids, cache:ORG/NAME (a cached repo's "
        "revisions) or a directory. Each is asked as a yes/no question with what it frees; a yes lets free_space "
        "delete it. Only here or by --allow-delete can the user approve deleting what specops did not create",
    )

    @field_validator("delete")
    @classmethod
    def _specs(cls, specs: list[str]) -> list[str]:
        return [check_delete_spec(s) for s in specs]

    @model_validator(mode="after")
    def _something(self) -> AskArgs:
        if not self.questions and not self.delete:
            raise ValueError("ask at least one question or one deletion")
        return self


def _is_yes(answer: str) -> bool:
    words = answer.strip().lower().replace(",", " ").replace(".", " ").replace("!", " ").split()
    return bool(words) and words[0] in YES


def deletion_questions(
    ctx: ToolContext, specs: list[str], created_paths: list[str], goal_needs: list[str] | None = None
) -> dict[str, str] | str:
    """spec -> the yes/no question the user sees (what it is, what it frees, from the host), or why one cannot be asked."""
    listing = gather_freeable(ctx, created_paths, goal_needs=goal_needs)
    out: dict[str, str] = {}
    for spec in specs:
        covered = [i for i in listing.items if _covers(spec, i, ctx)]
        asked = [i for i in covered if i.safety == "needs_approval"]
        if not asked:
            why = (
                "it is specops' own: free_space may delete it without asking"
                if any(i.safety == "safe" for i in covered)
                else f"{next(i.reason for i in covered)}: it cannot be deleted"
                if covered
                else "it matches no list_freeable candidate"
            )
            return f"{spec}: {why}"
        frees = sum(i.size_bytes for i in asked if i.kind == "directory") + cache_expected(ctx, asked)
        mounts = ", ".join(dict.fromkeys(i.mount_point for i in asked))
        out[spec] = (
            f"May specops delete {_what(spec, asked)}? Deleting it frees {human_bytes(frees)} on {mounts}. "
            f"specops did not create it. [{spec}] (yes/no)"
        )
    return out


def _covers(spec: str, item: FreeableItem, ctx: ToolContext) -> bool:
    if spec == item.id:
        return True
    return approval_covers(spec, ctx, path=item.path, repo_id=item.repo_id, revision=item.revision, refs=item.refs)


def _what(spec: str, items: list[FreeableItem]) -> str:
    revisions = [i for i in items if i.kind == "cache_revision"]
    if revisions and len(revisions) == len(items):
        repos = sorted({str(i.repo_id) for i in revisions})
        return f"the Hugging Face cache of {', '.join(repos)} ({len(revisions)} revision(s), someone's download)"
    if len(items) == 1:
        return f"{items[0].path} ({items[0].reason.split(';')[0]})"
    return f"{len(items)} items under {spec.removeprefix('dir:')}"


class AnswersInvalid(ValueError):
    """The answers file cannot be read as answers; the message (one line) names the file and what is wrong."""


def load_answers(path: Path) -> list[str] | dict[str, str]:
    """An answers file: a list (answers in question order) or a mapping question -> answer. AnswersInvalid else."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnswersInvalid(f"answers file {path} does not exist") from None
    except IsADirectoryError:
        raise AnswersInvalid(f"answers file {path} is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise AnswersInvalid(f"answers file {path} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise AnswersInvalid(f"cannot read answers file {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise AnswersInvalid(
            f"answers file {path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "unreadable"
        raise AnswersInvalid(
            f"answers file {path} is not valid YAML: {' '.join(str(problem).split())}{where}"
        ) from None
    if isinstance(data, list):
        return [str(a) for a in data]
    if isinstance(data, dict):
        return {str(k): str(v) for k, v in data.items()}
    raise AnswersInvalid(
        f"answers file {path} holds {type(data).__name__ if data is not None else 'nothing'}: "
        "expected a list of answers or a mapping question -> answer"
    )


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

    def approve(self, question: str, spec: str, position: int, yes_no: AskYesNo | None) -> DeletionAnswer:
        """A deletion's yes/no: from the file (by position after the questions, by question or by spec), else the
        terminal; no answer is a no."""
        if isinstance(self.answers, list):
            answer = self.answers[position] if position < len(self.answers) else NO_ANSWER
        elif isinstance(self.answers, dict):
            answer = self.answers.get(question, self.answers.get(spec, NO_ANSWER))
        elif yes_no is not None:
            answer = "yes" if yes_no(question) else "no"
        elif self.ask is not None:
            answer = self.ask(question).strip() or NO_ANSWER
        else:
            answer = NO_ANSWER
        return DeletionAnswer(question=question, answer=answer, approved=answer != NO_ANSWER and _is_yes(answer))

    @property
    def source(self) -> str:
        return "answers file" if self.answers is not None else "terminal" if self.ask is not None else "nobody"


def ask_tool(round_: QuestionRound) -> Tool[AgentDeps]:
    async def ask_user(ctx: RunContext[AgentDeps], **raw: Any) -> ToolReturn:
        deps = ctx.deps
        call_id = ctx.tool_call_id or ASK_TOOL
        args = parse_args(deps, ctx, ASK_TOOL, AskArgs, raw)
        deps.recorder.record(ToolCallEvent, call_id=call_id, tool=ASK_TOOL, args=raw)

        def refuse(kind: ErrorKind, what: str, remedy: str) -> ToolReturn:
            error = ToolErrorRecord(kind=kind, what=what, remedy=remedy).model_dump()
            deps.recorder.record(
                ToolResultEvent,
                call_id=call_id,
                tool=ASK_TOOL,
                ok=False,
                error=error,
                duration_s=0.0,
                host=deps.host_spec,
            )
            return answer_error(error)

        if round_.used or deps.approvals.changed:
            return refuse(
                ErrorKind.QUESTIONS_CLOSED,
                "the one round of questions is over (it is allowed only once, before the first change)",
                "decide yourself and say in the final answer what you decided and why",
            )
        questions: dict[str, str] = {}
        if args.delete:
            created, needs = sorted(deps.approvals.created_paths), sorted(deps.approvals.goal_needs)
            try:
                found = await anyio.to_thread.run_sync(
                    deletion_questions, deps.tool_context, list(args.delete), created, needs
                )
            except (
                ToolError,
                HostError,
                OSError,
            ) as exc:  # the host could not say what they free: nothing is asked, the round stays open
                return refuse(
                    ErrorKind.UNEXPECTED_ERROR,
                    f"could not figure what the deletions free: {type(exc).__name__}: {exc}",
                    "ask again, or ask without `delete`",
                )
            if isinstance(found, str):  # the round stays open: nothing was asked
                return refuse(
                    ErrorKind.INVALID_INPUT,
                    f"cannot ask to delete {found}",
                    "call list_freeable and name its needs_approval ids, or cache:ORG/NAME, in `delete`",
                )
            questions = found
        round_.used = True
        answers = round_.answer(args.questions)
        for question, answer in answers.items():
            deps.recorder.record(ApprovalEvent, asked=question, answer=answer, approved=None, by=round_.source)
        deletions = {}
        for index, (spec, question) in enumerate(questions.items()):
            reply = round_.approve(question, spec, len(args.questions) + index, deps.approvals.ask)
            by = round_.source if round_.answers is not None or deps.approvals.ask is None else "terminal"
            if reply.approved:
                deps.approvals.grant(spec, by=by)
            deps.recorder.record(ApprovalEvent, asked=question, answer=reply.answer, approved=reply.approved, by=by)
            deletions[spec] = reply
        result = Answers(answers=answers, deletions=deletions).model_dump()
        deps.recorder.record(
            ToolResultEvent, call_id=call_id, tool=ASK_TOOL, ok=True, result=result, duration_s=0.0, host=deps.host_spec
        )
        return answer_ok(result, Answers, None)

    return Tool.from_schema(
        ask_user,
        name=ASK_TOOL,
        json_schema=parameters_schema(AskArgs),
        takes_ctx=True,
        description="Ask the user your questions, and their approval to delete what specops did not create "
        "(`delete`), all at once; allowed once, after read-only checks if you like, before the first change.",
    )
