"""SGLang's HTTP API over aiohttp: health, info, loads, OpenAI-compatible and native generation, metrics.

The routes are those of the host's release (ReleaseFacts.endpoints) that the
simulator implements: `/get_load` up to 0.5.11, `/ready` from 0.5.23, `/server_info`
and `/model_info` beside their deprecated `get_` names. A finished `/generate`
request's meta_info carries the speculative keys that release names
(tokenizer_manager._calculate_spec_decoding_metrics), and only when it had a verify step.

Streams are Server-Sent Events as SGLang writes them (`data: {...}\n\n`, then
`data: [DONE]\n\n`). One chunk carries every token made since the stream's last
write, so a speculative step that accepts several tokens arrives as one chunk.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import math
import os
import random
import time
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from ...sglang_releases.facts import LATEST, ReleaseFacts, for_version
from ..host.host_paths import as_host_shows
from .engine import Engine, GenerationRequest
from .metrics import render_metrics
from .performance import ids_prompt_text, sampler_seed_material
from .prompt_kind import classify_prompt, thinking_switched_off
from .server_args import reported_server_args
from .tokenizer import count_chat_tokens, count_text_tokens, message_text, synthetic_ids, synthetic_text

EOS_TOKEN_ID = 163586  # Kimi K2's <|im_end|>
MEAN_NATURAL_ANSWER_TOKENS = 350  # answers end on their own (EOS) after ~350 tokens unless ignore_eos
GRAMMAR_KEYS = ("json_schema", "regex", "ebnf", "structural_tag")
LOAD_SECTIONS = frozenset({"core", "memory", "spec", "lora", "disagg", "queues", "all"})
# /v1/loads answers {timestamp, version, accelerator, num_accelerators, loads} from 0.5.23 (LoadSnapshot.to_dict);
# 0.5.10/0.5.11 answer {timestamp, version, dp_rank_count, loads, aggregate} (their v1_loads.py).
LOADS_SNAPSHOT_SINCE = (0, 5, 23)
# 0.5.11's scheduler refuses DFLASH requests for logprobs or grammar-constrained decoding
# (managers/scheduler.py validate_dflash_request); 0.5.23's DFlash worker serves both.
DFLASH_SERVES_LOGPROBS_SINCE = (0, 5, 23)
# When the server received the request being handled (time.monotonic(), set as its handler starts): a request is
# admitted from then, so the server's own handling of it (reading, parsing, preparing the stream) is not scaled
# into modelled time (engine.py).
RECEIVED: contextvars.ContextVar[float | None] = contextvars.ContextVar("received", default=None)


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
    api_key: str | None = None
    incremental_streaming_output: bool = False
    ready: bool = False
    extra_info: dict[str, Any] = field(default_factory=dict)
    access_log: Callable[[str], None] | None = None
    release: ReleaseFacts | None = None  # None: the facts of `version` (the newest modelled when unknown)

    def __post_init__(self) -> None:
        if self.release is None:
            self.release = for_version(self.version or LATEST)

    @property
    def facts(self) -> ReleaseFacts:
        """The release's facts (set by __post_init__)."""
        assert self.release is not None
        return self.release


class BadRequest(Exception):
    pass


def _error(message: str, status: int = 400) -> web.Response:
    return web.json_response(
        {
            "object": "error",
            "message": message,
            "type": "BadRequestError" if status == 400 else "InternalServerError",
            "param": None,
            "code": status,
        },
        status=status,
    )


