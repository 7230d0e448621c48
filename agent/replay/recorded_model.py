"""The recorded policy's answers, served in order and whole (a FunctionModel), and the hand-over a fork makes to a live policy.

Replaying a run whose policy was a model (not the playbook, which is code and
runs as it is today), each model request gets the next recorded response. The
request itself is compared with the recorded one by the comparator, when it is
recorded, before this model is asked. Paths in the answers are host paths,
the same on any host a run is replayed against.
"""

from __future__ import annotations

from typing import TypeGuard

from pydantic_ai.exceptions import AgentRunError, UnexpectedModelBehavior
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from specops.transcripts import ErrorEvent, ModelRequestEvent, ModelResponseEvent
from specops.transcripts.messages import load_response

from .recorded_run import RecordedRun


class RecordedResponsesExhausted(RuntimeError):
    """Today's loop asked the model more often than the recorded run did."""


class RecordedModel(FunctionModel):
    """The recorded answers to the model requests, served in order, each as it was recorded.

    A response is served whole: what the model said and called, and also its model name, provider, finish reason,
    provider details and usage, so that the history of the next request holds exactly what the recorded run had
    there (and a fork's live model continues from the same history, provider-specific parts included).
    FunctionModel stamps its own model name on a response and estimates usage where none was recorded: both are
    put back as recorded. A request the recorded model failed (the server answered 500, the connection was
    refused, the answer made no sense) fails again the same way, so the run ends as it did.
    """

    def __init__(self, recorded: RecordedRun) -> None:
        self._recorded = recorded
        self._answers = _answers(recorded)
        self.served = 0
        self._as_recorded: tuple[str | None, RequestUsage] = (None, RequestUsage())
        model_name = recorded.responses[0].model_name if recorded.responses else None
        super().__init__(self._respond, model_name=model_name or recorded.policy)

    def _next(self) -> ModelResponse:
        answer = self._answers[self.served] if self.served < len(self._answers) else None
        if answer is None:
            raise RecordedResponsesExhausted(
                f"the recorded run has {len(self._recorded.responses)} model responses; today's loop asked for another"
            )
        self.served += 1
        if isinstance(answer, ErrorEvent):
            raise recorded_failure(answer)
        data = answer.response
        response = load_response(data)
        self._as_recorded = (response.model_name, response.usage)
        return response

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return self._next()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        response = await super().request(messages, model_settings, model_request_parameters)
        response.model_name, response.usage = self._as_recorded
        return response


def _answers(recorded: RecordedRun) -> list[ModelResponseEvent | ErrorEvent | None]:
    """What answered each recorded model request: its response, the error that ended the run instead, or None (the
    recording stops there)."""
    answers: list[ModelResponseEvent | ErrorEvent | None] = []
    for event in recorded.events:
        if isinstance(event, ModelRequestEvent):
            answers.append(None)
        elif answers and answers[-1] is None and _answers_a_request(event):
            answers[-1] = event
    if not recorded.requests:  # a transcript with responses but no requests recorded: the responses, in order
        answers = list(recorded.responses)
    return answers


# Where the loop (agent/run.py's _drive) records a model call that raised.
_MODEL_FAILED = frozenset({"model", "agent"})


def _answers_a_request(event: object) -> TypeGuard[ModelResponseEvent | ErrorEvent]:
    return isinstance(event, ModelResponseEvent) or (isinstance(event, ErrorEvent) and event.where in _MODEL_FAILED)


def recorded_failure(error: ErrorEvent) -> Exception:
    """The exception that makes the loop record `error` again: the same where, kind and message.

    The loop records an UnexpectedModelBehavior under "model" with its message; another AgentRunError (a model
    HTTP error among them) under "agent" with its message; any other exception under "agent" as "Kind: message".
    """
    if error.where == "model":
        return UnexpectedModelBehavior(error.message)
    kind = error.kind if error.kind.isidentifier() else "RecordedModelFailure"
    prefix = f"{error.kind}: "
    if error.message.startswith(prefix):
        plain: Exception = type(kind, (Exception,), {})(error.message[len(prefix) :])
        return plain
    failure: AgentRunError = type(kind, (AgentRunError,), {})(error.message)
    return failure


def recorded_model(recorded: RecordedRun) -> RecordedModel:
    return RecordedModel(recorded)


class HandoverModel(WrapperModel):
    """A fork's policy: the replayed one while the recorded run's requests come before `at`, the live one after."""

    def __init__(self, replayed: Model, live: Model, recorded: RecordedRun, at: int) -> None:
        super().__init__(live)
        self.replayed = replayed
        self._before = [r.seq for r in recorded.requests if r.seq < at]
        self._asked = 0
        self.handed_over = False

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        if not self.handed_over and self._asked < len(self._before):
            self._asked += 1
            return await self.replayed.request(messages, model_settings, model_request_parameters)
        self.handed_over = True
        return await self.wrapped.request(messages, model_settings, model_request_parameters)
