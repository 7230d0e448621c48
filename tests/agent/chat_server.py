"""Test support: a scripted OpenAI-compatible Chat Completions server on loopback, no model behind it.

    script = [Answer(text="planning", calls=(ToolCall("todowrite", {...}),)),
              Answer(calls=(ToolCall("host_facts"), ToolCall("find_models", {}))),
              Answer(calls=(ToolCall("final_result", {"status": "completed", "summary": "done"}),))]
    with ScriptedChatServer(script) as server:      # serves in a thread: sync tests, async tests, child processes
        ... --model openai-chat:scripted-agent --base-url {server.base_url} ...
        server.requests[0].body["messages"]         # what the model was sent, request by request

It serves POST /v1/chat/completions the way OpenAI does: a chat.completion
object, or, with `stream: true`, server-sent chunks (the text in pieces, each
tool call's arguments split across several chunks, then the finish reason, and
a last chunk with the usage when `stream_options.include_usage` asks for it).
Every answer carries usage (prompt tokens counted from the request, with cached
and reasoning-token details). An answer may be text, reasoning
(`reasoning_content`, as SGLang and vLLM send it), several tool calls, or any
mix of them; an entry of the script may also be a function of the request that
makes the answer (to use what a tool returned earlier). An entry may instead be a
`Refusal`: an HTTP error status with an OpenAI-style error body, which may be
made from the request too; `invalid_api_key()` answers 401 and echoes the bearer
key back in its message, as OpenAI's "Incorrect API key provided: sk-..." does.

Which answer a request gets: by default the conversation's position, i.e. how
many assistant messages the request already holds, so a resumed or forked run
continues the script where its conversation stands; `turn_by="request"` counts
requests instead. Past the script's end the server answers 400 (the openai
client does not retry that), so a test sees the overrun.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from aiohttp import web

MODEL = "scripted-agent"
CREATED = 1764000000


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any] | str = field(default_factory=dict)  # a str is sent as it is (malformed JSON, say)
    id: str | None = None  # default: call_<turn>_<index>

    @property
    def arguments(self) -> str:
        return self.args if isinstance(self.args, str) else json.dumps(self.args)


@dataclass(frozen=True)
class Answer:
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    finish_reason: str | None = None  # default: tool_calls when there are calls, else stop
    completion_tokens: int | None = None  # default: from the answer's length

    @property
    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.calls else "stop")


def calls(*pairs: tuple[str, dict[str, Any]], text: str | None = None) -> Answer:
    """An answer that calls each (tool, args), in one message."""
    return Answer(text=text, calls=tuple(ToolCall(name, args) for name, args in pairs))


def final(status: str = "completed", summary: str = "done", **fields: Any) -> Answer:
    return calls(("final_result", {"status": status, "summary": summary, **fields}))


@dataclass(frozen=True)
class Refusal:
    """An HTTP error instead of an answer: `status` with `{"error": error}` as its body (OpenAI's error shape);
    `error` may be a function of the request (to echo what the request carried)."""

    status: int
    error: dict[str, Any] | Callable[[ReceivedRequest], dict[str, Any]]

    def body(self, request: ReceivedRequest) -> dict[str, Any]:
        return {"error": self.error(request) if callable(self.error) else self.error}


def bearer_key(request: ReceivedRequest) -> str:
    """The API key the request was sent with (its `Authorization: Bearer KEY`), "" without one."""
    header = next((v for k, v in request.headers.items() if k.lower() == "authorization"), "")
    return header.removeprefix("Bearer ").strip()


def invalid_api_key() -> Refusal:
    """OpenAI's answer to a wrong key: 401, its message echoing the key the request carried."""
    return Refusal(
        401,
        lambda request: {
            "message": f"Incorrect API key provided: {bearer_key(request)}. "
            "You can find your API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        },
    )


ScriptEntry = Answer | Refusal | Callable[["ReceivedRequest"], Answer | Refusal]


@dataclass
class ReceivedRequest:
    body: dict[str, Any]
    headers: dict[str, str]
    turn: int  # the script entry it was answered with (or would have been, past the end)
    answer: Answer | None = None  # what it was answered (None: an error status)
    status: int = 200  # the HTTP status it was answered with
    usage: dict[str, Any] | None = None  # the usage the answer reported
    call_ids: list[str] = field(default_factory=list)  # the ids of the answer's tool calls

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def tool_results(self) -> dict[str, Any]:
        """The tool messages of this request, by tool_call_id, their content parsed as JSON where it is JSON."""
        out: dict[str, Any] = {}
        for message in self.messages:
            if message.get("role") == "tool":
                content = message.get("content")
                try:
                    out[message["tool_call_id"]] = json.loads(content) if isinstance(content, str) else content
                except json.JSONDecodeError:
                    out[message["tool_call_id"]] = content
        return out


class ScriptedChatServer:
    def __init__(
        self,
        script: Sequence[ScriptEntry],
        *,
        model: str | None = None,
        turn_by: Literal["conversation", "request"] = "conversation",
        chunk_chars: int = 7,
    ) -> None:
        self.script = list(script)
        self.model = model  # the model name answers report; default: the one the request named
        self.turn_by = turn_by
        self.chunk_chars = chunk_chars
        self.requests: list[ReceivedRequest] = []
        self.errors: list[str] = []  # script functions that raised (answered 400)
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- lifecycle: the server runs on its own event loop in a thread ------------------------------

    def start(self) -> Self:
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._start())
            except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=serve, name="scripted-chat-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def close(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- answering ---------------------------------------------------------------------------------

    def _turn(self, body: dict[str, Any]) -> int:
        if self.turn_by == "request":
            return len(self.requests)
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            received = ReceivedRequest(body=body, headers=dict(request.headers), turn=self._turn(body))
            self.requests.append(received)
        if received.turn >= len(self.script):
            received.status = 400
            return web.json_response(
                {
                    "error": {
                        "message": f"the scripted server has {len(self.script)} answers; this request asks for answer {received.turn}",
                        "type": "invalid_request_error",
                        "code": "script_exhausted",
                    }
                },
                status=400,
            )
        entry = self.script[received.turn]
        try:
            answer = entry if isinstance(entry, (Answer, Refusal)) else entry(received)
            if isinstance(answer, Refusal):
                received.status = answer.status
                return web.json_response(answer.body(received), status=answer.status)
        except Exception as exc:  # noqa: BLE001 - a script function failed: the test's own mistake, said to the client and kept
            self.errors.append(f"answer {received.turn}: {type(exc).__name__}: {exc}")
            received.status = 400
            return web.json_response(
                {"error": {"message": self.errors[-1], "type": "invalid_request_error", "code": "script_failed"}},
                status=400,
            )
        model = self.model or body.get("model") or MODEL
        usage = _usage(body, answer)
        ids = [c.id or f"call_{received.turn}_{i}" for i, c in enumerate(answer.calls)]
        received.answer, received.usage, received.call_ids = answer, usage, ids
        completion_id = f"chatcmpl-scripted-{received.turn}-{len(self.requests)}"
        if not received.stream:
            return web.json_response(_completion(completion_id, model, answer, ids, usage))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for chunk in _chunks(completion_id, model, answer, ids, usage if include_usage else None, self.chunk_chars):
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def _usage(body: dict[str, Any], answer: Answer) -> dict[str, Any]:
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    said = (
        len(answer.text or "") + len(answer.reasoning or "") + sum(len(c.name) + len(c.arguments) for c in answer.calls)
    )
    completion = answer.completion_tokens if answer.completion_tokens is not None else max(1, said // 4)
    reasoning = len(answer.reasoning or "") // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": prompt // 2},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def _completion(cid: str, model: str, answer: Answer, ids: list[str], usage: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text}
    if answer.reasoning is not None:
        message["reasoning_content"] = answer.reasoning
    if answer.calls:
        message["tool_calls"] = [
            {"id": id_, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for id_, c in zip(ids, answer.calls, strict=False)
        ]
    return {
        "id": cid,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish, "logprobs": None}],
        "usage": usage,
    }


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _chunks(
    cid: str, model: str, answer: Answer, ids: list[str], usage: dict[str, Any] | None, size: int
) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    if answer.reasoning:
        out += [chunk({"reasoning_content": piece}) for piece in _pieces(answer.reasoning, size)]
    if answer.text:
        out += [chunk({"content": piece}) for piece in _pieces(answer.text, size)]
    for index, (id_, call) in enumerate(zip(ids, answer.calls, strict=False)):
        # The call's first chunk names it; its arguments follow in pieces, as a server streams them.
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": index,
                            "id": id_,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(call.arguments, size)
        ]
    out.append(chunk({}, answer.finish))
    if usage is not None:
        out.append(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": model,
                "system_fingerprint": "scripted",
                "choices": [],
                "usage": usage,
            }
        )
    return out
