"""EAGLE, EAGLE3, NEXTN, STANDALONE and NGRAM through the serving simulator, as real `launch_server` processes.

Each algorithm launches on its profile with SGLang's resolved settings (reported by /server_info) and serves with
the accept length those settings imply; each start-up refusal prints the release's own message; a draft model of
the wrong kind or width fails where SGLang's worker meets it, after the target has loaded; and the targets of one
profile each serve at their own speed.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from specops.sglang_releases.facts import load
from specops.sim.hub.fixtures import FIXTURES_DIR
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import PromptKind
from specops.sim.serving.performance import Launch, build_performance_model
from specops.sim.world.clock import WorldClock
from specops.sim.world.layout import WorldLayout
from specops.sim.world.ports import resolve_port

from .serving_calibration import CHAT
from .serving_client import generate, measure_throughput
from .serving_world import TARGET_DIR, build_world, run_launch, start_server, stop_server, wait_ready, write_model

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

RELEASE = load("0.5.23")
KIMI_EAGLE3 = "models/kimi-k2.6-eagle3.1-mla"
LLAMA_EAGLE3 = "models/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge"
QWEN_DRAFT = "models/Qwen3-0.6B"
LLAMA = "models/Llama-3.1-8B-Instruct"
DEEPSEEK = "/data/models/DeepSeek-V3"
QWEN = "/data/models/Qwen3-32B"
# What each model weighs as the fixture declares it (GiB), and the fixture laid down.
MODELS = {
    KIMI_EAGLE3: ("lightseekorg/kimi-k2.6-eagle3.1-mla", 5.6),
    LLAMA_EAGLE3: ("lmsys/SGLang-EAGLE3-Llama-3.1-8B-Instruct-SpecForge", 0.8),
    QWEN_DRAFT: ("Qwen/Qwen3-0.6B", 1.4),
    LLAMA: ("meta-llama/Llama-3.1-8B-Instruct", 15.0),
    DEEPSEEK: ("deepseek-ai/DeepSeek-V3", 641.3),
    QWEN: ("Qwen/Qwen3-32B", 61.0),
}
WARN_MAX_RUNNING = (
    "Max running requests is reset to 48 for speculative decoding. You can override this by explicitly setting "
    "--max-running-requests."
)


def fixture_config(repo: str) -> dict[str, Any]:
    return json.loads((FIXTURES_DIR / repo / "main" / "config.json").read_text())


def algorithms_world(
    root: Path,
    profile_name: str = "seed-ct200",
    *,
    sglang: str | None = None,
    time_scale: float = 100.0,
    configs: dict[str, dict[str, Any]] | None = None,
) -> WorldLayout:
    """serving_world's world (the Kimi target, a DFlash drafter) on `profile_name`, with the EAGLE3 drafters, the
    other targets and their drafters laid down; every target loads in 2 modelled seconds."""
    profile = load_profile(profile_name)
    quick = [
        s.model_copy(update={"target": s.target.model_copy(update={"load_seconds": 2})})
        for s in profile.additional_serving
    ]
    profile = profile.model_copy(update={"additional_serving": quick})
    layout = build_world(root, profile=profile, time_scale=time_scale, load_seconds=2, sglang=sglang)
    for path, (repo, gib) in MODELS.items():
        shards = 8 if gib > 100 else 1
        config = (configs or {}).get(path) or fixture_config(repo)
        write_model(layout.host_path(path), config, shards, int(gib * 1024**3 / profile.sim.byte_scale / shards))
    return layout


def kimi_args(layout: WorldLayout, *extra: str) -> list[str]:
    return ["--model-path", str(layout.home / TARGET_DIR), "--tp", "8", "--trust-remote-code", *extra]


def draft(layout: WorldLayout, path: str) -> list[str]:
    return ["--speculative-draft-model-path", str(layout.host_path(path))]


def server_info(base: str) -> dict[str, Any]:
    return json.loads(urllib.request.urlopen(f"{base}/server_info").read())


async def _mean_accept(base: str, n: int) -> float:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        jobs = [generate(session, base, f"{CHAT[i % len(CHAT)]} (case {i})", 256) for i in range(n)]
        results = await asyncio.gather(*jobs)
    values = [r["meta_info"]["spec_accept_length"] for r in results]
    return sum(values) / len(values)


# --------------------------------------------------------------------------- serving


SERVES = {
    # name: (profile, argv builder, algorithm reported, (steps, topk, draft tokens), repo served, log lines)
    "eagle3-defaults": (
        "seed-ct200",
        lambda lay: kimi_args(lay, "--ep", "4", "--speculative-algorithm", "EAGLE3", *draft(lay, KIMI_EAGLE3)),
        "EAGLE3",
        (3, 1, 4),
        "moonshotai/Kimi-K2.6",
        [WARN_MAX_RUNNING, "Load weight end. type=Eagle3DeepseekV2ForCausalLM"],
    ),
    "eagle3-deeper": (
        "seed-ct200",
        lambda lay: kimi_args(
            lay,
            "--ep",
            "4",
            "--speculative-algorithm",
            "eagle3",
            *draft(lay, KIMI_EAGLE3),
            "--speculative-num-steps",
            "6",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "7",
        ),
        "EAGLE3",
        (6, 1, 7),
        "moonshotai/Kimi-K2.6",
        [],
    ),
    "eagle3-topk1-adjusts-draft-tokens": (
        "seed-ct200",
        lambda lay: kimi_args(
            lay,
            "--ep",
            "4",
            "--speculative-algorithm",
            "EAGLE3",
            *draft(lay, KIMI_EAGLE3),
            "--speculative-num-steps",
            "5",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "9",
            "--max-running-requests",
            "64",
        ),
        "EAGLE3",
        (5, 1, 6),
        "moonshotai/Kimi-K2.6",
        ["speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"],
    ),
    "ngram-defaults": (
        "seed-ct200",
        lambda lay: kimi_args(lay, "--ep", "4", "--speculative-algorithm", "NGRAM"),
        "NGRAM",
        (1, 10, 12),
        "moonshotai/Kimi-K2.6",
        [
            WARN_MAX_RUNNING,
            "speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding.",
            "The mixed chunked prefill are disabled because of using ngram speculative decoding.",
        ],
    ),
    "ngram-narrow": (
        "seed-ct200",
        lambda lay: kimi_args(
            lay,
            "--ep",
            "4",
            "--speculative-algorithm",
            "NGRAM",
            "--speculative-num-draft-tokens",
            "4",
            "--speculative-ngram-max-bfs-breadth",
            "2",
        ),
        "NGRAM",
        (2, 2, 4),
        "moonshotai/Kimi-K2.6",
        [],
    ),
    "nextn-mtp": (
        "h200x8-nvlink",
        lambda lay: ["--model-path", DEEPSEEK, "--tp", "8", "--speculative-algorithm", "NEXTN"],
        "EAGLE",
        (3, 1, 4),
        "deepseek-ai/DeepSeek-V3",
        ["Load weight end. type=DeepseekV3ForCausalLM,", "Load weight end. type=DeepseekV3ForCausalLMNextN"],
    ),
    "eagle-mtp-two-steps": (
        "h200x8-nvlink",
        lambda lay: [
            "--model-path",
            DEEPSEEK,
            "--tp",
            "8",
            "--ep",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "2",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "3",
        ],
        "EAGLE",
        (2, 1, 3),
        "deepseek-ai/DeepSeek-V3",
        [],
    ),
    "standalone": (
        "h200x8-nvlink",
        lambda lay: ["--model-path", QWEN, "--speculative-algorithm", "STANDALONE", *draft(lay, QWEN_DRAFT)],
        "STANDALONE",
        (3, 1, 4),
        "Qwen/Qwen3-32B",
        ["Load weight end. type=Qwen3ForCausalLM"],
    ),
    "eagle3-on-h200": (
        "h200x8-nvlink",
        lambda lay: kimi_args(lay, "--speculative-algorithm", "EAGLE3", *draft(lay, KIMI_EAGLE3)),
        "EAGLE3",
        (3, 1, 4),
        "moonshotai/Kimi-K2.6",
        [],
    ),
}


@pytest.mark.parametrize("case", list(SERVES))
def test_each_algorithm_serves_at_its_resolved_settings(tmp_path: Path, case: str) -> None:
    profile_name, argv, algorithm, settings, repo, lines = SERVES[case]
    layout = algorithms_world(tmp_path / "host", profile_name)
    log = tmp_path / "server.log"
    proc = start_server(layout, argv(layout), log)
    try:
        wait_ready(proc, log, timeout=40)
        base = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
        info = server_info(base)
        resolved = (info["speculative_num_steps"], info["speculative_eagle_topk"], info["speculative_num_draft_tokens"])
        assert info["speculative_algorithm"] == algorithm and resolved == settings
        if "--max-running-requests" not in argv(layout):
            assert info["max_running_requests"] == 48
        profile = load_profile(profile_name)
        serving = profile.serving_for(repo)
        assert serving is not None
        launch = Launch(
            tp=info["tp_size"],
            ep=info["ep_size"],
            speculative_algorithm=algorithm,
            speculative_num_steps=settings[0],
            speculative_eagle_topk=settings[1],
            speculative_num_draft_tokens=settings[2],
        )
        model = build_performance_model(serving, launch, settings[2], release=RELEASE)
        assert model.accept_length is not None
        chat: PromptKind = "chat"
        expected = model.accept_length[chat]
        assert asyncio.run(_mean_accept(base, 60)) == pytest.approx(expected, abs=0.12)
    finally:
        stop_server(proc)
    text = log.read_text()
    for line in lines:
        assert line in text, line
    notes = (layout.sim_dir / "simulator.log").read_text() if (layout.sim_dir / "simulator.log").exists() else ""
    if profile_name == "h200x8-nvlink":
        assert f"[sim] serving {repo}:" in notes  # the target's own spec was picked


def test_an_mtp_target_is_its_own_draft_and_says_so_when_given_one(tmp_path: Path) -> None:
    layout = algorithms_world(tmp_path / "host", "h200x8-nvlink")
    log = tmp_path / "server.log"
    argv = [
        "--model-path",
        DEEPSEEK,
        "--tp",
        "8",
        "--speculative-algorithm",
        "NEXTN",
        "--speculative-draft-model-path",
        DEEPSEEK,
    ]
    proc = start_server(layout, argv, log)
    try:
        wait_ready(proc, log, timeout=40)
        info = server_info(f"http://127.0.0.1:{resolve_port(layout, 30000)}")
        assert info["speculative_draft_model_path"] == DEEPSEEK and info["speculative_algorithm"] == "EAGLE"
    finally:
        stop_server(proc)
    assert "DeepSeek MTP does not require setting speculative_draft_model_path." in log.read_text()


def test_an_eagle3_draft_with_a_smaller_draft_vocab_serves(tmp_path: Path) -> None:
    """EAGLE3 drafts map their own vocabulary to the target's (d2t): draft_vocab_size below vocab_size is fine."""
    small = {**fixture_config(MODELS[KIMI_EAGLE3][0]), "draft_vocab_size": 32000}
    layout = algorithms_world(tmp_path / "host", configs={KIMI_EAGLE3: small})
    log = tmp_path / "server.log"
    proc = start_server(
        layout, kimi_args(layout, "--ep", "4", "--speculative-algorithm", "EAGLE3", *draft(layout, KIMI_EAGLE3)), log
    )
    try:
        wait_ready(proc, log, timeout=40)
    finally:
        stop_server(proc)


