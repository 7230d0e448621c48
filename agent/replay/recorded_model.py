"""The recorded policy's answers, served in order (a FunctionModel), and the hand-over a fork makes to a live policy.

Replaying a run whose policy was a model (not the playbook, which is code and
runs as it is today), each model request gets the next recorded response. The
request itself is compared with the recorded one by the comparator, when it is
recorded, before this model is asked. Against a new simulated world (live
tools), recorded paths inside the old world's directory are moved to the new one.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel

from specops.transcripts.messages import load_response

from .masking import translate_sim_root
from .recorded_run import RecordedRun


class RecordedResponsesExhausted(RuntimeError):
    """Today's loop asked the model more often than the recorded run did."""


def recorded_model(recorded: RecordedRun, *, new_root: Callable[[], str] | None = None) -> FunctionModel:
    responses = [event.response for event in recorded.responses]
    served = 0

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal served
        if served >= len(responses):
            raise RecordedResponsesExhausted(
                f"the recorded run has {len(responses)} model responses; today's loop asked for another"
            )
        data = responses[served]
        served += 1
        if new_root is not None:
            data = translate_sim_root(data, recorded.sim_root, new_root())
        recorded_response = load_response(data)
        # The recorded usage, so budgets count as they did (and FunctionModel does not estimate it anew).
        return ModelResponse(parts=recorded_response.parts, usage=recorded_response.usage)

    model_name = recorded.responses[0].model_name if recorded.responses else None
    return FunctionModel(respond, model_name=model_name or recorded.policy)


class HandoverModel(WrapperModel):
    """A fork's policy: the replayed one while the recorded run's requests come before `at`, the live one after."""

    def __init__(self, replayed: Model, live: Model, recorded: RecordedRun, at: int) -> None:
        super().__init__(live)
        self.replayed = replayed
        self._before = [r.seq for r in recorded.requests if r.seq < at]
        self._asked = 0
        self.handed_over = False

    async def request(self, messages, model_settings, model_request_parameters):  # type: ignore[no-untyped-def]
        if not self.handed_over and self._asked < len(self._before):
            self._asked += 1
            return await self.replayed.request(messages, model_settings, model_request_parameters)
        self.handed_over = True
        return await self.wrapped.request(messages, model_settings, model_request_parameters)
