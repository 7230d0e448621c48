"""ServerConfig -> launch_server argv, --help parsing, SGLang's rules and log diagnosis: no host needed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from specops.sglang_releases.facts import load
from specops.sim.serving.server_args import help_text, parse_server_args, reported_server_args
from specops.tools.sglang import (
    ServerConfig,
    ServerInfoSummary,
    SglangCapabilities,
    SglangRuleViolation,
    SglangTooOld,
    UnsupportedFlags,
    check_launch,
    check_rules,
    check_supported,
    diagnose,
    launch_argv,
    needed_flags,
    parse_help,
)
from specops.tools.sglang.capabilities import parse_help_choices

KIMI = "/root/models/Kimi-K2.6"
DFLASH = dict(model_path=KIMI, tp=8, ep=4, speculative_algorithm="DFLASH", drafter_path="/root/models/dflash")


def test_argv_is_a_word_list_with_only_the_flags_set():
    argv = launch_argv(
        ServerConfig(
            model_path=KIMI,
            tp=8,
            ep=4,
            trust_remote_code=True,
            tool_call_parser="kimi_k2",
            reasoning_parser="kimi_k2",
            context_length=128000,
            port=30001,
            enable_metrics=True,
        )
    )
    assert argv[:3] == ["python3", "-m", "sglang.launch_server"]
    pairs = dict(zip(argv[3::1], argv[4::1], strict=False))
    assert pairs["--model-path"] == KIMI and pairs["--tp-size"] == "8" and pairs["--ep-size"] == "4"
    assert pairs["--context-length"] == "128000" and pairs["--port"] == "30001"
    assert {"--trust-remote-code", "--enable-metrics"} <= set(argv)
    assert not {"--pp-size", "--dp-size", "--disable-cuda-graph", "--speculative-algorithm"} & set(argv)


def test_dflash_argv_carries_drafter_block_size_and_graph_settings_in_each_releases_spelling():
    config = ServerConfig(
        **DFLASH,
        block_size=8,
        cuda_graph_max_bs=64,
        disable_cuda_graph_padding=True,
        max_running_requests=128,
        mem_fraction_static=0.88,
    )
    new = launch_argv(config, flags=_caps("0.5.23").flags)
    assert new[new.index("--speculative-algorithm") + 1] == "DFLASH"
    assert new[new.index("--speculative-draft-model-path") + 1] == "/root/models/dflash"
    assert new[new.index("--speculative-num-draft-tokens") + 1] == "8"
    # 0.5.23 has only the per-phase cap; --cuda-graph-max-bs would be an "ambiguous option" there.
    assert new[new.index("--cuda-graph-max-bs-decode") + 1] == "64" and "--cuda-graph-max-bs" not in new
    assert "--disable-cuda-graph-padding" in new and new[new.index("--mem-fraction-static") + 1] == "0.88"
    old = launch_argv(config, flags=_caps("0.5.11").flags)
    assert old[old.index("--cuda-graph-max-bs") + 1] == "64" and "--cuda-graph-max-bs-decode" not in old
    assert launch_argv(config) == new  # without a host's flags: the newest release's
    off_new = launch_argv(ServerConfig(**DFLASH, cuda_graphs=False, cuda_graph_max_bs=64), flags=_caps("0.5.23").flags)
    assert (
        off_new[off_new.index("--cuda-graph-backend-decode") + 1] == "disabled"
        and "--disable-cuda-graph" not in off_new
    )
    assert not {"--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"} & set(off_new)
    off_old = launch_argv(ServerConfig(**DFLASH, cuda_graphs=False), flags=_caps("0.5.11").flags)
    assert "--disable-cuda-graph" in off_old


def test_dp_attention_is_spelled_as_the_release_spells_it():
    dp = ServerConfig(model_path=KIMI, tp=8, ep=8, dp=8, enable_dp_attention=True)
    new = launch_argv(dp, flags=_caps("0.5.23").flags)
    assert new[new.index("--attn-dp-size") + 1] == "8" and not {"--dp-size", "--enable-dp-attention"} & set(new)
    old = launch_argv(dp, flags=_caps("0.5.11").flags)
    assert old[old.index("--dp-size") + 1] == "8" and "--enable-dp-attention" in old and "--attn-dp-size" not in old
    head = launch_argv(dp.model_copy(update={"enable_dp_lm_head": True}), flags=_caps("0.5.23").flags)
    assert "--enable-dp-lm-head" in head


@pytest.mark.parametrize(
    "bad",
    [
        {"model_path": "/root/models/x; rm -rf /"},
        {"model_path": "$(reboot)"},
        {"model_path": "--help"},
        {"model_path": "/root/../etc"},
        {"model_path": KIMI, "port": 0},
        {"model_path": KIMI, "tp": 0},
        {"model_path": KIMI, "mem_fraction_static": 1.5},
        {"model_path": KIMI, "tool_call_parser": "kimi k2"},
        {"model_path": KIMI, "host": "0.0.0.0;id"},
        {"model_path": KIMI, "drafter_path": "/root/models/dflash"},
        {"model_path": KIMI, "speculative_algorithm": "DFLASH"},
        {"model_path": KIMI, "speculative_algorithm": "MEDUSA", "drafter_path": "/d"},
        {**DFLASH, "block_size": 0},
        {"model_path": KIMI, "enable_dp_lm_head": True},
        {"model_path": KIMI, "tp": 8, "ep": 3},
        {"model_path": KIMI, "unknown_flag": True},
    ],
)
def test_bad_configurations_are_refused_before_anything_runs(bad):
    with pytest.raises(ValidationError):
        ServerConfig(**bad)


def test_dflash_rules_are_the_installed_releases_with_its_messages():
    new, first = load("0.5.23"), load("0.5.11")
    for release in (new, first):
        with pytest.raises(SglangRuleViolation, match="only supports pp_size == 1") as pp:
            check_rules(ServerConfig(**{**DFLASH, "tp": 1, "ep": 1, "pp": 2}), release)
        assert pp.value.details["pp"] == 2 and "tp" in pp.value.remedy
        assert "Currently DFLASH speculative decoding only supports pp_size == 1." in str(pp.value)
    dp = ServerConfig(**DFLASH, dp=8, enable_dp_attention=True)
    with pytest.raises(SglangRuleViolation, match="does not support dp attention") as refused:
        check_rules(dp, first)  # 0.5.11 refuses DFLASH with DP attention outright
    assert "0.5.23" in refused.value.remedy
    with pytest.raises(SglangRuleViolation, match="requires --enable-dp-lm-head") as needs:
        check_rules(dp, new)  # 0.5.23 allows it with the DP LM head
    assert "enable_dp_lm_head" in needs.value.remedy
    check_rules(dp.model_copy(update={"enable_dp_lm_head": True}), new)
    check_rules(ServerConfig(model_path=KIMI, pp=8), new)  # pipeline parallelism without a drafter is fine


EAGLE3 = dict(model_path=KIMI, tp=8, speculative_algorithm="EAGLE3", drafter_path="/root/models/eagle3")


@pytest.mark.parametrize("version", ["0.5.10.post1", "0.5.11", "0.5.23"])
def test_partial_eagle_settings_are_refused_as_sglang_refuses_them(version):
    release = load(version)
    for alone in ({"speculative_eagle_topk": 4}, {"block_size": 8}):
        with pytest.raises(SglangRuleViolation, match="but no speculative_num_steps.*bare AssertionError") as refused:
            check_rules(ServerConfig(**EAGLE3, **alone), release)
        assert refused.value.details["rule"] == "eagle_partial_params"
        assert "speculative_eagle_topk is None and" in str(refused.value)  # SGLang's own assert, from the wheel
        assert "together, or none" in refused.value.remedy
    with pytest.raises(SglangRuleViolation, match="TypeError: '>' not supported") as steps_only:
        check_rules(ServerConfig(**EAGLE3, speculative_num_steps=3), release)
    assert steps_only.value.details["given"] == {"speculative_num_steps": 3}
    with pytest.raises(SglangRuleViolation, match="only for topk 1"):
        check_rules(ServerConfig(**EAGLE3, speculative_num_steps=3, speculative_eagle_topk=4), release)
    check_rules(ServerConfig(**EAGLE3), release)  # none: SGLang picks all three
    check_rules(ServerConfig(**EAGLE3, speculative_num_steps=3, speculative_eagle_topk=1), release)  # draft = steps + 1
    check_rules(ServerConfig(**EAGLE3, speculative_num_steps=3, speculative_eagle_topk=4, block_size=8), release)


def _caps(version: str) -> SglangCapabilities:
    flags, algos = parse_help(help_text(load(version)))
    return SglangCapabilities(host="test", python="python3", version=version, flags=flags, speculative_algorithms=algos)


def test_help_parsing_finds_flags_aliases_and_dflash_only_where_it_exists():
    new, first, old = _caps("0.5.23"), _caps("0.5.11"), _caps("0.5.10.post1")
    assert {"--model-path", "--tp-size", "--ep-size", "--enable-dp-attention", "--cuda-graph-max-bs"} <= first.flags
    assert {"--attn-dp-size", "--enable-dp-lm-head", "--cuda-graph-max-bs-decode"} <= new.flags
    assert "--cuda-graph-max-bs" not in new.flags
    # 0.5.1x list the algorithms as argparse choices; 0.5.23 takes a free string, its known names come from the wheel.
    assert first.speculative_algorithms is not None and "DFLASH" in first.speculative_algorithms
    assert new.speculative_algorithms is None and new.offers("DFLASH") and new.offers("NEXTN")
    assert not old.offers("DFLASH")
    check_launch(ServerConfig(**DFLASH, block_size=8), new)
    check_launch(ServerConfig(**DFLASH, block_size=8), first)
    with pytest.raises(SglangTooOld, match=r"0\.5\.10\.post1 .*DFLASH needs SGLang >= 0\.5\.11") as too_old:
        check_launch(ServerConfig(**DFLASH), old)
    assert too_old.value.details["version"] == "0.5.10.post1" and too_old.value.details["needs"] == "0.5.11"
    check_supported(ServerConfig(model_path=KIMI, tp=8, ep=4), old)  # autoregressive needs nothing new


def test_a_flag_missing_from_help_is_named():
    caps = _caps("0.5.23")
    trimmed = caps.model_copy(update={"flags": caps.flags - {"--reasoning-parser"}})
    with pytest.raises(UnsupportedFlags, match="--reasoning-parser") as missing:
        check_supported(ServerConfig(model_path=KIMI, reasoning_parser="kimi_k2"), trimmed)
    assert missing.value.details["missing_flags"] == ["--reasoning-parser"]
    assert needed_flags(ServerConfig(model_path=KIMI)) == ["--model-path", "--tp-size", "--host", "--port"]


def test_parser_names_are_checked_against_sglangs_own():
    caps = _caps("0.5.23")  # no choices from --help: the modelled release's (extracted from the wheel)
    listed = parse_help_choices(help_text(load("0.5.23")))  # as read_capabilities reads --help
    assert "deepseek-r1" in listed["--reasoning-parser"] and "kimi_k2" in listed["--tool-call-parser"]
    for checked in (caps, caps.model_copy(update={"flag_choices": listed})):
        check_supported(ServerConfig(model_path=KIMI, tool_call_parser="kimi_k2", reasoning_parser="kimi_k2"), checked)
        with pytest.raises(UnsupportedFlags, match=r"has no --reasoning-parser 'deepseek_r1'") as refused:
            check_launch(ServerConfig(model_path=KIMI, reasoning_parser="deepseek_r1"), checked)
        assert refused.value.remedy.startswith("use 'deepseek-r1'")
        assert refused.value.details["flag"] == "--reasoning-parser" and "qwen3" in refused.value.details["choices"]
    # A parser a plugin registers is in the host's --help, not in the wheel: --help wins.
    plugin = caps.model_copy(update={"flag_choices": {"--tool-call-parser": ("in_house",)}})
    check_supported(ServerConfig(model_path=KIMI, tool_call_parser="in_house"), plugin)
    with pytest.raises(UnsupportedFlags, match="--tool-call-parser 'deepseekv4'"):
        check_supported(ServerConfig(model_path=KIMI, tool_call_parser="deepseekv4"), _caps("0.5.10.post1"))


def _reported(version: str, config: ServerConfig) -> dict:
    """/server_info's server args as the simulator reports them for this launch (the cap filled in, 160)."""
    args = parse_server_args(launch_argv(config, flags=_caps(version).flags)[3:], load(version))
    args.cuda_graph_max_bs = args.cuda_graph_max_bs or 160
    return reported_server_args(args.model_dump(), load(version))


