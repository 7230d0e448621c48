"""The speculative settings model (sim/serving/spec_settings.py) and the profiles' new figures, without a server.

What must hold: the stated settings reproduce the stated curve and accept lengths exactly; acceptance grows with
draft depth and saturates; at C=1 more draft tokens win, at high concurrency fewer win and speculation can lose to
the best autoregressive layout; DFLASH's block size goes through the same model; the profiles' figures sit where
the brief puts them, and SGLang's default settings are not the best everywhere.
"""

from __future__ import annotations

import pytest

from specops.sglang_releases.facts import load
from specops.sim.profiles import load_profile
from specops.sim.profiles.schema import Profile, ServingSpec
from specops.sim.serving.performance import Launch, StepTimeCurve, build_performance_model
from specops.sim.serving.spec_settings import (
    SpecSettings,
    accept_length_at,
    chain_accept_length,
    chain_acceptance,
    draft_shape,
    sglang_default_settings,
    stated_settings,
)
from specops.sim.serving.truth import (
    closed_loop_tok_s,
    level_accept_length,
    modelled_tok_s,
    steady_tokens_per_step,
)

SEED = load_profile("seed-ct200")
H200 = load_profile("h200x8-nvlink")
EP4 = {"tp": 8, "ep": 4}
KIMI, DEEPSEEK, QWEN = "moonshotai/Kimi-K2.6", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3-32B"


def serving(profile: Profile, repo: str) -> ServingSpec:
    found = profile.serving_for(repo)
    assert found is not None
    return found


def tok_s(spec: ServingSpec, algorithm: str, settings: tuple[int, int, int], c: float, **layout) -> float:
    steps, topk, draft = settings
    launch = Launch(
        **layout,
        speculative_algorithm=algorithm,
        speculative_num_steps=steps,
        speculative_eagle_topk=topk,
        speculative_num_draft_tokens=draft,
    )
    return build_performance_model(spec, launch, draft).step_time.throughput(c)


def best_autoregressive(spec: ServingSpec, c: float) -> float:
    return max(StepTimeCurve(config.throughput).throughput(c) for config in spec.configs)


# ---------------------------------------------------------------- acceptance


def test_chain_acceptance_inverts_the_chain() -> None:
    for depth in (1, 3, 7, 15):
        for a in (0.1, 0.5, 0.8, 0.95):
            assert chain_acceptance(chain_accept_length(a, depth), depth) == pytest.approx(a, abs=1e-9)


@pytest.mark.parametrize("algorithm", ["EAGLE3", "EAGLE", "STANDALONE", "DFLASH", "NGRAM"])
def test_acceptance_grows_with_depth_and_saturates(algorithm: str) -> None:
    stated = SpecSettings(3, 1, 4) if algorithm != "DFLASH" else SpecSettings(1, 1, 8)
    lengths = []
    for depth in range(1, 25):
        settings = SpecSettings(1, 1, depth + 1) if algorithm == "DFLASH" else SpecSettings(depth, 1, depth + 1)
        lengths.append(accept_length_at(2.9, algorithm, stated, settings))
    gains = [b - a for a, b in zip(lengths, lengths[1:], strict=False)]
    assert all(g > 0 for g in gains), lengths  # more drafts always accept more...
    assert all(g2 < g1 for g1, g2 in zip(gains, gains[1:], strict=False))  # ...by less each time
    d0, _ = draft_shape(algorithm, stated)
    a = chain_acceptance(2.9, d0)
    assert lengths[-1] < 1 / (1 - a)  # saturating at 1 / (1 - a)


def test_topk_raises_acceptance_modestly() -> None:
    chain = SpecSettings(3, 1, 4)
    wide = accept_length_at(2.9, "EAGLE3", chain, SpecSettings(3, 4, 13))
    assert 2.9 < wide < 3.5  # 4 candidates per level (12 more draft tokens): less than two more levels bring
    assert wide < accept_length_at(2.9, "EAGLE3", chain, SpecSettings(5, 1, 6))
    # A tree of 8 tokens over 5 levels has room for little breadth: (5, 4, 8) is near the chain (5, 1, 6).
    five = accept_length_at(2.9, "EAGLE3", chain, SpecSettings(5, 1, 6))
    assert five < accept_length_at(2.9, "EAGLE3", chain, SpecSettings(5, 4, 8)) < five + 0.3


