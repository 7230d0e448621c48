"""pydantic-ai messages in and out of their serialised (JSON) form, the form transcripts store.

`ModelMessagesTypeAdapter` is pydantic-ai's own round-trip for message
histories; storing exactly its output means a replay can hand the recorded
messages back to pydantic-ai unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse


def dump_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    dumped: list[dict[str, Any]] = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    return dumped


def load_messages(data: Sequence[dict[str, Any]]) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_python(list(data))


def dump_response(response: ModelResponse) -> dict[str, Any]:
    return dump_messages([response])[0]


def load_response(data: dict[str, Any]) -> ModelResponse:
    (message,) = load_messages([data])
    if not isinstance(message, ModelResponse):
        raise ValueError(f"expected a model response, got a message of kind {data.get('kind')!r}")
    return message
