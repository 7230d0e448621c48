"""The per-algorithm speculative facts in sglang_releases/data: start-up rules of EAGLE, STANDALONE and NGRAM,
automatic (steps, topk, draft tokens), NGRAM defaults, max_running_requests, MTP-in-target architectures and draft
model classes. The committed JSON is read (no wheel needed); tests/sglang_releases/test_committed_data.py checks that
the extractor reproduces it from the release wheels."""

from __future__ import annotations

import zipfile

import pytest

from specops.sglang_releases.extract import extract
from specops.sglang_releases.facts import ReleaseFacts, load, modelled_versions
from specops.sim.serving.speculative import mtp_architecture


def test_auto_params_of_0_5_23():
    release = load("0.5.23")
    assert release.auto_params("EAGLE", "DeepseekV3ForCausalLM") == (3, 1, 4)
    assert release.auto_params("EAGLE3", "LlamaForCausalLM") == (5, 4, 8)
    assert release.auto_params("NEXTN", "Grok1ForCausalLM") == (5, 4, 8)  # alias of EAGLE
    assert release.auto_params("STANDALONE", "LlamaForCausalLM") == (3, 1, 4)  # whatever the target
    assert release.auto_params("EAGLE", "SomeOtherForCausalLM") == (3, 1, 4)  # the default
    auto = release.speculative_auto_params
    assert auto.standalone == (3, 1, 4) and auto.default == (3, 1, 4)
    assert auto.by_architecture["LlamaForCausalLM"] == (5, 4, 8)


def test_draft_and_mtp_architectures_of_0_5_23():
    release = load("0.5.23")
    drafts = release.draft_architectures
    assert set(drafts) == {"EAGLE3", "EAGLE", "NEXTN"}
    assert {"Eagle3DeepseekV2ForCausalLM", "LlamaForCausalLMEagle3"} <= set(drafts["EAGLE3"])
    assert "LlamaForCausalLMEagle" in drafts["EAGLE"] and "LlamaForCausalLMEagle3" not in drafts["EAGLE"]
    assert {"DeepseekV3ForCausalLMNextN", "Qwen3NextForCausalLMMTP"} <= set(drafts["NEXTN"])
    # Registered beside their targets (glm4_moe.py, inkling.py), not in a file named for the draft.
    assert {"GlmMoeDsaForCausalLMNextN", "InklingForConditionalGenerationMTP"} <= set(drafts["NEXTN"])
    assert mtp_architecture("GlmMoeDsaForCausalLM", release) == "GlmMoeDsaForCausalLMNextN"
    assert mtp_architecture("InklingForConditionalGeneration", release) == "InklingForConditionalGenerationMTP"
    assert mtp_architecture("LlamaForCausalLM", release) is None
    assert {"DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM"} <= set(
        release.mtp_in_target_architectures
    )
    assert "LlamaForCausalLM" not in release.mtp_in_target_architectures
    assert release.dflash_architectures  # kept as it was


def test_launch_rules_of_the_other_algorithms_on_0_5_23():
    release = load("0.5.23")
    standalone = release.rule("standalone_dp_attention")
    assert standalone is not None and standalone.algorithm == "STANDALONE"
    assert standalone.message == "Currently standalone speculative decoding does not support dp attention."
    assert standalone.source == "sglang/srt/arg_groups/speculative_hook.py"
    ngram_dp = release.rule("ngram_dp_attention")
    assert ngram_dp is not None
    assert ngram_dp.message == "Currently ngram speculative decoding does not support dp attention."
    ngram_device = release.rule("ngram_device")
    assert ngram_device is not None
    assert ngram_device.message == "Ngram speculative decoding only supports CUDA, CPU, or XPU devices."
    trtllm = release.rule("trtllm_mha_topk")
    assert trtllm is not None and trtllm.algorithm == "EAGLE"
    assert trtllm.message == "trtllm_mha backend only supports topk = 1 for speculative decoding."
    page = release.rule("eagle_topk_page_size")
    assert page is not None and page.message.startswith("speculative_eagle_topk > 1 with page_size > 1")
    assert "('flashinfer', 'fa3', 'triton')" in page.message  # the handler's constant, as the f-string prints it
    ngram_page = release.rule("ngram_topk_page_size")
    assert ngram_page is not None and "{view.page_size}" in ngram_page.message
    assert {r.algorithm for r in release.launch_rules} == {"DFLASH", "EAGLE", "STANDALONE", "NGRAM"}
    assert {r.id for r in release.launch_rules if r.exception == "AssertionError"} == {"eagle_partial_params"}
    for rule in release.launch_rules:
        assert rule.id.startswith(rule.algorithm.lower() + "_") or rule.id == "trtllm_mha_topk", rule.id
    assert len({r.id for r in release.launch_rules}) == len(release.launch_rules)


