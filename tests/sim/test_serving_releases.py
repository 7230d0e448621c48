"""The serving simulator's HTTP API is the host's SGLang release's: routes, meta_info keys, /v1/loads, counters.

Each modelled release (specops.sglang_releases: 0.5.10.post1, 0.5.11, 0.5.23) is
served in-process over real HTTP (aiohttp's test server) by the simulator's own
engine, fast (time scale 1000), so every release is checked in a second or two:
- routes: /get_load up to 0.5.11, /ready from 0.5.23, /server_info and /model_info
  beside their deprecated /get_ names, /v1/loads in each release's shape;
- a finished /generate request carries the speculative keys that release names,
  and only after a verify step (none on a request that never decoded, none from a
  server without a drafter, none on a stream's chunks before its last);
- /server_info's avg_spec_accept_length: absent until a decode interval is logged,
  then tokens / verify steps over every logged interval since start, reset by a
  successful /flush_cache (SGLang's reset_metrics);
- /metrics: the finished-request counters whose differences give an interval's
  acceptance (sglang:spec_verify_calls_total from 0.5.23), health probes left out.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from specops.sglang_releases import facts
from specops.sim.profiles import load_profile
from specops.sim.serving.engine import Engine
from specops.sim.serving.http_api import ServerState, build_app
from specops.sim.serving.performance import Launch, build_performance_model
from specops.sim.serving.server_args import parse_server_args

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

PROFILE = load_profile("seed-ct200")
VERSIONS = ("0.5.10.post1", "0.5.11", "0.5.23")
BLOCK = 8
# Keys only SGLang's ragged-verify modes add (0.5.23); the simulator does not run them.
CAP_KEYS = {"spec_cap_lens_histogram", "spec_cap_length", "spec_block_accept_length"}
ACCEPTED = {
    "0.5.10.post1": "spec_accept_token_num",
    "0.5.11": "spec_accepted_drafts",
    "0.5.23": "spec_num_correct_drafts",
}
PROPOSED = {
    "0.5.10.post1": "spec_draft_token_num",
    "0.5.11": "spec_proposed_drafts",
    "0.5.23": "spec_num_proposed_drafts",
}
MATH = "Solve for x: 3x + 7 = 22. Show the steps and give x."
CHAT = "Tell me about the sea, the ships on it and the people who sail them."


def _state(
    version: str, *, speculative: bool = True, decode_log_interval: int = 1, time_scale: float = 1000.0
) -> ServerState:
    algorithm = "DFLASH" if speculative else None
    model = build_performance_model(PROFILE.serving, Launch(tp=8, ep=4, speculative_algorithm=algorithm), BLOCK)
    engine = Engine(
        model=model,
        time_scale=time_scale,
        max_running_requests=64,
        max_total_tokens=200_000,
        cuda_graph_max_bs=64,
        cuda_graphs=True,
        decode_log_interval=decode_log_interval,
        decode_log=lambda _: None,
        prefill_log=lambda _: None,
        accept_rate_in_log=True,
    )
    return ServerState(
        engine=engine,
        served_model_name="Kimi-K2.6",
        model_path="/models/Kimi-K2.6",
        tokenizer_path="/models/Kimi-K2.6",
        model_type="kimi_k25",
        architectures=["KimiK25ForConditionalGeneration"],
        context_length=262_144,
        version=version,
        server_args={
            "tp_size": 8,
            "ep_size": 4,
            "pp_size": 1,
            "dp_size": 1,
            "speculative_algorithm": algorithm,
            "speculative_num_draft_tokens": BLOCK,
        },
        speculative_algorithm=algorithm,
        random_seed=1,
        dp_size=1,
        enable_metrics=True,
        ready=True,
        extra_info={"memory_usage": {"weight": 69.2, "kvcache": 40.1, "graph": 2.0, "token_capacity": 200_000}},
        release=facts.load(version),
    )


def _serve(state: ServerState, body: Callable[[TestClient], Awaitable[Any]]) -> Any:
    async def run() -> Any:
        state.engine.start()
        try:
            async with TestClient(TestServer(build_app(state))) as client:
                return await body(client)
        finally:
            await state.engine.stop()

    return asyncio.run(run())


async def _generate(client: TestClient, text: str, max_new_tokens: int = 64) -> dict[str, Any]:
    body = {"text": text, "sampling_params": {"max_new_tokens": max_new_tokens, "ignore_eos": True, "temperature": 0}}
    async with client.post("/generate", json=body) as response:
        assert response.status == 200, await response.text()
        return (await response.json())["meta_info"]


def _spec_keys(meta: dict[str, Any]) -> set[str]:
    return {k for k in meta if k.startswith("spec_")}


@pytest.mark.parametrize("version", VERSIONS)
def test_routes_are_the_releases(version):
    release = facts.load(version)

    async def body(client: TestClient) -> dict[str, int]:
        statuses = {}
        for path in (
            "/health",
            "/ready",
            "/server_info",
            "/get_server_info",
            "/model_info",
            "/get_model_info",
            "/get_load",
            "/v1/loads",
            "/v1/models",
            "/metrics",
        ):
            async with client.get(path) as response:
                statuses[path] = response.status
        return statuses

    statuses = _serve(_state(version), body)
    assert statuses["/get_load"] == (200 if "/get_load" in release.endpoints else 404)
    assert statuses["/ready"] == (200 if version == "0.5.23" else 404)
    assert ("/get_load" in release.endpoints) == (version != "0.5.23")
    for path in (
        "/health",
        "/server_info",
        "/get_server_info",
        "/model_info",
        "/get_model_info",
        "/v1/loads",
        "/v1/models",
        "/metrics",
    ):
        assert statuses[path] == 200, path


@pytest.mark.parametrize("version", VERSIONS)
def test_v1_loads_answers_in_the_releases_shape(version):
    async def body(client: TestClient) -> tuple[dict, dict, int, str]:
        await _generate(client, CHAT, 96)
        async with client.get("/v1/loads") as everything, client.get("/v1/loads?include=core") as core:
            full, bare = await everything.json(), await core.json()
        async with client.get("/v1/loads?include=bogus") as bad:
            status = bad.status
        async with client.get("/v1/loads?format=prometheus") as prometheus:
            text = await prometheus.text()
        return full, bare, status, text

    full, bare, bad_status, prometheus = _serve(_state(version), body)
    load = full["loads"][0]
    assert load["dp_rank"] == 0 and load["num_running_reqs"] == 0 and load["max_total_num_tokens"] == 200_000
    assert load["speculative"]["accept_length"] > 1.0 and load["memory"]["token_capacity"] == 200_000
    if version == "0.5.23":  # LoadSnapshot.to_dict
        assert {"timestamp", "version", "accelerator", "num_accelerators", "loads"} == set(full)
        assert full["num_accelerators"] == 8 and "num_total_tokens" in load and "prealloc_ready" in load["queues"]
    else:  # the dataclass shape with an aggregate
        assert {"timestamp", "version", "dp_rank_count", "loads", "aggregate"} == set(full)
        assert load["num_total_reqs"] == 0 and full["aggregate"]["total_reqs"] == 0
    assert not {"memory", "speculative", "queues", "disaggregation"} & set(bare["loads"][0])
    assert bad_status == 400
    assert 'sglang_spec_accept_length{dp_rank="0"}' in prometheus


@pytest.mark.parametrize("version", VERSIONS)
def test_a_finished_request_carries_the_releases_speculative_keys(version):
    release = facts.load(version)

    async def streamed(client: TestClient) -> list[dict]:
        payload = {
            "text": CHAT,
            "stream": True,
            "sampling_params": {"max_new_tokens": 48, "ignore_eos": True, "temperature": 0},
        }
        events = []
        async with client.post("/generate", json=payload) as response:
            async for line in response.content:
                if line.startswith(b"data: {"):
                    events.append(json.loads(line[6:])["meta_info"])
        return events

    meta = _serve(_state(version), lambda client: _generate(client, MATH, 64))
    # In real time: a stream sends what was decoded since its last chunk, so at time
    # scale 1000 a busy test machine can receive the whole answer in one or two chunks.
    events = _serve(_state(version, time_scale=1.0), streamed)
    assert _spec_keys(meta) == set(release.meta_info_speculative_keys) - CAP_KEYS
    verify, tokens = meta["spec_verify_ct"], meta["completion_tokens"]
    assert tokens == 64 and 0 < verify < 64
    assert meta["spec_accept_length"] == pytest.approx(tokens / verify)  # the bonus token included
    assert meta[ACCEPTED[version]] == tokens - verify and meta[PROPOSED[version]] == verify * (BLOCK - 1)
    assert meta["spec_accept_rate"] == pytest.approx((tokens - verify) / (verify * (BLOCK - 1)))
    # Streamed: the keys come with the request's end only.
    assert len(events) > 2 and all(not _spec_keys(e) for e in events[:-1])
    assert _spec_keys(events[-1]) == _spec_keys(meta) and events[-1]["completion_tokens"] == 48


def test_no_speculative_keys_without_a_verify_step():
    async def body(client: TestClient) -> dict:
        return await _generate(client, CHAT, 0)  # done at prefill: never decoded, never verified

    assert _spec_keys(_serve(_state("0.5.23"), body)) == set()
    plain = _serve(_state("0.5.23", speculative=False), lambda client: _generate(client, CHAT, 32))
    assert plain["completion_tokens"] == 32 and _spec_keys(plain) == set()


@pytest.mark.parametrize("version", ("0.5.10.post1", "0.5.23"))
def test_avg_spec_accept_length_is_cumulative_since_start_and_reset_by_flush(version):
    async def info(client: TestClient) -> dict:
        async with client.get("/server_info") as response:
            return (await response.json())["internal_states"][0]

    async def body(client: TestClient) -> tuple[dict, list[dict], dict, dict, dict]:
        before = await info(client)
        metas = [await _generate(client, MATH, 200), await _generate(client, CHAT, 200)]  # one after the other
        after = await info(client)
        async with client.post("/flush_cache") as flushed:
            assert flushed.status == 200
        reset = await info(client)
        again = await _generate(client, CHAT, 120)
        return before, metas, after, reset, {"meta": again, "state": await info(client)}

    before, metas, after, reset, last = _serve(_state(version), body)
    assert "avg_spec_accept_length" not in before  # no decode interval logged yet
    # Only keys the release's scheduler writes (0.5.23 has no `load`, 0.5.10 no `world_size`).
    assert set(after) <= set(facts.load(version).server_info_internal_state_keys)
    assert {"last_gen_throughput", "memory_usage", "effective_max_running_requests_per_dp"} <= set(after)
    # Every step logged (interval 1): the average is all tokens over all verify steps since start, both requests.
    pooled = sum(m["completion_tokens"] for m in metas) / sum(m["spec_verify_ct"] for m in metas)
    assert after["avg_spec_accept_length"] == pytest.approx(pooled)
    assert metas[0]["spec_accept_length"] != pytest.approx(metas[1]["spec_accept_length"])  # two kinds, two rates
    assert "avg_spec_accept_length" not in reset
    assert last["state"]["avg_spec_accept_length"] == pytest.approx(last["meta"]["spec_accept_length"])


@pytest.mark.parametrize("version", VERSIONS)
def test_metrics_counters_give_an_intervals_acceptance_where_the_release_has_them(version):
    release = facts.load(version)

    async def scrape(client: TestClient) -> dict[str, float]:
        async with client.get("/metrics") as response:
            text = await response.text()
        values: dict[str, float] = {}
        for line in text.splitlines():
            name = line.split("{", 1)[0]
            if line.startswith("sglang:") and not name.endswith(("_bucket", "_sum", "_count")):  # histogram parts
                values[name] = values.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
        return values

    async def body(client: TestClient) -> tuple[dict, dict, list[dict]]:
        await _generate(client, MATH, 64)
        first = await scrape(client)
        metas = [await _generate(client, CHAT, 100) for _ in range(3)]
        async with client.get("/health_generate") as health:
            assert health.status == 200
        return first, await scrape(client), metas

    first, second, metas = _serve(_state(version), body)
    names = set(first)
    assert names <= set(release.metrics), names - set(release.metrics)
    tokens = second["sglang:generation_tokens_total"] - first["sglang:generation_tokens_total"]
    assert tokens == sum(m["completion_tokens"] for m in metas)  # the health probe is not counted
    if "sglang:spec_verify_calls_total" in release.metrics:
        steps = second["sglang:spec_verify_calls_total"] - first["sglang:spec_verify_calls_total"]
        assert steps == sum(m["spec_verify_ct"] for m in metas)
        assert tokens / steps == pytest.approx(
            sum(m["completion_tokens"] for m in metas) / sum(m["spec_verify_ct"] for m in metas)
        )
    else:
        assert "sglang:spec_verify_calls_total" not in names


def _dp_attention_info(version: str, *flags: str) -> dict[str, Any]:
    """/server_info of a server launched with these flags (the cap filled in as the launcher fills it)."""
    args = parse_server_args(["--model-path", "/models/Kimi-K2.6", "--tp", "8", *flags], facts.load(version))
    args.cuda_graph_max_bs = args.cuda_graph_max_bs or 160
    state = _state(version, speculative=False)
    state.server_args = {**args.model_dump(), "chunked_prefill_size": 8192}
    state.dp_size = args.dp_size if args.enable_dp_attention else 1

    async def body(client: TestClient) -> dict[str, Any]:
        async with client.get("/server_info") as response:
            return await response.json()

    return _serve(state, body)


def test_server_info_under_dp_attention_is_0_5_23s_resolved_record():
    # The deprecated spelling, rewritten as SGLang rewrites it: attn_dp_size 8, dp_size 1 (no replicas).
    old_spelling = _dp_attention_info(
        "0.5.23", "--dp-size", "8", "--enable-dp-attention", "--cuda-graph-max-bs-decode", "64"
    )
    new_spelling = _dp_attention_info(
        "0.5.23",
        "--attn-dp-size",
        "8",
        "--cuda-graph-backend-decode",
        "disabled",
        "--cuda-graph-backend-prefill",
        "disabled",
    )
    for info in (old_spelling, new_spelling):
        assert (info["dp_size"], info["attn_dp_size"], info["enable_dp_attention"]) == (1, 8, True)
        assert len(info["internal_states"]) == 8  # one per attention-DP rank
        assert "cuda_graph_max_bs" not in info and "cuda_graph_max_bs_decode" in info  # 0.5.23 has no such field
        assert set(info["cuda_graph_config"]) == {"decode", "prefill"}
    assert (
        old_spelling["cuda_graph_max_bs_decode"] == 64 and old_spelling["cuda_graph_config"]["decode"]["max_bs"] == 64
    )
    assert old_spelling["cuda_graph_config"]["decode"]["backend"] == "full"
    assert old_spelling["cuda_graph_config"]["decode"]["bs"][:5] == [1, 2, 4, 8, 12]  # SGLang's capture sizes
    # Given nothing: the input field stays null and the resolved cap is in cuda_graph_config.
    assert (
        new_spelling["cuda_graph_max_bs_decode"] is None
        and new_spelling["cuda_graph_config"]["decode"]["max_bs"] == 160
    )
    # --cuda-graph-backend-* fold into cuda_graph_config; disable_cuda_graph is the deprecated flag's alone.
    assert new_spelling["disable_cuda_graph"] is False
    assert {p["backend"] for p in new_spelling["cuda_graph_config"].values()} == {"disabled"}
    deprecated = _dp_attention_info("0.5.23", "--disable-cuda-graph")
    assert (
        deprecated["disable_cuda_graph"] is True and deprecated["cuda_graph_config"]["decode"]["backend"] == "disabled"
    )
    assert (deprecated["dp_size"], deprecated["attn_dp_size"], deprecated["enable_dp_attention"]) == (1, 1, False)


def test_server_info_under_dp_attention_up_to_0_5_11_is_the_parsed_record():
    info = _dp_attention_info("0.5.11", "--dp-size", "8", "--enable-dp-attention", "--cuda-graph-max-bs", "64")
    assert (info["dp_size"], info["enable_dp_attention"], info["cuda_graph_max_bs"]) == (8, True, 64)
    assert "attn_dp_size" not in info and "cuda_graph_config" not in info and info["disable_cuda_graph"] is False