# --------------------------------------------------------------------------- start-up refusals


def _message(rule_id: str, release_version: str = "0.5.23", **values: object) -> str:
    """The release's message for a rule, its {expression} fields filled by their last name."""
    rule = load(release_version).rule(rule_id)
    assert rule is not None, rule_id
    return re.sub(r"\{([^{}]+)\}", lambda m: str(values[m.group(1).rsplit(".", 1)[-1]]), rule.message)


REFUSALS = {
    # name: (profile, sglang, argv builder, expected stderr line)
    "standalone-dp-attention": (
        "h200x8-nvlink",
        None,
        lambda lay: [
            "--model-path",
            QWEN,
            "--tp",
            "2",
            "--dp",
            "2",
            "--enable-dp-attention",
            "--speculative-algorithm",
            "STANDALONE",
            *draft(lay, QWEN_DRAFT),
        ],
        "ValueError: " + _message("standalone_dp_attention"),
    ),
    "standalone-dp-attention-0.5.11": (
        "h200x8-nvlink",
        "0.5.11",
        lambda lay: [
            "--model-path",
            QWEN,
            "--tp",
            "2",
            "--dp",
            "2",
            "--enable-dp-attention",
            "--speculative-algorithm",
            "STANDALONE",
            *draft(lay, QWEN_DRAFT),
        ],
        "ValueError: " + _message("standalone_dp_attention", "0.5.11"),
    ),
    "ngram-dp-attention": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay, "--ep", "8", "--dp", "8", "--enable-dp-attention", "--speculative-algorithm", "NGRAM"
        ),
        "ValueError: " + _message("ngram_dp_attention"),
    ),
    "ngram-device": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(lay, "--device", "npu", "--speculative-algorithm", "NGRAM"),
        "ValueError: " + _message("ngram_device"),
    ),
    "ngram-cpu-before-0.5.23": (
        "seed-ct200",
        "0.5.11",
        lambda lay: kimi_args(lay, "--device", "cpu", "--speculative-algorithm", "NGRAM"),
        "ValueError: " + _message("ngram_device", "0.5.11"),
    ),
    "ngram-topk-page-size": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay, "--page-size", "16", "--attention-backend", "fa3", "--speculative-algorithm", "NGRAM"
        ),
        "ValueError: " + _message("ngram_topk_page_size", speculative_eagle_topk=10, page_size=16),
    ),
    "ngram-external-corpus-budget": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay, "--speculative-algorithm", "NGRAM", "--speculative-ngram-external-corpus-path", "/tmp/c.jsonl"
        ),
        "ValueError: " + _message("ngram_external_sam_budget_positive"),
    ),
    "eagle-topk-page-size": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay,
            "--page-size",
            "64",
            "--attention-backend",
            "flashmla",
            "--speculative-algorithm",
            "EAGLE3",
            *draft(lay, KIMI_EAGLE3),
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
        ),
        "ValueError: " + _message("eagle_topk_page_size", attention_backend="'flashmla'"),
    ),
    "trtllm-mha-topk": (
        "h200x8-nvlink",
        None,
        lambda lay: [
            "--model-path",
            QWEN,
            "--attention-backend",
            "trtllm_mha",
            "--speculative-algorithm",
            "STANDALONE",
            *draft(lay, QWEN_DRAFT),
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "2",
            "--speculative-num-draft-tokens",
            "6",
        ],
        "ValueError: " + _message("trtllm_mha_topk"),
    ),
    "topk-without-steps": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay, "--speculative-algorithm", "EAGLE3", *draft(lay, KIMI_EAGLE3), "--speculative-eagle-topk", "4"
        ),
        "\nAssertionError",
    ),
    "draft-tokens-without-steps": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay, "--speculative-algorithm", "EAGLE3", *draft(lay, KIMI_EAGLE3), "--speculative-num-draft-tokens", "8"
        ),
        "\nAssertionError",
    ),
    # Steps alone pass the assert; SGLang then compares the unset topk with 1.
    "steps-without-topk": (
        "seed-ct200",
        None,
        lambda lay: kimi_args(
            lay, "--speculative-algorithm", "EAGLE3", *draft(lay, KIMI_EAGLE3), "--speculative-num-steps", "3"
        ),
        "TypeError: '>' not supported between instances of 'NoneType' and 'int'",
    ),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_start_up_refusals_give_sglangs_message(tmp_path: Path, case: str) -> None:
    profile_name, sglang, argv, expected = REFUSALS[case]
    layout = algorithms_world(tmp_path / "host", profile_name, sglang=sglang)
    done = run_launch(layout, argv(layout))
    assert done.returncode == 1, done.stderr[-2000:]
    assert expected in done.stderr
    assert "Load weight begin" not in done.stderr  # refused before anything loads


