"""A pydantic-ai conversation stored through the recorder comes back equal through ModelMessagesTypeAdapter."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from specops.transcripts import ModelRequestEvent, ModelResponseEvent, Recorder, TranscriptCorrupt, read_transcript


def _conversation():
    first = ModelRequest(
        parts=[
            SystemPromptPart(content="You are specops. Plan with todos, then act."),
            UserPromptPart(content="deploy z-lab/Qwen3-8B-DFlash-b16 on sim:seed-ct200 and benchmark it"),
        ]
    )
    plan = ModelResponse(
        parts=[
            ThinkingPart(content="disk first: / is at 98%"),
            ToolCallPart(tool_name="disk_usage", args={"paths": ["/", "/data"]}, tool_call_id="call-1"),
        ],
        usage=RequestUsage(input_tokens=812, output_tokens=41, cache_read_tokens=300),
        model_name="qwen3-8b",
        provider_name="openai",
        finish_reason="tool_call",
    )
    results = ModelRequest(
        parts=[
            ToolReturnPart(
                tool_name="disk_usage",
                content={"/": {"free_gib": 2.1}, "/data": {"free_gib": 3400}},
                tool_call_id="call-1",
            ),
            ToolReturnPart(
                tool_name="download", content="path must be under /data", tool_call_id="call-2", outcome="retried"
            ),
            RetryFeedbackPart(content="answer with a tool call", retry=RetryInfo(cause="no_output")),
        ]
    )
    final = ModelResponse(
        parts=[TextPart(content="Downloading to /data.")],
        usage=RequestUsage(input_tokens=900, output_tokens=7),
        model_name="qwen3-8b",
    )
    return first, plan, results, final


def test_conversation_round_trips_through_the_transcript(tmp_path):
    first, plan, results, final = _conversation()
    path = tmp_path / "t.jsonl"
    with Recorder(path, "run-messages", environ={}) as recorder:
        recorder.model_request([first], settings={"temperature": 0.0})
        recorder.model_response(plan, duration_s=0.8)
        recorder.model_request([first, plan, results])
        recorder.model_response(final, duration_s=0.1)

    read = read_transcript(path)
    request_1, response_1, request_2, response_2 = read.events
    assert isinstance(request_1, ModelRequestEvent) and isinstance(response_1, ModelResponseEvent)
    assert request_1.model_messages() == [first] and request_1.settings == {"temperature": 0.0}
    assert read.model_messages_sent(request_2) == [first, plan, results]
    assert response_1.model_response() == plan and response_2.model_response() == final
    # What is stored is exactly pydantic-ai's own serialised form...
    sent = read.messages_sent(request_2)
    assert ModelMessagesTypeAdapter.validate_python(sent) == [first, plan, results]
    assert sent == ModelMessagesTypeAdapter.dump_python([first, plan, results], mode="json")
    # ...with the conversation's start stored once: the second request refers to the first.
    assert request_2.history is not None and (request_2.history.seq, request_2.history.count) == (0, 1)
    assert len(request_2.messages) == 2 and path.read_text().count("Plan with todos, then act.") == 1
    # Usage and model name are lifted out of the response for readers that do not parse messages.
    assert (response_1.usage.input_tokens, response_1.usage.output_tokens, response_1.usage.cache_read_tokens) == (
        812,
        41,
        300,
    )
    assert response_1.model_name == "qwen3-8b" and response_1.duration_s == 0.8


def test_a_changed_history_is_stored_from_where_it_differs(tmp_path):
    first, plan, results, final = _conversation()
    trimmed = ModelRequest(parts=[UserPromptPart(content="(earlier turns summarised) continue the deployment")])
    path = tmp_path / "t.jsonl"
    with Recorder(path, "run-trim", environ={}) as recorder:
        recorder.model_request([first, plan, results])
        recorder.model_request([first, plan, results, final, trimmed])
        recorder.model_request([trimmed])  # a history processor dropped the old turns
        recorder.model_request([first, plan, trimmed])  # shares two messages, then differs
    read = read_transcript(path)
    requests = read.events
    assert [e.history and (e.history.seq, e.history.count) for e in requests] == [None, (0, 3), None, None]
    assert [read.model_messages_sent(e) for e in requests] == [
        [first, plan, results],
        [first, plan, results, final, trimmed],
        [trimmed],
        [first, plan, trimmed],
    ]
    with pytest.raises(ValueError, match="model_messages_sent"):
        requests[1].model_messages()


def test_a_history_reference_to_nowhere_is_corrupt(tmp_path):
    first, plan, results, _ = _conversation()
    path = tmp_path / "t.jsonl"
    with Recorder(path, "run-ref", environ={}) as recorder:
        recorder.note("not a request")
        recorder.model_request([first])
        recorder.model_request([first, plan])
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + lines[1] + lines[2].replace('"history":{"seq":1,', '"history":{"seq":0,'))
    with pytest.raises(
        TranscriptCorrupt, match=r":3: history refers to event 0, which is not an earlier model_request"
    ):
        read_transcript(path)
