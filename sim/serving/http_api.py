"""SGLang's HTTP API over aiohttp: health, info, OpenAI-compatible and native generation, metrics.

Streams are Server-Sent Events as SGLang writes them (`data: {...}\n\n`, then
`data: [DONE]\n\n`). One chunk carries every token made since the stream's last
write, so a speculative step that accepts several tokens arrives as one chunk.
"""

from __future__ import annotations

import json
import math
import random
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from aiohttp import web

from .engine import Engine, GenerationRequest
from .metrics import render_metrics
from .prompt_kind import classify_prompt, thinking_switched_off
from .tokenizer import count_chat_tokens, count_text_tokens, message_text, synthetic_ids, synthetic_text

EOS_TOKEN_ID = 163586  # Kimi K2's <|im_end|>
MEAN_NATURAL_ANSWER_TOKENS = 350  # answers end on their own (EOS) after ~350 tokens unless ignore_eos
GRAMMAR_KEYS = ("json_schema", "regex", "ebnf", "structural_tag")


@dataclass
class ServerState:
    """What the routes need to know about the launched server."""

    engine: Engine
    served_model_name: str
    model_path: str
    tokenizer_path: str
    model_type: str
    architectures: list[str]
    context_length: int
    version: str
    server_args: dict[str, Any]
    speculative_algorithm: str | None
    random_seed: int
    dp_size: int
    enable_metrics: bool
    server_info_alias: bool
    new_spec_meta: bool
    api_key: str | None = None
    incremental_streaming_output: bool = False
    ready: bool = False
    extra_info: dict[str, Any] = field(default_factory=dict)
    access_log: Callable[[str], None] | None = None


class BadRequest(Exception):
    pass


def _error(message: str, status: int = 400) -> web.Response:
    return web.json_response(
        {"object": "error", "message": message, "type": "BadRequestError" if status == 400 else "InternalServerError",
         "param": None, "code": status},
        status=status,
    )