# --------------------------------------------------------------------------- load-time failures


def test_nextn_on_a_target_without_mtp_loads_the_target_again_and_runs_out_of_memory(tmp_path: Path) -> None:
    """Kimi-K2.6 is not in SGLang's MTP list: with no draft path the draft worker loads the target's own checkpoint,
    a second 554 GiB that the seed host's GPUs cannot hold."""
    layout = algorithms_world(tmp_path / "host")
    done = run_launch(layout, kimi_args(layout, "--speculative-algorithm", "NEXTN"))
    assert done.returncode == 1
    assert "Load weight end. type=KimiK25ForConditionalGeneration" in done.stderr  # the target had loaded
    assert "torch.OutOfMemoryError: CUDA out of memory." in done.stderr


def test_nextn_on_a_dense_target_without_mtp_fails_at_load(tmp_path: Path) -> None:
    layout = algorithms_world(tmp_path / "host", "h200x8-nvlink")
    done = run_launch(layout, ["--model-path", QWEN, "--tp", "8", "--speculative-algorithm", "NEXTN"])
    assert done.returncode == 1
    assert done.stderr.index("Load weight end. type=Qwen3ForCausalLM") < done.stderr.index("Traceback")
    assert "AttributeError: 'Qwen3ForCausalLM' object has no attribute 'set_embed_and_head'" in done.stderr


