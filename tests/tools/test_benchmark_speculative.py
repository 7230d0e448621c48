"""Speculative streams on sim:seed-ct200: a chunk carries several tokens, and the benchmark counts them right.

A DFlash server at time scale 50 (timing accuracy is test_benchmark_sim.py's job):
token totals come from the server (meta_info / usage), never one per chunk.
"""

from __future__ import annotations

import pytest

from specops.tools.benchmark import BenchmarkArgs, run_benchmark
from specops.tools.context import ToolContext

from .test_benchmark_sim import PROFILE, launch
from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(120), pytest.mark.serial, pytest.mark.slow]
TIME_SCALE = 50.0
FAST_LOAD = PROFILE.model_copy(
    update={
        "serving": PROFILE.serving.model_copy(
            update={"target": PROFILE.serving.target.model_copy(update={"load_seconds": 2 * TIME_SCALE})}
        )
    }
)


@pytest.fixture(scope="module")
def sim_world():
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world:
        yield world


def test_several_tokens_per_chunk_are_counted_from_the_server(sim_world):
    with reach(sim_world, "sim") as host:
        home = str(sim_world.layout.home)
        host.run(
            ["hf", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", "--local-dir", f"{home}/models/dflash"], timeout=120
        ).check()
        server = launch(
            host,
            home,
            "logs/sglang-dflash.log",
            "--speculative-algorithm",
            "DFLASH",
            "--speculative-draft-model-path",
            f"{home}/models/dflash",
        )
        ctx = ToolContext.for_host(host)
        try:
            native = run_benchmark(
                ctx, BenchmarkArgs(levels=[1, 8], prompts="chat", output_len=200, rounds=1, api="sglang")
            )
            openai = run_benchmark(
                ctx, BenchmarkArgs(levels=[8], prompts="code", output_len=200, rounds=1, api="openai")
            )
        finally:
            host.stop(server)
    assert native.speculative_algorithm == "DFLASH" and openai.model
    for level in native.levels + openai.levels:
        assert level.total_output_tokens == 200 * level.concurrency  # not one token per chunk
        assert level.tokens_per_chunk > 2.0
        assert 3.0 < level.accept_length_lifetime < 4.2  # the server's own average, kept apart
        # TPOT is per token; a chunk gap spans tokens_per_chunk tokens.
        gap, tpot = level.inter_chunk_gap.mean_ms, level.tpot.mean_ms
        assert gap == pytest.approx(tpot * level.tokens_per_chunk, rel=0.25)
    for level in native.levels:  # native stream: per-chunk counts, so ITL is per token
        # The level's own acceptance from its requests' meta_info (a chunk may carry several steps' tokens).
        assert level.accept_length_source == "meta_info" and 3.0 < level.accept_length < 4.2
        assert level.accept_length == pytest.approx(level.total_output_tokens / level.accept_verify_steps)
        assert level.itl_per_token.samples > level.inter_chunk_gap.samples
        assert level.itl_per_token.mean_ms == pytest.approx(level.tpot.mean_ms, rel=0.15)
    assert openai.levels[0].itl_per_token is None  # no per-chunk usage from the server: not guessed
    assert any("no per-chunk counts" in w for w in openai.warnings)