def _sse(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


class Api:
    def __init__(self, state: ServerState) -> None:
        self.s = state
        self._counter = 0

    # ---------------------------------------------------------------- building requests
    def _new_request(
        self, prompt_text: str, prompt_tokens: int, params: dict[str, Any], max_new_default: int | None
    ) -> GenerationRequest:
        s = self.s
        if s.speculative_algorithm == "DFLASH" and s.facts.version_tuple < DFLASH_SERVES_LOGPROBS_SINCE:
            if params.get("return_logprob") or params.get("logprobs") or params.get("top_logprobs"):
                raise BadRequest("DFLASH speculative decoding does not support return_logprob yet.")
            if any(params.get(k) for k in GRAMMAR_KEYS):
                raise BadRequest("DFLASH speculative decoding does not support grammar-constrained decoding yet.")
        if prompt_tokens >= s.context_length:
            raise BadRequest(
                f"The input ({prompt_tokens} tokens) is longer than the model's context length ({s.context_length} tokens)."
            )
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
        material = sampler_seed_material(s.random_seed, prompt_text, temperature, None if greedy else self._counter)
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
            arrived=RECEIVED.get() or time.monotonic(),
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
        if r.finished:
            meta.update(self._spec_meta(r))
        return meta

    def _spec_meta(self, r: GenerationRequest) -> dict[str, Any]:
        """The release's speculative keys of a finished request; none without a verify step (as SGLang)."""
        if r.sampler is None or r.verify_ct <= 0 or r.num_proposed_drafts <= 0:
            return {}
        correct, proposed = r.num_correct_drafts, r.num_proposed_drafts
        histogram = list(r.correct_drafts_histogram)
        values: dict[str, Any] = {
            "spec_accept_rate": correct / proposed,
            "spec_accept_length": r.generated / r.verify_ct,  # completion_tokens / verify_ct: bonus token included
            "spec_verify_ct": r.verify_ct,
            # The same two counts under each release's names: 0.5.10, 0.5.11, 0.5.23.
            "spec_accept_token_num": correct,
            "spec_accepted_drafts": correct,
            "spec_num_correct_drafts": correct,
            "spec_draft_token_num": proposed,
            "spec_proposed_drafts": proposed,
            "spec_num_proposed_drafts": proposed,
            "spec_accept_histogram": histogram,
            "spec_correct_drafts_histogram": histogram,
        }
        # spec_cap_* and spec_block_accept_length (0.5.23) need ragged-verify modes the simulator does not run.
        return {key: values[key] for key in self.s.facts.meta_info_speculative_keys if key in values}

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

    async def run_internal(
        self, prompt_text: str, prompt_tokens: int, params: dict[str, Any], *, log_metrics: bool = True
    ) -> None:
        """Run a request the server makes itself (the warm-up, /health_generate's probe) to its end."""
        r = self._new_request(prompt_text, prompt_tokens, params, None)
        r.log_metrics = log_metrics
        await self._run_to_end(r)

    def _text(self, r: GenerationRequest, start: int, end: int) -> str:
        return synthetic_text(zlib.crc32(r.rid.encode()), start, end)

    async def _stream(
        self, request: web.Request, r: GenerationRequest, chunk: Callable[[int, int, bool], list[Any]]
    ) -> web.StreamResponse:
        """Stream SSE: `chunk(start, end, finished)` gives the payloads for tokens [start, end)."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        r.responded = False
        self.s.engine.submit(r)
        start = 0
        try:
            while True:
                new, done = await r.next_update()
                if done:
                    await asyncio.sleep(0)  # the batch-mates woken in this turn write their chunks first
                if new or done:
                    for payload in chunk(start, start + new, done):
                        await resp.write(_sse(payload))
                    start += new
                if done:
                    break
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()  # the response ends here, not after the handler returns: the engine waits for it
        except BaseException:
            self.s.engine.abort(r)
            raise
        finally:
            r.responded = True
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
        await self.run_internal(
            "health", 1, {"max_new_tokens": 1, "ignore_eos": True, "temperature": 0}, log_metrics=False
        )
        return web.Response(status=200)

    async def model_info(self, request: web.Request) -> web.Response:
        s = self.s
        info: dict[str, Any] = {"model_path": s.model_path}
        if s.facts.version_tuple >= LOADS_SNAPSHOT_SINCE:  # 0.5.23 names the model and its parsers too
            info.update(served_model_name=s.served_model_name)
        info.update(
            tokenizer_path=s.tokenizer_path,
            is_generation=True,
            preferred_sampling_params=None,
            weight_version="default",
        )
        if s.facts.version_tuple >= LOADS_SNAPSHOT_SINCE:
            info.update({k: s.server_args.get(k) for k in ("load_format", "reasoning_parser", "tool_call_parser")})
            info["disaggregation_mode"] = s.server_args.get("disaggregation_mode", "null")
        info.update(
            has_image_understanding=False,
            has_audio_understanding=False,
            model_type=s.model_type,
            architectures=s.architectures,
        )
        return web.json_response(info)

    def _internal_state(self) -> dict[str, Any]:
        e = self.s.engine
        args = self.s.server_args
        modelled: dict[str, Any] = {
            "last_gen_throughput": round(e.stats.last_gen_throughput, 3),
            "memory_usage": self.s.extra_info.get("memory_usage", {}),
            "effective_max_running_requests_per_dp": e.max_running_requests,
            "world_size": int(args.get("tp_size") or 1) * int(args.get("pp_size") or 1),
            "startup_time": self.s.extra_info.get("startup_time"),
        }
        accept = e.stats.avg_spec_accept_length
        if self.s.speculative_algorithm and accept is not None:  # absent until a decode interval was logged
            modelled["avg_spec_accept_length"] = accept
        # Only what the release's scheduler writes there (sglang_releases: server_info_internal_state_keys).
        known = set(self.s.facts.server_info_internal_state_keys)
        return {k: v for k, v in modelled.items() if k in known and v is not None}

    async def server_info(self, request: web.Request) -> web.Response:
        s = self.s
        info = reported_server_args(s.server_args, s.facts)
        info.update(s.extra_info.get("derived", {}))
        info["internal_states"] = [self._internal_state() for _ in range(max(s.dp_size, 1))]
        info["version"] = s.version
        return web.json_response(info)

    async def models(self, request: web.Request) -> web.Response:
        s = self.s
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {
                        "id": s.served_model_name,
                        "object": "model",
                        "created": int(time.time()),
                        "owned_by": "sglang",
                        "root": s.served_model_name,
                        "parent": None,
                        "max_model_len": s.context_length,
                    }
                ],
            }
        )

    async def flush_cache(self, request: web.Request) -> web.Response:
        e = self.s.engine
        busy = bool(e.running or e.waiting or e.prefilling)
        if not busy:
            e.reset_metrics()  # the scheduler's flush_cache resets its speculative totals too
        return web.Response(
            text="Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting "
            "requests, the operation will not be performed.)\n",
            status=400 if busy else 200,
        )

    @property
    def _ranks(self) -> int:
        return max(self.s.dp_size, 1)

    @staticmethod
    def _share(n: int, rank: int, ranks: int) -> int:
        """Rank `rank`'s part of n requests spread over the DP ranks."""
        return n // ranks + (1 if rank < n % ranks else 0)

    async def get_load(self, request: web.Request) -> web.Response:
        """The legacy shape (0.5.11's shim over /v1/loads): num_reqs counts running and waiting."""
        e, ranks, tic = self.s.engine, self._ranks, time.perf_counter()
        rows = []
        for i in range(ranks):
            running, waiting = self._share(len(e.running), i, ranks), self._share(e.queue_len, i, ranks)
            tokens = self._share(e.num_tokens, i, ranks)
            rows.append(
                {
                    "dp_rank": i,
                    "num_reqs": running + waiting,
                    "num_waiting_reqs": waiting,
                    "num_tokens": tokens,
                    "num_pending_tokens": 0,
                    "ts_tic": tic,
                }
            )
        return web.json_response(rows)

    def _load(self, rank: int, include: set[str] | None) -> dict[str, Any]:
        """One DP rank's entry of /v1/loads, with the release's fields and sections."""
        s, e, ranks = self.s, self.s.engine, self._ranks
        snapshot = s.facts.version_tuple >= LOADS_SNAPSHOT_SINCE
        running, waiting = self._share(len(e.running), rank, ranks), self._share(e.queue_len, rank, ranks)
        used = self._share(e.num_tokens, rank, ranks)
        usage, throughput = round(e.token_usage, 4), round(e.stats.last_gen_throughput / ranks, 2)
        if snapshot:
            load: dict[str, Any] = {
                "timestamp": time.time(),
                "dp_rank": rank,
                "num_running_reqs": running,
                "num_waiting_reqs": waiting,
                "num_waiting_uncached_tokens": 0,
                "num_used_tokens": used,
                "num_total_tokens": used,
                "num_active_tokens": used,
                "num_prealloc_ready_tokens": 0,
                "max_total_num_tokens": e.max_total_tokens,
                "max_running_requests": e.max_running_requests,
                "token_usage": usage,
                "gen_throughput": throughput,
                "cache_hit_rate": 0.0,
                "utilization": usage,
                "total_prefill_uncached_tokens": 0,  # no prefix cache
                "total_prefill_busy_us": 0,
                "decode_moments": None,
            }
        else:
            load = {
                "dp_rank": rank,
                "num_running_reqs": running,
                "num_waiting_reqs": waiting,
                "num_used_tokens": used,
                "max_total_num_tokens": e.max_total_tokens,
                "token_usage": usage,
                "gen_throughput": throughput,
                "cache_hit_rate": 0.0,
                "utilization": usage,
                "max_running_requests": e.max_running_requests,
            }
        if include == {"core"}:
            return load

        def wants(section: str) -> bool:
            return include is None or "all" in include or section in include

        memory = s.extra_info.get("memory_usage") or {}
        if wants("memory") and memory:
            load["memory"] = {
                "weight_gb": memory.get("weight", 0.0),
                "kv_cache_gb": memory.get("kvcache", 0.0),
                "graph_gb": memory.get("graph", 0.0),
                "token_capacity": e.max_total_tokens,
            }
        accept = e.stats.avg_spec_accept_length
        if wants("spec") and s.speculative_algorithm and accept is not None:  # since start or the last flush
            load["speculative"] = {"accept_length": accept, "accept_rate": e.stats.last_accept_rate}
        if wants("disagg"):
            queues = (
                "prefill_bootstrap_queue_reqs" if snapshot else "prefill_prealloc_queue_reqs",
                "prefill_inflight_queue_reqs",
                "decode_prealloc_queue_reqs",
                "decode_transfer_queue_reqs",
                "decode_retracted_queue_reqs",
            )
            load["disaggregation"] = {
                "mode": "null",
                **{q: 0 for q in queues},
                "kv_transfer_speed_gb_s": 0.0,
                "kv_transfer_latency_ms": 0.0,
            }
        if wants("queues"):
            load["queues"] = {
                "waiting": self._share(len(e.waiting), rank, ranks),
                "grammar": 0,
                "paused": 0,
                "retracted": 0,
                **({"prealloc_ready": 0} if snapshot else {}),
            }
        if not snapshot:
            load["num_total_reqs"] = running + waiting
        return load

    async def loads(self, request: web.Request) -> web.Response:
        """/v1/loads: per DP rank load, `?include=core,spec,...`, `?dp_rank=N`, `?format=prometheus`."""
        s = self.s
        text = request.query.get("include")
        include = {part.strip() for part in text.split(",")} if text else None
        if include is not None and not include <= LOAD_SECTIONS:
            return web.json_response(
                {
                    "detail": f"Invalid include sections: {include - LOAD_SECTIONS}. "
                    f"Valid options: {sorted(LOAD_SECTIONS)}"
                },
                status=400,
            )
        ranks: Sequence[int] = range(self._ranks)
        if request.query.get("dp_rank") is not None:
            try:
                wanted = int(request.query["dp_rank"])
            except ValueError:
                return web.json_response({"detail": "dp_rank must be an integer"}, status=422)
            ranks = [r for r in ranks if r == wanted]
        rows = [self._load(r, include) for r in ranks]
        if request.query.get("format") == "prometheus":
            return web.Response(text=_loads_prometheus(rows), content_type="text/plain", charset="utf-8")
        now = datetime.now(UTC).isoformat()
        if s.facts.version_tuple >= LOADS_SNAPSHOT_SINCE:
            args = s.server_args
            gpus = int(args.get("tp_size") or 1) * int(args.get("pp_size") or 1)
            if args.get("enable_dp_attention"):
                gpus //= max(int(args.get("dp_size") or 1), 1)
            return web.json_response(
                {
                    "timestamp": now,
                    "version": s.version,
                    "accelerator": s.extra_info.get("accelerator"),
                    "num_accelerators": gpus,
                    "loads": rows,
                }
            )
        n = len(rows) or 1
        aggregate = {
            "total_running_reqs": sum(r["num_running_reqs"] for r in rows),
            "total_waiting_reqs": sum(r["num_waiting_reqs"] for r in rows),
            "total_reqs": sum(r["num_running_reqs"] + r["num_waiting_reqs"] for r in rows),
            "avg_token_usage": round(sum(r["token_usage"] for r in rows) / n, 4),
            "avg_throughput": round(sum(r["gen_throughput"] for r in rows) / n, 2),
            "avg_utilization": round(sum(r["utilization"] for r in rows) / n, 4),
        }
        return web.json_response(
            {"timestamp": now, "version": s.version, "dp_rank_count": len(rows), "loads": rows, "aggregate": aggregate}
        )

    async def ready_check(self, request: web.Request) -> web.Response:
        return web.Response(status=200 if self.s.ready else 503)

    async def metrics(self, request: web.Request) -> web.Response:
        if not self.s.enable_metrics:
            return web.Response(status=404, text="Not Found")
        return web.Response(
            text=render_metrics(self.s.engine, self.s.served_model_name, self.s.facts),
            content_type="text/plain",
            charset="utf-8",
        )

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
                prompt_text, n = ids_prompt_text(item), max(len(item), 1)
            else:
                prompt_text, n = str(item), count_text_tokens(str(item))
            reqs.append(self._new_request(prompt_text, n, params, 128))
        if body.get("stream") and not batch:
            r = reqs[0]
            seed = zlib.crc32(r.rid.encode())
            # SGLang's native stream repeats the whole text so far unless --incremental-streaming-output.
            first = 0 if not self.s.incremental_streaming_output else None
            return await self._stream(
                request,
                r,
                lambda a, b, done: [
                    {
                        "text": synthetic_text(seed, a if first is None else 0, b),
                        "output_ids": synthetic_ids(seed, a, b),
                        "meta_info": self._meta_info(r),
                    }
                ],
            )
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
            outs.append(
                {
                    "text": synthetic_text(seed, 0, r.generated),
                    "output_ids": synthetic_ids(seed, 0, r.generated),
                    "meta_info": self._meta_info(r),
                }
            )
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
        return {
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.generated,
            "total_tokens": r.prompt_tokens + r.generated,
            "prompt_tokens_details": None,
        }

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
                prompt_text, n = ids_prompt_text(prompt), len(prompt)
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
                out: list[Any] = [
                    {
                        "id": cid,
                        "object": "text_completion",
                        "created": created,
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "text": self._text(r, a, b),
                                "logprobs": None,
                                "finish_reason": self._finish(r) if done else None,
                                "matched_stop": EOS_TOKEN_ID if done and r.finish_reason == "stop" else None,
                            }
                        ],
                        "usage": None,
                    }
                ]
                if done and include_usage:
                    out.append(
                        {
                            "id": cid,
                            "object": "text_completion",
                            "created": created,
                            "model": model,
                            "choices": [],
                            "usage": self._usage(r),
                        }
                    )
                return out

            return await self._stream(request, r, chunk)
        await self._run_to_end(r)
        return web.json_response(
            {
                "id": cid,
                "object": "text_completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "text": self._text(r, 0, r.generated),
                        "logprobs": None,
                        "finish_reason": self._finish(r),
                        "matched_stop": EOS_TOKEN_ID if r.finish_reason == "stop" else None,
                    }
                ],
                "usage": self._usage(r),
            }
        )

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
                    out.append(
                        {
                            "id": cid,
                            "object": "chat.completion.chunk",
                            "created": created,
                            "model": model,
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"role": "assistant", "content": ""},
                                    "logprobs": None,
                                    "finish_reason": None,
                                }
                            ],
                            "usage": None,
                        }
                    )
                if b > a or done:
                    out.append(
                        {
                            "id": cid,
                            "object": "chat.completion.chunk",
                            "created": created,
                            "model": model,
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"content": self._text(r, a, b)} if b > a else {},
                                    "logprobs": None,
                                    "finish_reason": self._finish(r) if done else None,
                                    "matched_stop": EOS_TOKEN_ID if done and r.finish_reason == "stop" else None,
                                }
                            ],
                            "usage": None,
                        }
                    )
                if done and include_usage:
                    out.append(
                        {
                            "id": cid,
                            "object": "chat.completion.chunk",
                            "created": created,
                            "model": model,
                            "choices": [],
                            "usage": self._usage(r),
                        }
                    )
                return out

            return await self._stream(request, r, chunk)
        await self._run_to_end(r)
        return web.json_response(
            {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": self._text(r, 0, r.generated),
                            "reasoning_content": None,
                            "tool_calls": None,
                        },
                        "logprobs": None,
                        "finish_reason": self._finish(r),
                        "matched_stop": EOS_TOKEN_ID if r.finish_reason == "stop" else None,
                    }
                ],
                "usage": self._usage(r),
            }
        )