def test_an_eagle3_draft_of_another_hidden_size_fails_at_load(tmp_path: Path) -> None:
    """Llama-3.1-8B's EAGLE3 draft (hidden 4096) on Kimi-K2.6 (7168): its fc cannot take the target's states."""
    layout = algorithms_world(tmp_path / "host")
    done = run_launch(layout, kimi_args(layout, "--speculative-algorithm", "EAGLE3", *draft(layout, LLAMA_EAGLE3)))
    assert done.returncode == 1
    assert "Load weight end. type=LlamaForCausalLMEagle3" in done.stderr
    assert "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x21504 and 12288x4096)" in done.stderr


def test_an_eagle3_draft_class_the_release_lacks_fails_at_load(tmp_path: Path) -> None:
    """0.5.11 has no Eagle3DeepseekV2ForCausalLM (Kimi's EAGLE3 draft class came later)."""
    assert "Eagle3DeepseekV2ForCausalLM" not in load("0.5.11").draft_architectures["EAGLE3"]
    layout = algorithms_world(tmp_path / "host", sglang="0.5.11")
    done = run_launch(layout, kimi_args(layout, "--speculative-algorithm", "EAGLE3", *draft(layout, KIMI_EAGLE3)))
    assert done.returncode == 1
    assert "AttributeError: 'Eagle3DeepseekV2ForCausalLM' object has no attribute 'set_embed'" in done.stderr


