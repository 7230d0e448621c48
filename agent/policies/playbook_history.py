"""What the playbook reads from the message history: the goal, and the outcome of every call it made.

The playbook keeps no state between model requests: each request, it reads the
goal from the first user prompt and the tool returns (by tool_call_id) from the
history, and replays its pipeline over them (playbook.py). A tool return carries
the loop's full outcome, `{"ok": true, "result": ...}` / `{"ok": false, "error": ...}`;
it is read back into the tool's own result type (agent/toolset.result_type) and
the error record, so the pipeline reads fields, not dict keys. A retry prompt
(bad arguments, an unknown tool) is an error of kind `retry_prompt`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
    UserPromptPart,
)

from specops.agent.tool_answer import full_outcome
from specops.agent.toolset import result_type
from specops.tools.errors import ErrorKind, ToolErrorRecord
from specops.transcripts import HostTime

Result = TypeVar("Result", bound=BaseModel)


@dataclass(frozen=True)
class Call:
    """One tool call the pipeline wants made."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What a call returned: the tool's typed result on success, else its error record."""

    ok: bool
    result: BaseModel | None = None
    error: ToolErrorRecord | None = None
    host_time: HostTime | None = None  # the call's start and end on the host's clock (None: not on the host)

    def value(self, model: type[Result]) -> Result:
        """The result as `model`, the tool's result type; asked for only after `ok` was checked."""
        if not isinstance(self.result, model):
            raise TypeError(f"expected a {model.__name__} result, got {type(self.result).__name__}")
        return self.result

    @property
    def kind(self) -> ErrorKind | None:
        """The error's kind, ErrorKind.UNKNOWN for one this version does not know; None when ok."""
        if self.error is None:
            return None
        try:
            return ErrorKind(self.error.kind)
        except ValueError:
            return ErrorKind.UNKNOWN

    @property
    def what(self) -> str:
        return self.error.what if self.error is not None else ""

    @property
    def remedy(self) -> str:
        return self.error.remedy if self.error is not None else ""

    @property
    def details(self) -> dict[str, Any]:
        return self.error.details if self.error is not None else {}

    def describe(self) -> str:
        """The error in one line, for the final answer."""
        return f"{self.kind}: {self.what}".strip()


@dataclass
class History:
    prompt: str
    outcomes: dict[str, Outcome]


def _failed(kind: ErrorKind, what: str, remedy: str = "") -> Outcome:
    return Outcome(ok=False, error=ToolErrorRecord(kind=kind, what=what, remedy=remedy))


def _as_outcome(tool: str, content: Any) -> Outcome:
    """A tool return as an Outcome (with its host clock readings, where the loop gave them)."""
    outcome = _read_outcome(tool, content)
    readings = content.get("host_time") if isinstance(content, dict) else None
    if readings is None:
        return outcome
    try:
        return replace(outcome, host_time=HostTime.model_validate(readings))
    except ValidationError:
        return outcome


def _read_outcome(tool: str, content: Any) -> Outcome:
    """A tool return as an Outcome: the full outcome the loop recorded, or the error as the model was shown it."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return _failed(ErrorKind.UNKNOWN, f"{tool} answered text, not a result: {content[:200]}")
    if not isinstance(content, dict):
        return _failed(ErrorKind.UNKNOWN, f"{tool} answered {type(content).__name__}, not a result")
    if "ok" not in content and list(content) == ["error"]:
        content = {"ok": False, "error": content["error"]}
    if not content.get("ok"):
        try:
            return Outcome(ok=False, error=ToolErrorRecord.model_validate(content.get("error")))
        except ValidationError:
            return _failed(ErrorKind.UNKNOWN, str(content.get("error")))
    model = result_type(tool)
    if model is None:
        return Outcome(ok=True)
    try:
        return Outcome(ok=True, result=model.model_validate(content.get("result")))
    except ValidationError as exc:
        return _failed(
            ErrorKind.UNKNOWN,
            f"{tool}'s result is not a {model.__name__}: {exc.errors(include_url=False)[0]['msg']}",
            "a result recorded by another version of specops: run the goal again",
        )


def _prompt_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    return "\n".join(item for item in part.content if isinstance(item, str))


def read_history(messages: list[ModelMessage]) -> History:
    prompt = ""
    outcomes: dict[str, Outcome] = {}
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not prompt:
                prompt = _prompt_text(part)
            elif isinstance(part, ToolReturnPart):  # the full outcome, not the compact view the model was sent
                outcomes[part.tool_call_id] = _as_outcome(part.tool_name, full_outcome(part.content, part.metadata))
            elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
                what = part.content if isinstance(part.content, str) else json.dumps(part.content, default=str)
                outcomes[part.tool_call_id] = _failed(
                    ErrorKind.RETRY_PROMPT, what, "correct the call as the message says"
                )
    return History(prompt=prompt, outcomes=outcomes)