def test_draft_shape_follows_the_tree_sglang_builds() -> None:
    assert draft_shape("EAGLE3", SpecSettings(3, 1, 4)) == (3, 1.0)
    assert draft_shape("EAGLE", SpecSettings(5, 4, 8)) == (5, pytest.approx(7 / 5))
    assert draft_shape("DFLASH", SpecSettings(1, 1, 16)) == (15, 1.0)
    # NGRAM's BFS: up to 10 candidates at the first level, the best match followed below it.
    assert draft_shape("NGRAM", SpecSettings(1, 10, 12)) == (2, 10.0)
    assert draft_shape("NGRAM", SpecSettings(2, 10, 24)) == (14, 10.0)
    assert draft_shape("NGRAM", SpecSettings(2, 10, 4)) == (1, 3.0)


# ---------------------------------------------------------------- stated settings


def test_stated_settings_default_to_what_sglang_chooses() -> None:
    release = load("0.5.23")
    kimi, deepseek, qwen = serving(SEED, KIMI), serving(H200, DEEPSEEK), serving(H200, QWEN)
    eagle3 = next(s for s in kimi.speculative if s.algorithm == "EAGLE3")
    ngram = next(s for s in kimi.speculative if s.algorithm == "NGRAM")
    dflash = next(s for s in kimi.speculative if s.algorithm == "DFLASH")
    nextn = next(s for s in deepseek.speculative if s.algorithm == "NEXTN")
    standalone = next(s for s in qwen.speculative if s.algorithm == "STANDALONE")
    assert stated_settings(eagle3, kimi.target, release).as_tuple() == release.auto_params(
        "EAGLE3", "KimiK25ForConditionalGeneration"
    )
    assert stated_settings(nextn, deepseek.target, release).as_tuple() == (3, 1, 4)
    assert stated_settings(standalone, qwen.target, release).as_tuple() == (3, 1, 4)
    assert stated_settings(ngram, kimi.target, release).as_tuple() == (1, 10, 12)
    assert stated_settings(dflash, kimi.target, release).as_tuple() == (1, 1, 8)  # the drafter's block, stated
    assert sglang_default_settings("EAGLE", "LlamaForCausalLM", release).as_tuple() == (5, 4, 8)
    assert sglang_default_settings("DFLASH", None, release).as_tuple() == (1, 1, 16)


@pytest.mark.parametrize(
    ("profile", "repo"),
    [(SEED, KIMI), (H200, KIMI), (H200, DEEPSEEK), (H200, QWEN)],
    ids=lambda x: getattr(x, "name", x),
)
def test_the_stated_settings_reproduce_the_stated_curve_and_accept_lengths(profile: Profile, repo: str) -> None:
    spec_of = serving(profile, repo)
    layouts = {c.name: c for c in spec_of.configs}
    assert spec_of.speculative
    for spec in spec_of.speculative:
        base = layouts[spec.base]
        layout = {"tp": base.tp, "ep": base.ep, "pp": base.pp, "dp": base.dp, "dp_attention": base.dp_attention}
        stated = stated_settings(spec, spec_of.target)
        model = build_performance_model(
            spec_of,
            Launch(
                **layout,
                cuda_graphs=spec.cuda_graphs,
                speculative_algorithm="EAGLE" if spec.algorithm == "NEXTN" else spec.algorithm,
                speculative_num_steps=stated.num_steps,
                speculative_eagle_topk=stated.topk,
                speculative_num_draft_tokens=stated.num_draft_tokens,
            ),
            stated.num_draft_tokens,
        )
        assert model.choice.speculative == spec
        assert model.accept_length == spec.accept_length
        for c, expected in spec.throughput.known_points():
            assert model.step_time.throughput(c) == pytest.approx(expected, rel=1e-9), (spec.name, c)


