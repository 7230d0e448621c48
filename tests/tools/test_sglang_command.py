"""ServerConfig -> launch_server argv, --help parsing, SGLang's rules and log diagnosis: no host needed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from specops.sim.serving.server_args import help_text
from specops.tools.sglang import (
    ServerConfig,
    SglangCapabilities,
    SglangRuleViolation,
    SglangTooOld,
    UnsupportedFlags,
    check_rules,
    check_supported,
    diagnose,
    launch_argv,
    needed_flags,
    parse_help,
)

KIMI = "/root/models/Kimi-K2.6"
DFLASH = dict(model_path=KIMI, tp=8, ep=4, speculative_algorithm="DFLASH", drafter_path="/root/models/dflash")


def test_argv_is_a_word_list_with_only_the_flags_set():
    argv = launch_argv(ServerConfig(model_path=KIMI, tp=8, ep=4, trust_remote_code=True, tool_call_parser="kimi_k2",
                                    reasoning_parser="kimi_k2", context_length=128000, port=30001, enable_metrics=True))
    assert argv[:3] == ["python3", "-m", "sglang.launch_server"]
    pairs = dict(zip(argv[3::1], argv[4::1]))
    assert pairs["--model-path"] == KIMI and pairs["--tp-size"] == "8" and pairs["--ep-size"] == "4"
    assert pairs["--context-length"] == "128000" and pairs["--port"] == "30001"
    assert {"--trust-remote-code", "--enable-metrics"} <= set(argv)
    assert not {"--pp-size", "--dp-size", "--disable-cuda-graph", "--speculative-algorithm"} & set(argv)


def test_dflash_argv_carries_drafter_block_size_and_graph_settings():
    argv = launch_argv(ServerConfig(**DFLASH, block_size=8, cuda_graph_max_bs=64, disable_cuda_graph_padding=True,
                                    max_running_requests=128, mem_fraction_static=0.88))
    i = argv.index("--speculative-algorithm")
    assert argv[i + 1] == "DFLASH"
    assert argv[argv.index("--speculative-draft-model-path") + 1] == "/root/models/dflash"
    assert argv[argv.index("--speculative-num-draft-tokens") + 1] == "8"
    assert argv[argv.index("--cuda-graph-max-bs") + 1] == "64"
    assert "--disable-cuda-graph-padding" in argv and argv[argv.index("--mem-fraction-static") + 1] == "0.88"
    off = launch_argv(ServerConfig(**DFLASH, cuda_graphs=False, cuda_graph_max_bs=64))
    assert "--disable-cuda-graph" in off and "--cuda-graph-max-bs" not in off


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
        {**DFLASH, "block_size": 1},
        {"model_path": KIMI, "tp": 8, "ep": 3},
        {"model_path": KIMI, "unknown_flag": True},
    ],
)
def test_bad_configurations_are_refused_before_anything_runs(bad):
    with pytest.raises(ValidationError):
        ServerConfig(**bad)


def test_dflash_rules_refuse_pp_and_dp_attention_with_sglangs_reason():
    with pytest.raises(SglangRuleViolation, match="only supports pp_size == 1") as pp:
        check_rules(ServerConfig(**{**DFLASH, "tp": 1, "ep": 1, "pp": 2}))
    assert pp.value.details["pp"] == 2 and "tp" in pp.value.remedy
    with pytest.raises(SglangRuleViolation, match="does not support dp attention"):
        check_rules(ServerConfig(**DFLASH, dp=8, enable_dp_attention=True))
    check_rules(ServerConfig(model_path=KIMI, pp=8))  # pipeline parallelism without a drafter is fine


def _caps(version: str) -> SglangCapabilities:
    flags, algos = parse_help(help_text(tuple(int(p) for p in version.split("."))))
    return SglangCapabilities(host="test", python="python3", version=version, flags=flags, speculative_algorithms=algos)


def test_help_parsing_finds_flags_aliases_and_dflash_only_where_it_exists():
    new, old = _caps("0.5.10"), _caps("0.5.2")
    assert {"--model-path", "--tp-size", "--tp", "--ep-size", "--enable-dp-attention", "--cuda-graph-max-bs"} <= new.flags
    assert "DFLASH" in new.speculative_algorithms and "DFLASH" not in old.speculative_algorithms
    check_supported(ServerConfig(**DFLASH, block_size=8), new)
    with pytest.raises(SglangTooOld, match=r"0\.5\.2 .*DFLASH needs SGLang >= 0\.5\.10") as too_old:
        check_supported(ServerConfig(**DFLASH), old)
    assert too_old.value.details["version"] == "0.5.2"
    check_supported(ServerConfig(model_path=KIMI, tp=8, ep=4), old)  # autoregressive needs nothing new


def test_a_flag_missing_from_help_is_named():
    caps = _caps("0.5.10")
    trimmed = caps.model_copy(update={"flags": caps.flags - {"--reasoning-parser"}})
    with pytest.raises(UnsupportedFlags, match="--reasoning-parser") as missing:
        check_supported(ServerConfig(model_path=KIMI, reasoning_parser="kimi_k2"), trimmed)
    assert missing.value.details["missing_flags"] == ["--reasoning-parser"]
    assert needed_flags(ServerConfig(model_path=KIMI)) == ["--model-path", "--tp-size", "--host", "--port"]


def test_diagnosis_reads_an_argparse_refusal_as_unsupported_flag():
    text = "usage: launch_server.py [-h] --model-path MODEL_PATH\nlaunch_server.py: error: unrecognized arguments: --foo\n"
    d = diagnose(text)
    assert d.cause == "unsupported_flag" and d.lines == ["launch_server.py: error: unrecognized arguments: --foo"]


def test_diagnosis_without_a_known_error_is_a_crash_with_the_last_lines():
    d = diagnose("[2026-01-01 00:00:00] Load weight begin.\nSomething odd\n")
    assert d.cause == "crash" and d.lines == ["[2026-01-01 00:00:00] Load weight begin.", "Something odd"]
