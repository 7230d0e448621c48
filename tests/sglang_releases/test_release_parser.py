"""The simulator's launch_server parser for each modelled release: exactly the flags the wheel lists.

For every release in sglang_releases/data: every option string the extracted facts list
parses (with a value of its type where it takes one), `--help` lists exactly them, and
the option strings of the other releases that this one lacks are refused as argparse
refuses them (exit 2: "unrecognized arguments", or "ambiguous option" where a prefix
matches several of this release's flags).
"""

from __future__ import annotations

import pytest

from specops.sglang_releases.facts import LaunchFlag, load, modelled_versions
from specops.sim.serving.errors import LaunchError
from specops.sim.serving.server_args import build_parser, help_text, parse_server_args
from specops.tools.sglang import parse_help

VERSIONS = modelled_versions()


def _value(flag: LaunchFlag) -> list[str]:
    if flag.kind not in ("value", "append", "custom") or flag.action in (
        "DeprecatedAction",
        "argparse.BooleanOptionalAction",
    ):
        return []
    if flag.choices and not flag.choices_dynamic:
        return [str(flag.choices[0])]
    return {"int": ["1"], "human_readable_int": ["1"], "float": ["0.5"]}.get(flag.type or "str", ["x"])


def _every_name(version: str) -> set[str]:
    return {name for flag in load(version).launch_flags for name in flag.names}


@pytest.mark.parametrize("version", VERSIONS)
def test_every_flag_the_wheel_lists_is_accepted(version):
    release = load(version)
    parser = build_parser(release)
    for flag in release.launch_flags:
        for name in flag.names:
            argv = ["--model-path", "/m"] if "--model-path" not in flag.names else []
            parser.parse_args([*argv, name, *_value(flag)])  # raises LaunchError if refused


@pytest.mark.parametrize("version", VERSIONS)
def test_help_lists_exactly_the_wheels_flags(version):
    flags, _ = parse_help(help_text(load(version)))
    # argparse's own -h/--help, and BooleanOptionalAction's --no-X twins, besides the wheel's option strings.
    extra = {f for f in flags - _every_name(version) if f != "--help" and not f.startswith("--no-")}
    assert not extra
    assert _every_name(version) <= flags


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_flags_of_other_releases_are_refused_as_argparse_does(version):
    release = load(version)
    mine = _every_name(version)
    others = set().union(*(_every_name(v) for v in VERSIONS)) - mine
    assert others  # each modelled release lacks some flag another has
    for name in sorted(others):
        with pytest.raises(LaunchError) as refused:
            parse_server_args(["--model-path", "/m", name, "1"], release)
        assert refused.value.exit_code == 2
        text = refused.value.text
        matches = [m for m in mine if m.startswith(name)]
        if len(matches) > 1:
            assert f"error: ambiguous option: {name} could match" in text, name
        else:
            assert "error: unrecognized arguments:" in text or "error: argument" in text, (name, text)


def test_the_playbooks_old_cuda_graph_cap_is_ambiguous_on_0_5_23():
    with pytest.raises(LaunchError) as refused:
        parse_server_args(["--model-path", "/m", "--cuda-graph-max-bs", "64"], load("0.5.23"))
    assert (
        "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match "
        "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill" in refused.value.text
    )
    assert (
        parse_server_args(["--model-path", "/m", "--cuda-graph-max-bs", "64"], load("0.5.11")).cuda_graph_max_bs == 64
    )


def test_dflash_is_an_argparse_choice_only_from_0_5_11_and_a_free_string_on_0_5_23():
    with pytest.raises(LaunchError, match="invalid choice: 'DFLASH'"):
        parse_server_args(["--model-path", "/m", "--speculative-algorithm", "DFLASH"], load("0.5.10.post1"))
    assert (
        parse_server_args(
            ["--model-path", "/m", "--speculative-algorithm", "DFLASH"], load("0.5.11")
        ).speculative_algorithm
        == "DFLASH"
    )
    free = parse_server_args(["--model-path", "/m", "--speculative-algorithm", "dflash"], load("0.5.23"))
    assert free.speculative_algorithm == "DFLASH"


def test_each_release_names_its_settings_as_the_simulator_reads_them():
    old = parse_server_args(
        ["--model-path", "/m", "--tp-size", "8", "--dp-size", "8", "--enable-dp-attention"], load("0.5.11")
    )
    assert (old.tp_size, old.dp_size, old.enable_dp_attention) == (8, 8, True)
    new = parse_server_args(
        ["--model-path", "/m", "--tp", "8", "--attn-dp-size", "8", "--enable-dp-lm-head"], load("0.5.23")
    )
    assert (new.tp_size, new.dp_size, new.enable_dp_attention, new.enable_dp_lm_head) == (8, 8, True, True)
    deprecated = parse_server_args(
        ["--model-path", "/m", "--disable-cuda-graph", "--dp-size", "8", "--enable-dp-attention"], load("0.5.23")
    )
    assert not deprecated.cuda_graphs and deprecated.enable_dp_attention
    assert any(
        "'--disable-cuda-graph' is deprecated" in w and "--cuda-graph-backend-{decode,prefill}=disabled" in w
        for w in deprecated.deprecation_warnings
    )
    graphs_off = parse_server_args(["--model-path", "/m", "--cuda-graph-backend-decode", "disabled"], load("0.5.23"))
    assert not graphs_off.cuda_graphs


def test_parser_names_are_argparse_choices_in_sglangs_own_words():
    # The wheel's registries (extracted): SGLang's spelling only, `deepseek-r1` and not `deepseek_r1`.
    release = load("0.5.23")
    reasoning, tools = release.flag("--reasoning-parser"), release.flag("--tool-call-parser")
    assert reasoning is not None and not reasoning.choices_dynamic and reasoning.choices is not None
    assert tools is not None and not tools.choices_dynamic and tools.choices is not None
    assert reasoning.choices[:4] == ("auto", "apertus2509", "beam", "deepseek-r1")  # 0.5.23 puts "auto" first
    assert "kimi_k2" in tools.choices and "deepseek_r1" not in reasoning.choices
    assert parse_server_args(["--model-path", "/m", "--reasoning-parser", "deepseek-r1"], release).reasoning_parser
    with pytest.raises(LaunchError) as refused:
        parse_server_args(["--model-path", "/m", "--reasoning-parser", "deepseek_r1"], release)
    choices = ", ".join(repr(c) for c in reasoning.choices)
    assert refused.value.exit_code == 2
    assert (
        f"sglang serve: error: argument --reasoning-parser: invalid choice: 'deepseek_r1' (choose from {choices})\n"
        in refused.value.text
    )
    # 0.5.10.post1 registered fewer: no `auto`, no deepseekv4 tool-call parser.
    old = load("0.5.10.post1")
    assert old.flag("--reasoning-parser").choices[0] == "deepseek-r1"
    with pytest.raises(LaunchError, match="argument --tool-call-parser: invalid choice: 'deepseekv4'"):
        parse_server_args(["--model-path", "/m", "--tool-call-parser", "deepseekv4"], old)