@pytest.mark.parametrize("version", modelled_versions())
def test_partial_eagle_settings_fail_an_assert_in_every_release(version):
    # No --speculative-num-steps: SGLang picks all three and asserts that topk and draft tokens were not given.
    rule = load(version).rule("eagle_partial_params")
    assert rule is not None and rule.algorithm == "EAGLE"
    assert (rule.exception, rule.message) == ("AssertionError", "")  # a bare assert: SGLang says nothing more
    assert "speculative_num_steps is None and not (" in rule.condition
    assert (
        "speculative_eagle_topk is None and" in rule.condition
        and "speculative_num_draft_tokens is None" in rule.condition
    )
    if version == "0.5.23":
        assert rule.condition.startswith("not cfg.speculative_adaptive and ")  # adaptive picks its own
        assert rule.source == "sglang/srt/arg_groups/speculative_hook.py"
    else:
        assert rule.source == "sglang/srt/server_args.py"


def test_ngram_and_max_running_requests_of_0_5_23():
    release = load("0.5.23")
    ngram = release.ngram_defaults
    assert (ngram.num_draft_tokens, ngram.eagle_topk, ngram.num_steps) == (12, 10, 1)
    assert ngram.eagle_topk_flag == "--speculative-ngram-max-bfs-breadth"
    assert ngram.num_steps_source == "cfg.speculative_num_draft_tokens // cfg.speculative_eagle_topk"
    flag = release.flag("--speculative-ngram-max-bfs-breadth")
    assert flag is not None and flag.default == ngram.eagle_topk
    for algorithm in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH"):
        assert release.max_running_requests_default(algorithm) == 48, algorithm
    assert release.max_running_requests_default("UNO") is None  # UNO's start-up sets none


def test_the_older_releases():
    old, first_dflash = load("0.5.10.post1"), load("0.5.11")
    for release in (old, first_dflash):
        assert release.auto_params("EAGLE", "LlamaForCausalLM") == (5, 4, 8)
        assert release.auto_params("STANDALONE", "LlamaForCausalLM") == (3, 1, 4)
        assert release.ngram_defaults.num_draft_tokens == 12 and release.ngram_defaults.eagle_topk == 10
        assert release.ngram_defaults.num_steps is None  # not set at start-up before 0.5.2x
        assert release.max_running_requests_default("NEXTN") == 48  # renamed to EAGLE by the handler
        assert release.rule("standalone_dp_attention") is not None and release.rule("ngram_device") is not None
        assert release.rule("ngram_device").message == "Ngram speculative decoding only supports CUDA device."
        assert release.rule("eagle_topk_page_size") is not None and release.rule("trtllm_mha_topk") is not None
        assert release.draft_architectures["EAGLE3"] == ("LlamaForCausalLMEagle3",)
        assert "DeepseekV3ForCausalLM" in release.mtp_in_target_architectures
    assert old.max_running_requests_default("DFLASH") is None and first_dflash.max_running_requests_default("DFLASH")
    assert old.rule("eagle_spec_v2_topk") is not None and first_dflash.rule("eagle_spec_v2_topk") is None
    assert "HYV3ForCausalLM" in first_dflash.mtp_in_target_architectures
    assert "HYV3ForCausalLM" not in old.mtp_in_target_architectures


@pytest.mark.parametrize("version", modelled_versions())
def test_the_loader_round_trips(version):
    release = load(version)
    again = ReleaseFacts.model_validate_json(release.model_dump_json())
    assert again.model_dump() == release.model_dump()  # (== would also compare the flag index built on first use)
    assert again.speculative_auto_params == release.speculative_auto_params
    assert again.ngram_defaults == release.ngram_defaults
    assert all(isinstance(t, tuple) for t in again.speculative_auto_params.by_architecture.values())
    assert all(isinstance(v, tuple) for v in again.draft_architectures.values())