def _sse(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


class Api:
    def __init__(self, state: ServerState) -> None:
        self.s = state
        self._counter = 0

    # ---------------------------------------------------------------- building requests
    def _new_request(self, prompt_text: str, prompt_tokens: int, params: dict[str, Any], max_new_default: int | None) -> GenerationRequest:
        s = self.s
        if s.speculative_algorithm == "DFLASH":
            if params.get("return_logprob") or params.get("logprobs") or params.get("top_logprobs"):
                raise BadRequest("DFLASH speculative decoding does not support return_logprob.")
            if any(params.get(k) for k in GRAMMAR_KEYS):
                raise BadRequest("DFLASH speculative decoding does not support grammar-constrained decoding.")
        if prompt_tokens >= s.context_length:
            raise BadRequest(f"The input ({prompt_tokens} tokens) is longer than the model's context length ({s.context_length} tokens).")
        max_new = params.get("max_new_tokens")
        if max_new is None:
            max_new = max_new_default if max_new_default is not None else s.context_length - prompt_tokens
        max_new = int(max_new)
        if max_new < 0:
            raise BadRequest("max_new_tokens must be at least 0.")
        if prompt_tokens + max_new > s.context_length:
            raise BadRequest(
                f"Requested token count exceeds the model's maximum context length of {s.context_length} tokens. "
                f"You requested a total of {prompt_tokens + max_new} tokens: {prompt_tokens} tokens from the input "
                f"messages and {max_new} tokens for the completion. Please reduce the number of tokens in the input "
                "messages or the completion to fit within the limit."
            )
        temperature = float(params.get("temperature", 1.0) if params.get("temperature") is not None else 1.0)
        greedy = temperature == 0.0 or params.get("top_k") == 1
        self._counter += 1
        material: list[object] = [s.random_seed, prompt_text, temperature]
        if not greedy:
            material.append(self._counter)
        kind = classify_prompt(prompt_text)
        stop_after = None
        if not params.get("ignore_eos"):
            u = random.Random("eos|" + "|".join(map(str, material))).random()
            stop_after = 16 + int(-MEAN_NATURAL_ANSWER_TOKENS * math.log(1.0 - u))
        engine = s.engine
        return GenerationRequest(
            rid=params.get("rid") or engine.next_rid(),
            prompt_tokens=prompt_tokens,
            max_new_tokens=max_new,
            kind=kind,
            sampler=engine.model.sampler(kind, material, thinking_off=thinking_switched_off(prompt_text)),
            stop_after=stop_after,
            block_size=engine.model.block_size,
        )

    def _meta_info(self, r: GenerationRequest) -> dict[str, Any]:
        if r.finish_reason == "length":
            finish: Any = {"type": "length", "length": r.generated}
        elif r.finish_reason == "stop":
            finish = {"type": "stop", "matched": EOS_TOKEN_ID}
        elif r.finish_reason == "abort":
            finish = {"type": "abort", "message": "Abort before prefill" if r.generated == 0 else "Abort in decode"}
        else:
            finish = None
        meta: dict[str, Any] = {
            "id": r.rid,
            "finish_reason": finish,
            "prompt_tokens": r.prompt_tokens,
            "weight_version": "default",
            "completion_tokens": r.generated,
            "cached_tokens": 0,
            "e2e_latency": round((r.finished_at or time.monotonic()) - r.arrived, 6),
        }
        if r.sampler is not None:
            meta["spec_verify_ct"] = r.verify_ct
            meta["spec_accept_length"] = round(r.accept_length, 6)
            meta["spec_accept_rate"] = round(r.accept_rate, 6)
            if self.s.new_spec_meta:
                meta["spec_num_correct_drafts"] = r.num_correct_drafts
                meta["spec_num_proposed_drafts"] = r.num_proposed_drafts
                meta["spec_correct_drafts_histogram"] = list(r.correct_drafts_histogram)
            else:
                meta["spec_accept_token_num"] = r.num_correct_drafts
                meta["spec_draft_token_num"] = r.num_proposed_drafts
        return meta

    async def _run_to_end(self, r: GenerationRequest) -> None:
        self.s.engine.submit(r)
        try:
            while True:
                _, done = await r.next_update()
                if done:
                    return
        except BaseException:
            self.s.engine.abort(r)
            raise

    def _text(self, r: GenerationRequest, start: int, end: int) -> str:
        return synthetic_text(zlib.crc32(r.rid.encode()), start, end)

    async def _stream(self, request: web.Request, r: GenerationRequest, chunk: Callable[[int, int, bool], list[Any]]) -> web.StreamResponse:
        """Stream SSE: `chunk(start, end, finished)` gives the payloads for tokens [start, end)."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        self.s.engine.submit(r)
        start = 0
        try:
            while True:
                new, done = await r.next_update()
                if new or done:
                    for payload in chunk(start, start + new, done):
                        await resp.write(_sse(payload))
                    start += new
                if done:
                    break
            await resp.write(b"data: [DONE]\n\n")
        except BaseException:
            self.s.engine.abort(r)
            raise
        return resp

    # ---------------------------------------------------------------- parsing bodies
    async def _json(self, request: web.Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadRequest("Invalid JSON body") from None
        if not isinstance(body, dict):
            raise BadRequest("The request body must be a JSON object")
        return body

    # ---------------------------------------------------------------- routes
    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200 if self.s.ready else 503)

    async def health_generate(self, request: web.Request) -> web.Response:
        if not self.s.ready:
            return web.Response(status=503)
        r = self._new_request("health", 1, {"max_new_tokens": 1, "ignore_eos": True, "temperature": 0}, None)
        await self._run_to_end(r)
        return web.Response(status=200)

    async def model_info(self, request: web.Request) -> web.Response:
        s = self.s
        return web.json_response({
            "model_path": s.model_path, "tokenizer_path": s.tokenizer_path, "is_generation": True,
            "preferred_sampling_params": None, "weight_version": "default", "has_image_understanding": False,
            "has_audio_understanding": False, "model_type": s.model_type, "architectures": s.architectures,
        })

    def _internal_state(self) -> dict[str, Any]:
        e = self.s.engine
        state: dict[str, Any] = {
            "last_gen_throughput": round(e.stats.last_gen_throughput, 3),
            "memory_usage": self.s.extra_info.get("memory_usage", {}),
            "load": len(e.running) + e.queue_len,
        }
        if self.s.speculative_algorithm:
            state["avg_spec_accept_length"] = round(e.stats.avg_spec_accept_length, 4)
        return state

    async def server_info(self, request: web.Request) -> web.Response:
        s = self.s
        info = dict(s.server_args)
        info.update(s.extra_info.get("derived", {}))
        info["internal_states"] = [self._internal_state() for _ in range(max(s.dp_size, 1))]
        info["version"] = s.version
        return web.json_response(info)

    async def models(self, request: web.Request) -> web.Response:
        s = self.s
        return web.json_response({"object": "list", "data": [{
            "id": s.served_model_name, "object": "model", "created": int(time.time()), "owned_by": "sglang",
            "root": s.served_model_name, "parent": None, "max_model_len": s.context_length,
        }]})

    async def flush_cache(self, request: web.Request) -> web.Response:
        e = self.s.engine
        busy = bool(e.running or e.waiting or e.prefilling)
        return web.Response(
            text="Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting "
            "requests, the operation will not be performed.)\n",
            status=400 if busy else 200,
        )

    async def get_load(self, request: web.Request) -> web.Response:
        e = self.s.engine
        return web.json_response([{"dp_rank": i, "num_reqs": len(e.running), "num_waiting_reqs": e.queue_len,
                                   "num_tokens": e.num_tokens} for i in range(max(self.s.dp_size, 1))])

    async def metrics(self, request: web.Request) -> web.Response:
        if not self.s.enable_metrics:
            return web.Response(status=404, text="Not Found")
        return web.Response(text=render_metrics(self.s.engine, self.s.served_model_name),
                            content_type="text/plain", charset="utf-8")

    async def generate(self, request: web.Request) -> web.StreamResponse:
        if not self.s.ready:
            return _error("The server is not ready yet.", 503)
        body = await self._json(request)
        params = dict(body.get("sampling_params") or {})
        if body.get("return_logprob"):
            params["return_logprob"] = True
        if "text" in body and body["text"] is not None:
            texts = body["text"]
        elif body.get("input_ids") is not None:
            texts = body["input_ids"]
        else:
            raise BadRequest("Either text or input_ids should be provided.")
        batch = isinstance(texts, list) and (not texts or not isinstance(texts[0], int))
        items = texts if batch else [texts]
        reqs = []
        for item in items:
            if isinstance(item, list):
                prompt_text, n = " ".join(map(str, item)), max(len(item), 1)
            else:
                prompt_text, n = str(item), count_text_tokens(str(item))
            reqs.append(self._new_request(prompt_text, n, params, 128))
        if body.get("stream") and not batch:
            r = reqs[0]
            seed = zlib.crc32(r.rid.encode())
            # SGLang's native stream repeats the whole text so far unless --incremental-streaming-output.
            first = 0 if not self.s.incremental_streaming_output else None
            return await self._stream(request, r, lambda a, b, done: [
                {"text": synthetic_text(seed, a if first is None else 0, b), "output_ids": synthetic_ids(seed, a, b),
                 "meta_info": self._meta_info(r)}
            ])
        for r in reqs:
            self.s.engine.submit(r)
        try:
            for r in reqs:
                while True:
                    _, done = await r.next_update()
                    if done:
                        break
        except BaseException:
            for r in reqs:
                self.s.engine.abort(r)
            raise
        outs = []
        for r in reqs:
            seed = zlib.crc32(r.rid.encode())
            outs.append({"text": synthetic_text(seed, 0, r.generated), "output_ids": synthetic_ids(seed, 0, r.generated),
                         "meta_info": self._meta_info(r)})
        return web.json_response(outs if batch else outs[0])

    def _openai_params(self, body: dict[str, Any], chat: bool) -> dict[str, Any]:
        max_tokens = body.get("max_completion_tokens") if chat else None
        if max_tokens is None:
            max_tokens = body.get("max_tokens")
        params = {
            "max_new_tokens": max_tokens,
            "temperature": body.get("temperature"),
            "top_k": body.get("top_k"),
            "ignore_eos": body.get("ignore_eos", False),
            "logprobs": body.get("logprobs"),
            "top_logprobs": body.get("top_logprobs"),
            "regex": body.get("regex"),
            "ebnf": body.get("ebnf"),
        }
        fmt = body.get("response_format") or {}
        if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object", "structural_tag"):
            params["json_schema"] = fmt
        return params

    def _usage(self, r: GenerationRequest) -> dict[str, Any]:
        return {"prompt_tokens": r.prompt_tokens, "completion_tokens": r.generated,
                "total_tokens": r.prompt_tokens + r.generated, "prompt_tokens_details": None}

    @staticmethod
    def _finish(r: GenerationRequest) -> str | None:
        return {"length": "length", "stop": "stop", "abort": "abort"}.get(r.finish_reason or "")

    async def completions(self, request: web.Request) -> web.StreamResponse:
        if not self.s.ready:
            return _error("The server is not ready yet.", 503)
        body = await self._json(request)
        prompt = body.get("prompt")
        if isinstance(prompt, list):
            if prompt and isinstance(prompt[0], int):
                prompt_text, n = " ".join(map(str, prompt)), len(prompt)
            else:
                prompt_text = "".join(map(str, prompt))
                n = count_text_tokens(prompt_text)
        elif isinstance(prompt, str):
            prompt_text, n = prompt, count_text_tokens(prompt)
        else:
            raise BadRequest("prompt is required")
        r = self._new_request(prompt_text, n, self._openai_params(body, chat=False), 16)
        created, model = int(time.time()), body.get("model") or self.s.served_model_name
        cid = f"cmpl-{r.rid}"
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

            def chunk(a: int, b: int, done: bool) -> list[Any]:
                out: list[Any] = [{"id": cid, "object": "text_completion", "created": created, "model": model,
                                   "choices": [{"index": 0, "text": self._text(r, a, b), "logprobs": None,
                                                "finish_reason": self._finish(r) if done else None,
                                                "matched_stop": EOS_TOKEN_ID if done and r.finish_reason == "stop" else None}],
                                   "usage": None}]
                if done and include_usage:
                    out.append({"id": cid, "object": "text_completion", "created": created, "model": model,
                                "choices": [], "usage": self._usage(r)})
                return out

            return await self._stream(request, r, chunk)
        await self._run_to_end(r)
        return web.json_response({
            "id": cid, "object": "text_completion", "created": created, "model": model,
            "choices": [{"index": 0, "text": self._text(r, 0, r.generated), "logprobs": None,
                         "finish_reason": self._finish(r),
                         "matched_stop": EOS_TOKEN_ID if r.finish_reason == "stop" else None}],
            "usage": self._usage(r),
        })

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        if not self.s.ready:
            return _error("The server is not ready yet.", 503)
        body = await self._json(request)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("messages is required")
        prompt_text = "\n".join(message_text(m.get("content")) for m in messages if isinstance(m, dict))
        n = count_chat_tokens([m for m in messages if isinstance(m, dict)])
        r = self._new_request(prompt_text, n, self._openai_params(body, chat=True), None)
        created, model = int(time.time()), body.get("model") or self.s.served_model_name
        cid = f"chatcmpl-{r.rid}"
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            first = [True]

            def chunk(a: int, b: int, done: bool) -> list[Any]:
                out: list[Any] = []
                if first[0]:
                    first[0] = False
                    out.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                                "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                             "logprobs": None, "finish_reason": None}], "usage": None})
                if b > a or done:
                    out.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                                "choices": [{"index": 0, "delta": {"content": self._text(r, a, b)} if b > a else {},
                                             "logprobs": None, "finish_reason": self._finish(r) if done else None,
                                             "matched_stop": EOS_TOKEN_ID if done and r.finish_reason == "stop" else None}],
                                "usage": None})
                if done and include_usage:
                    out.append({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                                "choices": [], "usage": self._usage(r)})
                return out

            return await self._stream(request, r, chunk)
        await self._run_to_end(r)
        return web.json_response({
            "id": cid, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self._text(r, 0, r.generated),
                                                  "reasoning_content": None, "tool_calls": None},
                         "logprobs": None, "finish_reason": self._finish(r),
                         "matched_stop": EOS_TOKEN_ID if r.finish_reason == "stop" else None}],
            "usage": self._usage(r),
        })


def build_app(state: ServerState) -> web.Application:
    api = Api(state)

    @web.middleware
    async def errors_and_auth(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if state.api_key and request.path not in ("/health", "/metrics"):
            if request.headers.get("Authorization") != f"Bearer {state.api_key}":
                return web.json_response({"error": "Unauthorized"}, status=401)
        try:
            response = await handler(request)
        except BadRequest as exc:
            response = _error(str(exc))
        if state.access_log is not None:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            where = f"{peer[0]}:{peer[1]}" if peer else "-"
            state.access_log(f'{where} - "{request.method} {request.path} HTTP/1.1" {response.status} {response.reason}')
        return response

    app = web.Application(middlewares=[errors_and_auth], client_max_size=64 * 1024**2)
    app.router.add_get("/health", api.health)
    app.router.add_get("/health_generate", api.health_generate)
    app.router.add_get("/get_model_info", api.model_info)
    app.router.add_get("/get_server_info", api.server_info)
    if state.server_info_alias:
        app.router.add_get("/server_info", api.server_info)
    app.router.add_get("/v1/models", api.models)
    app.router.add_route("*", "/flush_cache", api.flush_cache)
    app.router.add_get("/get_load", api.get_load)
    app.router.add_get("/metrics", api.metrics)
    app.router.add_post("/generate", api.generate)
    app.router.add_post("/v1/completions", api.completions)
    app.router.add_post("/v1/chat/completions", api.chat_completions)
    return app
