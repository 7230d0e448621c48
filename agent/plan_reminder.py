"""The current plan at the end of every request, so everything before it stays the same from turn to turn.

The system prompt and the tool list never change within a run; the plan does.
Put in the instructions it would change the first message on every turn, and a
provider's prompt cache would miss the whole history each time. Instead the
plan is added as a last user message to the request being sent, and to that
request only: the conversation kept for the next turn does not hold it, so
each request is the previous one plus what happened since, plus today's plan.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

from .budget import host_time_reminder
from .deps import AgentDeps

PLAN_MARK = "[specops plan]"  # starts the plan's text, so a rebuilt history can tell it from the user's words


def plan_reminder() -> Hooks[AgentDeps]:
    async def before_model_request(ctx: RunContext[AgentDeps], request_context: Any) -> Any:
        plan = ctx.deps.todos.reminder()
        host_time = host_time_reminder(ctx.deps.host_time, ctx.deps.host_budget_s)
        request_context.messages = with_plan(request_context.messages, f"{plan}\n{host_time}" if host_time else plan)
        return request_context

    return Hooks(before_model_request=before_model_request)


def with_plan(messages: list[ModelMessage], plan: str) -> list[ModelMessage]:
    """`messages` with the plan added to the last request (a copy: the history itself is left as it was)."""
    if not messages or not isinstance(messages[-1], ModelRequest):
        return messages
    last = messages[-1]
    return [*messages[:-1], replace(last, parts=[*last.parts, UserPromptPart(f"{PLAN_MARK}\n{plan}")])]


def without_plan(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A recorded request's messages as the conversation held them: the plan added for that request taken out."""
    if not messages or not isinstance(messages[-1], ModelRequest):
        return messages
    last = messages[-1]
    parts = [
        p
        for p in last.parts
        if not (isinstance(p, UserPromptPart) and isinstance(p.content, str) and p.content.startswith(PLAN_MARK))
    ]
    return [*messages[:-1], replace(last, parts=parts)]