def test_a_standalone_draft_with_another_vocab_fails_at_load(tmp_path: Path) -> None:
    layout = algorithms_world(tmp_path / "host", "h200x8-nvlink")
    done = run_launch(layout, ["--model-path", QWEN, "--speculative-algorithm", "STANDALONE", *draft(layout, LLAMA)])
    assert done.returncode == 1
    assert (
        "ValueError: STANDALONE speculative decoding requires the draft model to share the same vocabulary as the "
        "target model, but got target vocab_size=151936 and draft vocab_size=128256."
    ) in done.stderr


# --------------------------------------------------------------------------- several targets


@pytest.mark.slow
@pytest.mark.serial  # measures wall-clock speed
@pytest.mark.timeout(120)
def test_each_target_of_a_profile_serves_at_its_own_speed(tmp_path: Path) -> None:
    h200 = load_profile("h200x8-nvlink")
    cases = [
        ("moonshotai/Kimi-K2.6", "tp8", lambda lay: kimi_args(lay)),
        ("deepseek-ai/DeepSeek-V3", "tp8", lambda lay: ["--model-path", DEEPSEEK, "--tp", "8"]),
        ("Qwen/Qwen3-32B", "tp1", lambda lay: ["--model-path", QWEN]),
    ]
    for i, (repo, config, argv) in enumerate(cases):
        serving = h200.serving_for(repo)
        assert serving is not None
        expected = dict(serving.config(config).throughput.known_points())[1]
        layout = algorithms_world(tmp_path / f"host{i}", "h200x8-nvlink", time_scale=10.0)
        log = tmp_path / f"server{i}.log"
        proc = start_server(layout, argv(layout), log)
        try:
            wait_ready(proc, log, timeout=40)
            url = f"http://127.0.0.1:{resolve_port(layout, 30000)}"
            rate, _ = asyncio.run(
                measure_throughput(
                    url, 1, 1.0, ["Tell me about the sea."], max_new_tokens=30000, clock=WorldClock(layout.sim_dir).now
                )
            )
        finally:
            stop_server(proc)
        assert rate == pytest.approx(expected, rel=0.05), repo
