"""What the playbook reads from the message history: the goal, and the outcome of every call it made.

The playbook keeps no state between model requests: each request, it reads the
goal from the first user prompt and the tool returns (by tool_call_id) from the
history, and replays its pipeline over them (playbook.py). A tool return is the
loop's `{"ok": true, "result": ...}` / `{"ok": false, "error": ...}`; a retry
prompt (bad arguments, an unknown tool) is an error of kind `retry_prompt`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
    UserPromptPart,
)

from specops.agent.tool_answer import full_outcome
from specops.tools.errors import ErrorKind


@dataclass(frozen=True)
class Call:
    """One tool call the pipeline wants made."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What a call returned: the result on success, else the error record (kind, what, remedy, details)."""

    ok: bool
    result: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> ErrorKind | None:
        """The error's kind, ErrorKind.UNKNOWN for one this version does not know; None when ok."""
        if self.ok:
            return None
        try:
            return ErrorKind(str(self.error.get("kind", ErrorKind.UNKNOWN)))
        except ValueError:
            return ErrorKind.UNKNOWN

    @property
    def details(self) -> dict[str, Any]:
        details = self.error.get("details")
        return details if isinstance(details, dict) else {}

    def describe(self) -> str:
        """The error in one line, for the final answer."""
        return f"{self.kind}: {self.error.get('what', '')}".strip()


@dataclass
class History:
    prompt: str
    outcomes: dict[str, Outcome]


def _as_outcome(content: Any) -> Outcome:
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return Outcome(ok=True, result={"text": content})
    if isinstance(content, dict) and "ok" in content:
        if content["ok"]:
            result = content.get("result")
            return Outcome(ok=True, result=result if isinstance(result, dict) else {"value": result})
        error = content.get("error")
        return Outcome(
            ok=False, error=error if isinstance(error, dict) else {"kind": ErrorKind.UNKNOWN, "what": str(error)}
        )
    if isinstance(content, dict) and list(content) == ["error"] and isinstance(content["error"], dict):
        return Outcome(ok=False, error=content["error"])  # an error as the model is shown it
    return Outcome(ok=True, result=content if isinstance(content, dict) else {"value": content})


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
                outcomes[part.tool_call_id] = _as_outcome(full_outcome(part.content, part.metadata))
            elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
                what = part.content if isinstance(part.content, str) else json.dumps(part.content, default=str)
                outcomes[part.tool_call_id] = Outcome(ok=False, error={"kind": ErrorKind.RETRY_PROMPT, "what": what})
    return History(prompt=prompt, outcomes=outcomes)