HOST_ROOT = os.environ.get("SPECOPS_SIM_ROOT", "")  # the world this server runs in (every host command has it)


def build_app(state: ServerState) -> web.Application:
    api = Api(state)

    @web.middleware
    async def errors_and_auth(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        RECEIVED.set(time.monotonic())
        if state.api_key and request.path not in ("/health", "/metrics"):
            if request.headers.get("Authorization") != f"Bearer {state.api_key}":
                return web.json_response({"error": "Unauthorized"}, status=401)
        try:
            response = await handler(request)
        except BadRequest as exc:
            response = _error(str(exc))
        if isinstance(response, web.Response) and isinstance(response.body, bytes) and HOST_ROOT:
            # What the server says names the host's paths (/root/models/x), as the host shows them.
            if HOST_ROOT.encode() in response.body:
                shown = as_host_shows(HOST_ROOT, response.body.decode("utf-8", "surrogateescape"))
                response.body = shown.encode("utf-8", "surrogateescape")
        if state.access_log is not None:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            where = f"{peer[0]}:{peer[1]}" if peer else "-"
            state.access_log(
                f'{where} - "{request.method} {request.path} HTTP/1.1" {response.status} {response.reason}'
            )
        return response

    app = web.Application(middlewares=[errors_and_auth], client_max_size=64 * 1024**2)
    # What the simulator implements, registered where the host's release has the route.
    routes: list[tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]] = [
        ("GET", "/health", api.health),
        ("GET", "/health_generate", api.health_generate),
        ("GET", "/ready", api.ready_check),
        ("GET", "/model_info", api.model_info),
        ("GET", "/get_model_info", api.model_info),
        ("GET", "/server_info", api.server_info),
        ("GET", "/get_server_info", api.server_info),
        ("GET", "/v1/models", api.models),
        ("*", "/flush_cache", api.flush_cache),
        ("GET", "/get_load", api.get_load),
        ("GET", "/v1/loads", api.loads),
        ("GET", "/metrics", api.metrics),
        ("POST", "/generate", api.generate),
        ("POST", "/v1/completions", api.completions),
        ("POST", "/v1/chat/completions", api.chat_completions),
    ]
    offered = set(state.facts.endpoints)
    for method, path, handler in routes:
        if path in offered and method == "GET":
            app.router.add_get(path, handler)
        elif path in offered:
            app.router.add_route(method, path, handler)
    return app


def _loads_prometheus(rows: list[dict[str, Any]]) -> str:
    """/v1/loads?format=prometheus: every numeric field a gauge per dp_rank, sections prefixed (spec_, disagg_)."""
    prefixes = {"speculative": "spec", "disaggregation": "disagg"}
    samples: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        rank = row["dp_rank"]
        for key, value in row.items():
            if key == "dp_rank":
                continue
            if isinstance(value, dict):
                for sub, sub_value in value.items():
                    if isinstance(sub_value, (int, float)) and not isinstance(sub_value, bool):
                        samples.setdefault(f"sglang_{prefixes.get(key, key)}_{sub}", []).append((rank, sub_value))
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                samples.setdefault(f"sglang_{key}", []).append((rank, value))
    lines = []
    for name, values in samples.items():
        lines.append(f"# TYPE {name} gauge")
        lines += [f'{name}{{dp_rank="{rank}"}} {value}' for rank, value in values]
    return "\n".join(lines) + "\n"
