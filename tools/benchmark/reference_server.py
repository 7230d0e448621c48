"""A streaming server with known timing, to measure a benchmark client's own error and ceiling.

    python3 reference_server.py --port 18000 --ttft-ms 40 --chunk-ms 8 --tokens-per-chunk 4

Speaks OpenAI `/v1/completions` (SSE, `stream_options.include_usage` honoured,
`continuous_usage_stats` too), `/v1/models` and `/health`; with `--metrics`, also
`/metrics` with SGLang's load gauges (`sglang:num_running_reqs`: the streams in
progress, `sglang:num_queue_reqs`: 0, `sglang:token_usage`: running / 100); nothing else. Every request
waits `ttft-ms`, then sends one chunk every `chunk-ms` carrying
`tokens-per-chunk` tokens until `max_tokens`; chunk k is due at start + ttft +
k * chunk (a fixed schedule, so a late write does not push the rest back).
With `--chunk-ms 0` it streams as fast as it can: a client's ingest ceiling.
Standard library only, so it can be uploaded to and run on any host.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any


class ReferenceServer:
    def __init__(self, ttft_s: float, chunk_s: float, tokens_per_chunk: int, model: str, metrics: bool = False) -> None:
        self.ttft_s, self.chunk_s, self.tokens_per_chunk, self.model = ttft_s, chunk_s, tokens_per_chunk, model
        self.metrics = metrics
        self.running = 0  # streams in progress

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    return
                method, path, _ = request_line.decode("latin-1").split(" ", 2)
                length = 0
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    key, _, value = line.decode("latin-1").partition(":")
                    if key.strip().lower() == "content-length":
                        length = int(value.strip())
                body = json.loads(await reader.readexactly(length)) if length else {}
                if path == "/health":
                    self._json(writer, 200, {})
                elif path == "/v1/models":
                    self._json(writer, 200, {"object": "list", "data": [{"id": self.model, "object": "model"}]})
                elif path == "/v1/completions" and method == "POST" and body.get("stream"):
                    self.running += 1
                    try:
                        await self._stream(writer, body)
                    finally:
                        self.running -= 1
                elif path == "/metrics" and self.metrics:
                    self._metrics(writer)
                else:
                    self._json(writer, 404, {"error": f"no route {method} {path}"})
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    def _metrics(self, writer: asyncio.StreamWriter) -> None:
        labels = f'{{model_name="{self.model}",engine_type="unified",tp_rank="0",pp_rank="0"}}'
        lines = []
        for name, value in (
            ("sglang:num_running_reqs", self.running),
            ("sglang:num_queue_reqs", 0),
            ("sglang:token_usage", round(self.running / 100, 4)),
        ):
            lines += [f"# HELP {name} {name}", f"# TYPE {name} gauge", f"{name}{labels} {value}"]
        data = ("\n".join(lines) + "\n").encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %d\r\n\r\n" % len(data)
            + data
        )

    @staticmethod
    def _json(writer: asyncio.StreamWriter, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        writer.write(
            b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (status, len(data))
            + data
        )

    async def _stream(self, writer: asyncio.StreamWriter, body: dict[str, Any]) -> None:
        start = time.perf_counter()
        total = int(body.get("max_tokens") or 16)
        options = body.get("stream_options") or {}
        per_chunk_usage = bool(options.get("continuous_usage_stats"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        sent, k = 0, 0
        while sent < total:
            due = start + self.ttft_s + k * self.chunk_s
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if writer.is_closing():  # the client went away (a cut request): stop, as a server aborts it
                return
            n = min(self.tokens_per_chunk, total - sent)
            sent += n
            k += 1
            event: dict[str, object] = {
                "object": "text_completion",
                "model": self.model,
                "choices": [{"index": 0, "text": " tok" * n, "finish_reason": "length" if sent >= total else None}],
            }
            if per_chunk_usage:
                event["usage"] = {"prompt_tokens": 8, "completion_tokens": sent, "total_tokens": 8 + sent}
            self._chunk(writer, b"data: " + json.dumps(event).encode() + b"\n\n")
            if self.chunk_s == 0 and k % 64 == 0:
                await writer.drain()
        if options.get("include_usage"):
            usage = {"prompt_tokens": 8, "completion_tokens": sent, "total_tokens": 8 + sent}
            self._chunk(
                writer,
                b"data: " + json.dumps({"object": "text_completion", "choices": [], "usage": usage}).encode() + b"\n\n",
            )
        self._chunk(writer, b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")

    @staticmethod
    def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(b"%x\r\n" % len(data) + data + b"\r\n")


async def serve(port: int, server: ReferenceServer) -> None:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", port)
    print(f"reference server listening on 127.0.0.1:{listener.sockets[0].getsockname()[1]}", flush=True)
    async with listener:
        await listener.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ttft-ms", type=float, default=40.0)
    parser.add_argument("--chunk-ms", type=float, default=8.0)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    parser.add_argument("--model", default="reference")
    parser.add_argument("--metrics", action="store_true", help="Serve /metrics with SGLang's load gauges")
    a = parser.parse_args()
    server = ReferenceServer(a.ttft_ms / 1e3, a.chunk_ms / 1e3, a.tokens_per_chunk, a.model, a.metrics)
    asyncio.run(serve(a.port, server))


if __name__ == "__main__":
    main()