# A small release of the 0.5.1x shape: everything inside ServerArgs._handle_speculative_decoding.
OLD_STYLE_SERVER_ARGS = """
class ServerArgs:
    def _handle_speculative_decoding(self):
        if self.speculative_algorithm == "NEXTN":
            self.speculative_algorithm = "EAGLE"

        if self.speculative_algorithm in ("EAGLE", "EAGLE3", "STANDALONE"):
            if self.speculative_algorithm == "STANDALONE" and self.enable_dp_attention:
                raise ValueError("Currently standalone speculative decoding does not support dp attention.")
            if self.max_running_requests is None:
                self.max_running_requests = 48
            model_arch = self.get_model_config().hf_config.architectures[0]
            if self.speculative_num_steps is None:
                assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None
            if model_arch in ["DeepseekV3ForCausalLM", "Glm4MoeForCausalLM"]:
                if self.speculative_draft_model_path is None:
                    self.speculative_draft_model_path = self.model_path
            if self.speculative_eagle_topk > 1 and self.page_size > 1:
                raise ValueError("speculative_eagle_topk > 1 with page_size > 1 is unstable.")

        if self.speculative_algorithm == "NGRAM":
            if not self.device.startswith("cuda"):
                raise ValueError("Ngram speculative decoding only supports CUDA device.")
            if self.max_running_requests is None:
                self.max_running_requests = 32
            self.speculative_eagle_topk = self.speculative_ngram_max_bfs_breadth
            if self.speculative_num_draft_tokens is None:
                self.speculative_num_draft_tokens = 12
            self.speculative_num_steps = self.speculative_num_draft_tokens // self.speculative_eagle_topk

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "NEXTN", "STANDALONE", "NGRAM"])
        parser.add_argument("--speculative-ngram-max-bfs-breadth", type=int, default=4)


def auto_choose_speculative_params(self):
    arch = self.get_model_config().hf_config.architectures[0]
    if self.speculative_algorithm == "STANDALONE":
        return (3, 1, 4)
    if arch in ["LlamaForCausalLM"]:
        return (5, 4, 8)
    elif arch in ["DeepseekV3ForCausalLM", "LlamaForCausalLM"]:
        return (2, 1, 3)
    else:
        return (1, 1, 2)
"""

# What every release has besides the speculative code (extract reads it all).
BASE_FILES = {
    "sglang/srt/managers/tokenizer_manager.py": "",
    "sglang/srt/model_executor/runner.py": """
READY = "The server is fired up and ready to roll!"
OOM = "Not enough memory. Please try to increase --mem-fraction-static."
CUDA_GRAPH = "Capture cuda graph failed"


def log_decode(n, a):
    msg = f"Decode batch, #running-req: {n}, "
    msg += f"accept len: {a:.2f}, "
""",
    "sglang/bench_serving.py": """
def main():
    parser.add_argument("--dataset-name", type=str, default="random", choices=["random"])
""",
}

MODEL_FILES = {
    "sglang/srt/models/llama_eagle3.py": "EntryClass = [LlamaForCausalLMEagle3]\n",
    "sglang/srt/models/llama_eagle.py": "EntryClass = LlamaForCausalLMEagle\n",
    "sglang/srt/models/deepseek_nextn.py": "EntryClass = [DeepseekV3ForCausalLMNextN]\n",
    "sglang/srt/models/qwen3_next_mtp.py": "EntryClass = [Qwen3NextForCausalLMMTP]\n",
    "sglang/srt/models/llama.py": "EntryClass = [LlamaForCausalLM]\n",
    "sglang/srt/models/glm4_moe.py": "EntryClass = [Glm4MoeForCausalLM, GlmMoeDsaForCausalLMNextN]\n",
    "sglang/srt/models/inkling.py": "\ufeffEntryClass = [InklingForConditionalGeneration, InklingForCausalLMMTP]\n",
    "sglang/srt/models/sub/x_nextn.py": "EntryClass = [NotDirectlyInModels]\n",
}