def test_server_info_is_read_as_each_release_reports_it():
    dp_attention = ServerConfig(model_path=KIMI, tp=8, dp=8, enable_dp_attention=True, cuda_graphs=False)
    for version in ("0.5.11", "0.5.23"):
        info = ServerInfoSummary.from_server_info(_reported(version, dp_attention))
        # 0.5.23: dp_size 1, attn_dp_size 8, disable_cuda_graph false with the backends disabled.
        assert (info.dp, info.enable_dp_attention, info.cuda_graphs, info.cuda_graph_max_bs) == (8, True, False, 160)
    capped = ServerConfig(model_path=KIMI, tp=8, cuda_graph_max_bs=64)
    for version in ("0.5.11", "0.5.23"):
        info = ServerInfoSummary.from_server_info(_reported(version, capped))
        assert (info.dp, info.enable_dp_attention, info.cuda_graphs, info.cuda_graph_max_bs) == (1, False, True, 64)
    raw = _reported("0.5.23", dp_attention)
    assert (raw["dp_size"], raw["attn_dp_size"], raw["disable_cuda_graph"]) == (1, 8, False)


def test_diagnosis_reads_an_argparse_refusal_as_unsupported_flag():
    text = (
        "usage: launch_server.py [-h] --model-path MODEL_PATH\nlaunch_server.py: error: unrecognized arguments: --foo\n"
    )
    d = diagnose(text)
    assert d.cause == "unsupported_flag" and d.lines == ["launch_server.py: error: unrecognized arguments: --foo"]


def test_diagnosis_without_a_known_error_is_a_crash_with_the_last_lines():
    d = diagnose("[2026-01-01 00:00:00] Load weight begin.\nSomething odd\n")
    assert d.cause == "crash" and d.lines == ["[2026-01-01 00:00:00] Load weight begin.", "Something odd"]
