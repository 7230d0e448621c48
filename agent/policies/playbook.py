"""The `playbook` policy: a deterministic pydantic-ai FunctionModel that runs the standard DFlash pipeline.

Each model request, the playbook reads the history (the goal, and every tool
return by tool_call_id), replays its pipeline generator (playbook_pipeline.py)
from the start over the outcomes already there, and answers with the first
step that has no outcome yet: tool calls with ids `pb-<step>-<n>`, or, once
the pipeline returns, the final answer through the output tool. No state lives
between requests, so a run resumed from its history continues where it was.

    agent = Agent(playbook_model(), output_type=FinalAnswer, tools=...)
"""

from __future__ import annotations

from typing import Protocol

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from specops.agent.answers import ASK_TOOL
from specops.agent.final import FinalAnswer

from .playbook_goal import Understood, understand
from .playbook_history import Call, read_history
from .playbook_pipeline import Pipeline
from .playbook_settings import PlaybookSettings

MODEL_NAME = "playbook"


class PipelineFactory(Protocol):
    """What makes the pipeline a request replays: the Pipeline class (or a subclass), or a search's (search.py)."""

    def __call__(
        self, understood: Understood, settings: PlaybookSettings | None = None, *, can_ask: bool = False
    ) -> Pipeline: ...


def _call_id(step: int, index: int) -> str:
    return f"pb-{step}-{index}"


def next_action(
    messages: list[ModelMessage],
    settings: PlaybookSettings | None = None,
    pipeline: PipelineFactory = Pipeline,
    *,
    can_ask: bool = False,
) -> tuple[int, list[Call]] | FinalAnswer:
    """The playbook's next step for this history: (its step number, the calls to make now), or the final answer.

    `pipeline` makes the pipeline to replay: the Pipeline class (evals' negative controls pass deliberately bad
    subclasses; a search policy passes its own);
    `can_ask`: the run offers ask_user (--ask-once).
    """
    history = read_history(messages)
    program = pipeline(understand(history.prompt), settings or PlaybookSettings(), can_ask=can_ask).run()
    step = 0
    try:
        calls = next(program)
        while True:
            ids = [_call_id(step, i) for i in range(len(calls))]
            if not all(i in history.outcomes for i in ids):
                return step, list(calls)
            calls = program.send([history.outcomes[i] for i in ids])
            step += 1
    except StopIteration as done:
        final: FinalAnswer = done.value  # what Pipeline.run returns
        return final


def playbook_turn(
    messages: list[ModelMessage],
    info: AgentInfo,
    settings: PlaybookSettings | None = None,
    pipeline: PipelineFactory = Pipeline,
) -> ModelResponse:
    can_ask = any(t.name == ASK_TOOL for t in info.function_tools)
    action = next_action(messages, settings, pipeline, can_ask=can_ask)
    if isinstance(action, FinalAnswer):
        args = action.model_dump(mode="json")
        if info.output_tools:
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args, tool_call_id="pb-final")])
        return ModelResponse(parts=[TextPart(action.model_dump_json())])
    step, calls = action
    return ModelResponse(
        parts=[ToolCallPart(call.tool, call.args, tool_call_id=_call_id(step, i)) for i, call in enumerate(calls)]
    )


def playbook_model(
    settings: PlaybookSettings | None = None, *, pipeline: PipelineFactory = Pipeline, name: str | None = None
) -> FunctionModel:
    """The playbook with `settings` (the full job by default); the model name is its spec (`playbook:levels=1,64`)."""
    settings = settings or PlaybookSettings()

    def turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return playbook_turn(messages, info, settings, pipeline)

    return FunctionModel(turn, model_name=name or settings.spec())