def test_a_launch_without_settings_runs_at_the_stated_ones() -> None:
    kimi = serving(SEED, KIMI)
    bare = build_performance_model(kimi, Launch(**EP4, speculative_algorithm="EAGLE3"), 1)
    assert bare.settings == SpecSettings(3, 1, 4) and bare.step_time.throughput(64) == pytest.approx(1070.0)
    dflash = build_performance_model(kimi, Launch(**EP4, speculative_algorithm="DFLASH"), 8)
    assert dflash.accept_length == next(s for s in kimi.speculative if s.name == "dflash_ep4").accept_length


# ---------------------------------------------------------------- the consequences


@pytest.mark.parametrize(
    ("profile", "repo", "algorithm", "layout"),
    [
        (SEED, KIMI, "EAGLE3", EP4),
        (H200, KIMI, "EAGLE3", {"tp": 8}),
        (H200, DEEPSEEK, "EAGLE", {"tp": 8}),
        (H200, QWEN, "STANDALONE", {"tp": 1}),
    ],
    ids=["seed-eagle3", "h200-eagle3", "h200-nextn", "h200-standalone"],
)
def test_more_draft_tokens_win_at_c1_and_fewer_at_high_concurrency(profile, repo, algorithm, layout) -> None:
    spec = serving(profile, repo)
    shallow, default, deep = (2, 1, 3), (3, 1, 4), (5, 1, 6)
    at_1 = [tok_s(spec, algorithm, s, 1, **layout) for s in (shallow, default, deep)]
    assert at_1[0] < at_1[1] < at_1[2]
    at_256 = [tok_s(spec, algorithm, s, 256, **layout) for s in (shallow, default, deep)]
    assert at_256[0] > at_256[1] > at_256[2]


def test_eagle3_on_the_seed_host_the_default_is_not_the_best() -> None:
    """SGLang's (3, 1, 4): more steps win at C=1, fewer at C >= 64; past that speculation loses to the best
    autoregressive layout, and more draft tokens lose more."""
    spec = serving(SEED, KIMI)
    default = {c: tok_s(spec, "EAGLE3", (3, 1, 4), c, **EP4) for c in (1, 64, 128, 256)}
    assert tok_s(spec, "EAGLE3", (5, 1, 6), 1, **EP4) > 1.05 * default[1]
    for c in (64, 128, 256):
        assert tok_s(spec, "EAGLE3", (2, 1, 3), c, **EP4) > default[c], c
    for c in (128, 256):
        assert default[c] < best_autoregressive(spec, c)
    assert tok_s(spec, "EAGLE3", (5, 1, 6), 256, **EP4) < 0.8 * best_autoregressive(spec, 256)


def test_ngram_default_draft_tokens_are_costly_under_load() -> None:
    spec = serving(SEED, KIMI)
    default = (1, 10, 12)  # SGLang's: 12 draft tokens, breadth 10
    assert tok_s(spec, "NGRAM", (2, 10, 24), 1, **EP4) > tok_s(spec, "NGRAM", default, 1, **EP4)
    assert tok_s(spec, "NGRAM", (1, 4, 4), 128, **EP4) > 2 * tok_s(spec, "NGRAM", default, 128, **EP4)
    assert tok_s(spec, "NGRAM", (1, 4, 4), 128, **EP4) < best_autoregressive(spec, 128)


def test_dflash_block_size_goes_through_the_same_model() -> None:
    spec = serving(SEED, KIMI)
    block = {b: tok_s(spec, "DFLASH", (1, 1, b), 1, **EP4) for b in (4, 8, 16)}
    assert block[8] == pytest.approx(86.0)  # the measured point, at the drafter's block size
    assert block[4] < block[8] < block[16]
    loaded = {b: tok_s(spec, "DFLASH", (1, 1, b), 256, **EP4) for b in (4, 8, 16)}
    assert loaded[4] > loaded[8] > loaded[16]
    accept = {
        b: build_performance_model(spec, Launch(**EP4, speculative_algorithm="DFLASH"), b).accept_length
        for b in (4, 8, 16)
    }
    assert accept[4]["chat"] < accept[8]["chat"] == 3.55 < accept[16]["chat"]


