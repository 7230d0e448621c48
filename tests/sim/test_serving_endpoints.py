"""The rest of the serving simulator's HTTP API, over real HTTP: what SGLang answers and how it streams."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest

from specops.sim.world.clock import WorldClock
from specops.sim.world.ports import resolve_port

from .serving_world import build_world, launch_args, start_server, stop_server, wait_ready

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


@pytest.fixture(scope="module")
def dflash_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("endpoints")
    layout = build_world(tmp / "host")
    log = tmp / "server.log"
    proc = start_server(layout, launch_args(layout, "--ep", "4", "--decode-log-interval", "5", dflash=True), log)
    try:
        wait_ready(proc, log)
        yield f"http://127.0.0.1:{resolve_port(layout, 30000)}", log, layout
    finally:
        stop_server(proc)


def _post(url: str, body: dict) -> urllib.request.Request:
    return urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def _sse(response) -> list[dict]:
    events = []
    for raw in response.read().decode().splitlines():
        if raw.startswith("data: ") and raw != "data: [DONE]":
            events.append(json.loads(raw.removeprefix("data: ")))
    return events


def test_health_generate_and_model_info(dflash_server):
    base, _, layout = dflash_server
    assert urllib.request.urlopen(f"{base}/health_generate").status == 200
    info = json.loads(urllib.request.urlopen(f"{base}/get_model_info").read())
    assert info["model_path"].endswith("models/Kimi-K2.6") and info["is_generation"] is True
    models = json.loads(urllib.request.urlopen(f"{base}/v1/models").read())
    assert models["object"] == "list" and models["data"][0]["owned_by"] == "sglang"


def test_streaming_chat_completions_end_with_done_and_usage(dflash_server):
    base, _, _ = dflash_server
    body = {
        "model": "x",
        "messages": [{"role": "user", "content": "Tell me about the sea."}],
        "max_tokens": 40,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
    }
    with urllib.request.urlopen(_post(f"{base}/v1/chat/completions", body)) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = _sse(response)
    deltas = [e for e in events if e.get("choices")]
    assert deltas[0]["object"] == "chat.completion.chunk"
    assert "".join(d["choices"][0]["delta"].get("content") or "" for d in deltas)
    usage = [e["usage"] for e in events if e.get("usage")]
    assert usage and usage[-1]["completion_tokens"] == 40
    # Speculative decoding: fewer chunks than tokens.
    assert len([d for d in deltas if d["choices"][0]["delta"].get("content")]) < 40


def test_flush_cache_answers_and_the_decode_log_reports_accept_length(dflash_server):
    base, log, _ = dflash_server
    body = {
        "text": "Solve 12 + 30 = ?",
        "sampling_params": {"max_new_tokens": 64, "ignore_eos": True, "temperature": 0},
    }
    meta = json.loads(urllib.request.urlopen(_post(f"{base}/generate", body)).read())["meta_info"]
    assert meta["completion_tokens"] == 64 and meta["spec_verify_ct"] < 64
    assert urllib.request.urlopen(urllib.request.Request(f"{base}/flush_cache", method="POST")).status == 200
    lines = [line for line in Path(log).read_text().splitlines() if "Decode batch" in line]
    assert lines, "no decode log line"
    match = re.search(
        r"Decode batch, #running-req: \d+, #token: \d+, token usage: [\d.]+, accept len: ([\d.]+), "
        r"accept rate: [\d.]+, cuda graph: (True|False), gen throughput \(token/s\): [\d.]+, #queue-req: \d+,",
        lines[-1],
    )
    assert match, lines[-1]
    assert 1.0 <= float(match.group(1)) <= 8.0


@pytest.mark.slow
@pytest.mark.serial  # a whole core for the server: its steps keep pace with the clock at scale 1
def test_at_time_scale_1_the_server_runs_at_the_modelled_speed(tmp_path):
    import asyncio

    from .serving_client import measure_throughput

    # load_seconds is modelled time: at scale 1 a 2 s load takes 2 s.
    layout = build_world(tmp_path / "host", time_scale=1.0, load_seconds=2.0)
    log = tmp_path / "server.log"
    proc = start_server(layout, launch_args(layout, "--ep", "4"), log)
    try:
        wait_ready(proc, log, timeout=30)
        url = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
        tok_s, per_chunk = asyncio.run(
            measure_throughput(url, 1, 2.0, ["Tell me about the sea."], clock=WorldClock(layout.sim_dir).now)
        )
    finally:
        stop_server(proc)
    assert tok_s == pytest.approx(69.0, rel=0.05)  # seed-ct200's EP4 at C=1, measured on the real host
    # One token a chunk, autoregressive; a busy machine's late timer merges the odd pair (seen: 1.04 beside two
    # busy processes), which leaves the tokens per second as modelled.
    assert per_chunk == pytest.approx(1.0, abs=0.1)