def test_the_extractor_reads_an_old_style_release(tmp_path):
    path = tmp_path / "sglang-9.9.11-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("sglang/srt/server_args.py", OLD_STYLE_SERVER_ARGS)
        for name, text in {**BASE_FILES, **MODEL_FILES}.items():
            wheel.writestr(name, text)
    facts = extract(path)
    assert [(r.id, r.algorithm, r.exception) for r in facts.launch_rules] == [
        ("standalone_dp_attention", "STANDALONE", "ValueError"),
        ("eagle_topk_page_size", "EAGLE", "ValueError"),
        ("eagle_partial_params", "EAGLE", "AssertionError"),
        ("ngram_device", "NGRAM", "ValueError"),
    ]
    assert facts.rule("standalone_dp_attention").source == "sglang/srt/server_args.py"
    auto = facts.speculative_auto_params
    assert auto.standalone == (3, 1, 4) and auto.default == (1, 1, 2)
    assert auto.by_architecture == {"LlamaForCausalLM": (5, 4, 8), "DeepseekV3ForCausalLM": (2, 1, 3)}  # first wins
    assert facts.auto_params("EAGLE", "Unknown") == (1, 1, 2)
    assert facts.speculative_max_running_requests_default == {
        "EAGLE": 48,
        "EAGLE3": 48,
        "NEXTN": 48,
        "NGRAM": 32,
        "STANDALONE": 48,
    }
    assert facts.mtp_in_target_architectures == ("DeepseekV3ForCausalLM", "Glm4MoeForCausalLM")
    ngram = facts.ngram_defaults
    assert (ngram.num_draft_tokens, ngram.eagle_topk, ngram.num_steps) == (12, 4, 3)
    assert facts.draft_architectures == {
        "EAGLE3": ("LlamaForCausalLMEagle3",),
        "EAGLE": ("LlamaForCausalLMEagle",),
        "NEXTN": (
            "DeepseekV3ForCausalLMNextN",
            "GlmMoeDsaForCausalLMNextN",
            "InklingForCausalLMMTP",
            "Qwen3NextForCausalLMMTP",
        ),
    }


NO_SPECULATIVE_CODE = """
class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE"])
"""


def test_a_release_without_the_speculative_code_gets_empty_values(tmp_path):
    path = tmp_path / "sglang-9.9.12-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("sglang/srt/server_args.py", NO_SPECULATIVE_CODE)
        for name, text in BASE_FILES.items():
            wheel.writestr(name, text)
    facts = extract(path)
    assert facts.launch_rules == ()
    assert facts.speculative_auto_params.by_architecture == {} and facts.speculative_auto_params.default is None
    assert facts.ngram_defaults.num_draft_tokens is None
    assert facts.speculative_max_running_requests_default == {} and facts.mtp_in_target_architectures == ()
    assert facts.draft_architectures == {"EAGLE3": (), "EAGLE": (), "NEXTN": ()}
    with pytest.raises(LookupError):
        facts.auto_params("EAGLE", "LlamaForCausalLM")


def test_dflash_start_up_warnings_of_each_release():
    ids = {v: [w.id for w in load(v).launch_warnings] for v in modelled_versions()}
    assert ids["0.5.10.post1"] == []  # no DFLASH
    common = ["dflash_num_steps_override", "dflash_topk_override", "dflash_block_size_infer_failed"]
    assert ids["0.5.11"] == [
        *common,
        "dflash_block_size_default",
        "dflash_max_running_requests",
        "dflash_overlap_disabled",
        "dflash_mixed_chunk_disabled",
    ]
    assert ids["0.5.23"] == [
        *common,
        "dflash_block_size_default",
        "dflash_draft_backend_fallback",
        "dflash_draft_trtllm_mha_fallback",
        "dflash_max_running_requests",
    ]
    new = load("0.5.23")
    assert new.warning("dflash_block_size_default").message == (
        "speculative_num_draft_tokens is not set; defaulting to %d for DFLASH."
    )
    assert new.warning("dflash_draft_backend_fallback").message == (
        "DFLASH draft worker does not support attention_backend %r on %s. Falling back to '%s'."
    )