def test_truth_follows_the_settings() -> None:
    spec = serving(SEED, KIMI)

    def launch(steps: int) -> Launch:
        return Launch(
            **EP4,
            speculative_algorithm="EAGLE3",
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        )

    short, long_ = (level_accept_length(spec, launch(s), block_size=s + 1, output_tokens=512) for s in (3, 6))
    assert short is not None and long_ is not None and 2.3 < short < 2.7 < long_ < 3.7
    assert modelled_tok_s(spec, launch(6), 1) > modelled_tok_s(spec, launch(3), 1)


# ---------------------------------------------------------------- the profiles' figures


def test_profile_figures_sit_where_the_brief_puts_them() -> None:
    kimi = serving(SEED, KIMI)
    eagle3 = [s for s in kimi.speculative if s.algorithm == "EAGLE3"]
    ngram = [s for s in kimi.speculative if s.algorithm == "NGRAM"]
    assert eagle3 and ngram
    assert all(2.6 <= s.mean_accept_length <= 3.2 for s in eagle3)
    assert all(s.drafter == "lightseekorg/kimi-k2.6-eagle3.1-mla" for s in eagle3)
    assert all(1.3 <= s.mean_accept_length <= 1.8 and s.drafter is None for s in ngram)
    assert not any(kimi.config(s.base).dp_attention for s in ngram)  # SGLang refuses NGRAM with DP attention
    nextn = serving(H200, DEEPSEEK).speculative
    assert nextn and all(s.algorithm == "NEXTN" and 2.3 <= s.mean_accept_length <= 2.6 for s in nextn)
    qwen = serving(H200, QWEN)
    assert qwen.speculative and all(
        s.algorithm == "STANDALONE" and s.drafter == "Qwen/Qwen3-0.6B" and 2.4 <= s.mean_accept_length <= 3.0
        for s in qwen.speculative
    )
    assert not any(qwen.config(s.base).dp_attention for s in qwen.speculative)  # nor STANDALONE
    assert any(s.algorithm == "EAGLE3" for s in H200.serving.speculative)
    deepseek_layouts = {(c.tp, c.ep, c.dp_attention) for c in serving(H200, DEEPSEEK).configs}
    assert {(8, 1, False), (8, 8, False), (8, 8, True)} <= deepseek_layouts
    assert {c.tp for c in qwen.configs} >= {1, 2, 4, 8}


@pytest.mark.parametrize("profile", [SEED, H200], ids=["seed-ct200", "h200x8-nvlink"])
def test_stated_accept_lengths_fit_their_drafts(profile: Profile) -> None:
    """A step cannot accept more than its draft's depth and the bonus token: a figure above that could not be served."""
    for spec_of in profile.serving_specs:
        for spec in spec_of.speculative:
            depth, _ = draft_shape(spec.algorithm, stated_settings(spec, spec_of.target))
            tables = [spec.accept_length, spec.accept_length_thinking_off or {}]
            assert all(1.0 <= v < depth + 1 for table in tables for v in table.values()), spec.name


@pytest.mark.parametrize("profile", [SEED, H200], ids=["seed-ct200", "h200x8-nvlink"])
def test_everything_new_is_modelled(profile: Profile) -> None:
    for spec_of in profile.serving_specs:
        for spec in spec_of.speculative:
            if spec.algorithm != "DFLASH":
                assert spec.provenance == "modelled", spec.name
        if spec_of is not profile.serving:
            assert all(c.provenance == "modelled" for c in spec_of.configs)


def test_targets_are_unique_and_found_by_repo_id() -> None:
    assert [s.target.repo_id for s in H200.serving_specs] == [KIMI, DEEPSEEK, QWEN, "Qwen/Qwen3-8B"]
    assert H200.serving_for("qwen/qwen3-32b") is serving(H200, QWEN)
    assert H200.serving_for("Qwen/Qwen3-0.6B") is None
    with pytest.raises(ValueError, match="repo ids must be unique"):
        Profile.model_validate({**H200.model_dump(), "additional_serving": [H200.serving.model_dump()]})


