"""Qwen/Qwen3-8B on sim:h200x8-nvlink: on the host's disk, served autoregressive, with DFlash and with EAGLE-3.

Assertions on the profile's data (and the performance model it feeds), no server: the target is laid down where a run
finds it, its DFLASH figures are those of z-lab/Qwen3-8B-DFlash-b16 at its block size, its EAGLE3 figures those of
AngelSlim/Qwen3-8B_eagle3 at SGLang's automatic settings, and the curves have the shape the profile's comment gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import ConcurrencyCurve, ServingSpec, SpeculativeConfig
from specops.sim.serving.performance import Launch, build_performance_model
from specops.sim.serving.spec_settings import SpecSettings, draft_shape, stated_settings

TARGET = "Qwen/Qwen3-8B"
DFLASH_DRAFTER = "z-lab/Qwen3-8B-DFlash-b16"
EAGLE3_DRAFTER = "AngelSlim/Qwen3-8B_eagle3"
FIXTURES = Path(__file__).resolve().parents[2] / "sim" / "hub" / "fixtures"
PROFILE = load_profile("h200x8-nvlink")


@pytest.fixture(scope="module")
def qwen() -> ServingSpec:
    spec = PROFILE.serving_for(TARGET)
    assert spec is not None, "the profile serves Qwen3-8B"
    return spec


def at(curve: ConcurrencyCurve, c: int) -> float:
    return dict(curve.known_points())[c]


def by_algorithm(qwen: ServingSpec, algorithm: str) -> list[SpeculativeConfig]:
    return [s for s in qwen.speculative if s.algorithm == algorithm]


def test_the_target_is_on_the_host_where_a_run_finds_it() -> None:
    model = next(m for m in PROFILE.models if m.repo_id == TARGET)
    assert model.path == "/data/models/Qwen3-8B"
    assert model.fixture == TARGET and model.layout == "local_dir"
    assert (FIXTURES / TARGET / "repo.yaml").is_file()


def test_the_target_matches_its_checkpoint(qwen: ServingSpec) -> None:
    config = json.loads((FIXTURES / TARGET / "main" / "config.json").read_text())
    target = qwen.target
    assert target.architecture == config["architectures"][0] == "Qwen3ForCausalLM"
    layers, kv_heads, head_dim = config["num_hidden_layers"], config["num_key_value_heads"], config["head_dim"]
    assert target.kv_mib_per_token == pytest.approx(layers * kv_heads * head_dim * 2 * 2 / 2**20)
    index = json.loads((FIXTURES / TARGET / "main" / "model.safetensors.index.json").read_text())
    assert target.weights_gib == pytest.approx(index["metadata"]["total_size"] / 2**30, abs=0.1)
    qwen32 = PROFILE.serving_for("Qwen/Qwen3-32B")
    assert qwen32 is not None and target.verify_knee_tokens == qwen32.target.verify_knee_tokens  # dense BF16, H200


def test_layouts_and_their_no_graphs_twins(qwen: ServingSpec) -> None:
    names = {c.name for c in qwen.configs}
    assert {"tp1", "tp2", "tp4", "tp8", "tp8_no_graphs"} <= names
    assert all(c.provenance == "modelled" for c in qwen.configs)
    assert all(s.provenance == "modelled" for s in qwen.speculative)
    tp1, tp8 = qwen.config("tp1"), qwen.config("tp8")
    assert 170 <= at(tp1.throughput, 1) <= 190
    assert at(tp1.throughput, 1) < at(qwen.config("tp2").throughput, 1) < at(tp8.throughput, 1)
    # TP1 is the most efficient per GPU at high load.
    per_gpu = {c.name: at(c.throughput, 256) / c.gpus for c in qwen.configs if c.cuda_graphs}
    assert max(per_gpu, key=per_gpu.__getitem__) == "tp1"
    assert at(tp8.throughput, 256) <= 16000
    for config in qwen.configs:
        if not config.cuda_graphs:
            twin = qwen.config(config.name.removesuffix("_no_graphs"))
            assert (twin.tp, twin.cuda_graphs) == (config.tp, True)
            assert at(config.throughput, 1) < at(twin.throughput, 1)


def test_dflash_is_the_b16_drafter_on_every_layout(qwen: ServingSpec) -> None:
    dflash = by_algorithm(qwen, "DFLASH")
    assert {s.base for s in dflash} == {c.name for c in qwen.configs}
    block = json.loads((FIXTURES / DFLASH_DRAFTER / "main" / "config.json").read_text())["block_size"]
    for spec in dflash:
        assert spec.drafter == DFLASH_DRAFTER
        assert spec.num_draft_tokens == block == 16
        assert spec.cuda_graphs == qwen.config(spec.base).cuda_graphs
        assert stated_settings(spec, qwen.target) == SpecSettings(1, 1, 16)
        assert 6.0 <= spec.accept_length["math"] <= 7.0
        assert spec.accept_length["chat"] < spec.accept_length["code"] < spec.accept_length["math"]


def test_eagle3_is_angelslim_at_sglangs_automatic_settings(qwen: ServingSpec) -> None:
    eagle3 = by_algorithm(qwen, "EAGLE3")
    assert {s.base for s in eagle3} == {s.base for s in by_algorithm(qwen, "DFLASH")}
    for spec in eagle3:
        assert spec.drafter == EAGLE3_DRAFTER
        assert (spec.num_steps, spec.topk, spec.num_draft_tokens) == (None, None, None)
        settings = stated_settings(spec, qwen.target)
        assert settings == SpecSettings(3, 1, 4)
        depth, _ = draft_shape(spec.algorithm, settings)
        assert all(1.0 <= v < depth + 1 for v in spec.accept_length.values())
        assert spec.accept_length["chat"] < spec.accept_length["code"] < spec.accept_length["math"]


def test_dflash_leads_at_c1_and_its_lead_shrinks_with_load(qwen: ServingSpec) -> None:
    for spec in by_algorithm(qwen, "DFLASH"):
        base = qwen.config(spec.base).throughput
        eagle3 = next(s for s in by_algorithm(qwen, "EAGLE3") if s.base == spec.base)
        lead = {c: at(spec.throughput, c) / at(base, c) for c in (1, 32, 256)}
        assert 2.5 <= lead[1] <= 3.3, spec.name
        assert lead[1] > lead[32] > lead[256], spec.name
        # EAGLE-3 between autoregressive and DFlash at C=1.
        assert at(base, 1) < at(eagle3.throughput, 1) < at(spec.throughput, 1), eagle3.name
    tp1 = qwen.config("tp1").throughput
    dflash_tp1 = next(s for s in by_algorithm(qwen, "DFLASH") if s.base == "tp1")
    assert at(dflash_tp1.throughput, 1) > 2.5 * at(tp1, 1)
    assert at(dflash_tp1.throughput, 256) < at(tp1, 256)  # gone at C=256 on the small-TP layouts


def test_a_launch_gets_the_stated_figures(qwen: ServingSpec) -> None:
    for spec in qwen.speculative:
        base = qwen.config(spec.base)
        model = build_performance_model(
            qwen,
            Launch(tp=base.tp, cuda_graphs=spec.cuda_graphs, speculative_algorithm=spec.algorithm),
            spec.num_draft_tokens or 1,
        )
        assert model.choice.speculative == spec, spec.name
        assert not model.choice.warnings, spec.name
        for c, expected in spec.throughput.known_points():
            assert model.step_time.throughput(c) == pytest.approx(expected, rel=1e-9), (spec.name, c)