def test_a_target_of_unknown_architecture_states_its_settings() -> None:
    data = serving(H200, QWEN).model_dump()
    data["target"]["architecture"] = None
    with pytest.raises(ValueError, match="state num_steps"):
        ServingSpec.model_validate(data)
    for spec in data["speculative"]:
        spec.update(num_steps=3, topk=1, num_draft_tokens=4)
    ServingSpec.model_validate(data)


def test_tokens_per_step_mid_stream_are_the_mean_of_draws_clipped_to_the_block() -> None:
    kimi = serving(SEED, KIMI)
    dflash = Launch(tp=8, speculative_algorithm="DFLASH")
    wide, narrow = (build_performance_model(kimi, dflash, block) for block in (8, 2))
    assert wide.accept_length is not None and narrow.accept_length is not None
    # A block of 8 never cuts the chat draws: the kind's mean. A block of 2 caps every draw at 2: below its mean.
    assert steady_tokens_per_step(wide) == pytest.approx(wide.accept_length["chat"], abs=1e-3)
    clipped = steady_tokens_per_step(narrow)
    assert clipped is not None and 1.0 < clipped < min(narrow.accept_length["chat"], 2.0)
    assert steady_tokens_per_step(build_performance_model(kimi, Launch(tp=8), 1)) is None  # autoregressive


def test_a_closed_loop_of_one_client_waits_for_its_prefill_and_each_step() -> None:
    kimi = serving(SEED, KIMI)
    autoregressive = build_performance_model(kimi, Launch(tp=8), 1)
    cycle = autoregressive.prefill_seconds(128) + 63 * autoregressive.step_time(1.0)  # the first token from prefill
    assert closed_loop_tok_s(autoregressive, 1, input_len=128, output_len=64) == pytest.approx(64 / cycle)
    dflash = build_performance_model(kimi, Launch(tp=8, speculative_algorithm="DFLASH"), 8)
    assert dflash.accept_length is not None
    # Each request's own tau: its expected steps sit above 63 / the mean tau (the harmonic side of the spread).
    one = closed_loop_tok_s(dflash, 1, input_len=128, output_len=64)
    at_the_mean = 64 / (dflash.prefill_seconds(128) + 63 / dflash.accept_length["chat"] * dflash.step_time(1.0))
    assert 0.9 * at_the_mean < one < at_the_mean
    assert closed_loop_tok_s(dflash, 0, input_len=128, output_len=64) == 0.0


def test_a_closed_loop_serves_speculation_less_than_the_steady_curve() -> None:
    kimi = serving(SEED, KIMI)
    autoregressive = build_performance_model(kimi, Launch(tp=8), 1)
    dflash = build_performance_model(kimi, Launch(tp=8, speculative_algorithm="DFLASH"), 8)
    for clients in (1, 32, 64):
        ar = closed_loop_tok_s(autoregressive, clients, input_len=128, output_len=64)
        spec = closed_loop_tok_s(dflash, clients, input_len=128, output_len=64)
        ar_steady = modelled_tok_s(kimi, Launch(tp=8), clients)
        spec_steady = modelled_tok_s(kimi, Launch(tp=8, speculative_algorithm="DFLASH"), clients, block_size=8)
        # Autoregressive: near the curve (the prefill's first token is free, the batch a little smaller).
        assert ar == pytest.approx(ar_steady, rel=0.03)
        # Speculation decodes faster beside the same prefill and each request waits for its own tau: it loses more.
        assert spec < spec_steady and spec / spec_steady < ar / ar_steady
        # Longer answers spend less of their time in the prefill and cut less of their last step: nearer the curve.
        longer = closed_loop_tok_s(dflash, clients, input_len=128, output_len=1024)
        assert spec < longer < spec_steady
    # The batch decodes at fewer requests than the clients (some are prefilling): C=64 is more than C=32 but not 2x.
    at_32, at_64 = (closed_loop_tok_s(autoregressive, c, input_len=128, output_len=64) for c in (32, 64))
    assert at_32 < at_64 < 2 * at_32
