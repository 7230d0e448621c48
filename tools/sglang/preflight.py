"""Checks before a launch: the installed SGLang's flags and algorithms, then its start-up rules.

Both run before anything starts on the host, so a configuration SGLang would
refuse costs no model load (minutes on a real host) and leaves nothing behind.
The rules and their messages are the installed release's own (read from its wheel,
`specops.sglang_releases`): 0.5.11 refuses DFLASH with DP attention; 0.5.23 allows it
when the DP LM head is on.
"""

from __future__ import annotations

import difflib

from ...sglang_releases.facts import ReleaseFacts, first_release_with
from .capabilities import SglangCapabilities
from .command import needed_flags
from .config import EAGLE_FAMILY, ServerConfig, SpeculativeAlgorithm
from .errors import SglangRuleViolation, SglangTooOld, UnsupportedFlags


def check_launch(config: ServerConfig, caps: SglangCapabilities) -> None:
    """Everything SGLang would refuse at start, in the order it matters: version, flags, rules."""
    check_supported(config, caps)
    check_rules(config, caps.release)


def _sglang_says(release: ReleaseFacts, rule_id: str) -> str:
    rule = release.rule(rule_id)
    return f' (SGLang {release.version}: "{rule.message}")' if rule else ""


# Algorithms SGLang serves without DP attention, and the rule that says so (0.5.23: "Currently standalone
# speculative decoding does not support dp attention.").
_NO_DP_ATTENTION = {
    SpeculativeAlgorithm.STANDALONE: "standalone_dp_attention",
    SpeculativeAlgorithm.NGRAM: "ngram_dp_attention",
}


_ALL_OR_NONE = (
    "set speculative_num_steps, speculative_eagle_topk and block_size together, or none of them "
    "(SGLang then picks all three for the target)"
)


def _check_eagle_params(config: ServerConfig, release: ReleaseFacts) -> None:
    """The EAGLE family's (steps, topk, draft tokens) as its start-up takes them (0.5.23 `_handle_eagle_family`,
    0.5.1x `_handle_speculative_decoding`): all three or none; SGLang has no message of its own for a partial set."""
    steps, topk, draft = config.speculative_num_steps, config.speculative_eagle_topk, config.block_size
    given = {
        name: value
        for name, value in (("speculative_num_steps", steps), ("speculative_eagle_topk", topk), ("block_size", draft))
        if value is not None
    }
    algorithm = config.speculative_algorithm
    assert algorithm is not None
    details = {"given": given, "version": release.version}
    if steps is None and given:
        rule = release.rule("eagle_partial_params")
        where = f" ({rule.source}: assert fails when {rule.condition})" if rule else ""
        raise SglangRuleViolation(
            f"{algorithm.value} with {' and '.join(given)} but no speculative_num_steps: SGLang {release.version} "
            f"stops at start-up with a bare AssertionError{where}",
            remedy=_ALL_OR_NONE,
            details={**details, "rule": "eagle_partial_params"},
        )
    if steps is not None and topk is None:
        raise SglangRuleViolation(
            f"{algorithm.value} with speculative_num_steps but no speculative_eagle_topk: SGLang {release.version} "
            "compares the unset topk with 1 at start-up and stops "
            "(TypeError: '>' not supported between instances of 'NoneType' and 'int')",
            remedy=_ALL_OR_NONE,
            details={**details, "rule": "eagle_topk_unset"},
        )
    if topk is not None and topk > 1 and draft is None:
        raise SglangRuleViolation(
            f"{algorithm.value} with speculative_eagle_topk {topk} but no block_size: SGLang sets "
            "--speculative-num-draft-tokens only for topk 1 (to steps + 1), so nothing would set it",
            remedy="set block_size (--speculative-num-draft-tokens) with a topk above 1, or leave all three unset",
            details={**details, "rule": "eagle_draft_tokens_unset"},
        )


def check_rules(config: ServerConfig, release: ReleaseFacts) -> None:
    """SGLang's server-args rules for speculative decoding, as the installed release applies them."""
    algorithm = config.speculative_algorithm
    rule_id = _NO_DP_ATTENTION.get(algorithm) if algorithm is not None else None
    if rule_id is not None and config.enable_dp_attention and release.rule(rule_id) is not None:
        assert algorithm is not None
        raise SglangRuleViolation(
            f"SGLang {release.version} refuses {algorithm.value} with DP attention{_sglang_says(release, rule_id)}",
            remedy=f"serve {algorithm.value} on a layout without DP attention (tensor or expert parallel)",
            details={"rule": rule_id, "version": release.version},
        )
    if algorithm in EAGLE_FAMILY:
        _check_eagle_params(config, release)
    if algorithm is not SpeculativeAlgorithm.DFLASH:
        return
    if config.enable_dp_attention and release.rule("dflash_dp_attention") is not None:
        raise SglangRuleViolation(
            f"SGLang {release.version} refuses DFLASH with DP attention{_sglang_says(release, 'dflash_dp_attention')}",
            remedy="drop enable_dp_attention for the DFLASH server (DP attention stays available without a drafter), "
            "or upgrade SGLang to 0.5.23, which allows DFLASH with DP attention and the DP LM head",
            details={"rule": "dflash_dp_attention", "version": release.version},
        )
    if (
        config.enable_dp_attention
        and not config.enable_dp_lm_head
        and release.rule("dflash_dp_attention_needs_dp_lm_head")
    ):
        raise SglangRuleViolation(
            "DFLASH with DP attention needs the DP LM head"
            + _sglang_says(release, "dflash_dp_attention_needs_dp_lm_head"),
            remedy="set enable_dp_lm_head=true in the configuration (passes --enable-dp-lm-head)",
            details={"rule": "dflash_dp_attention_needs_dp_lm_head", "version": release.version},
        )
    if config.pp != 1:
        raise SglangRuleViolation(
            f"DFLASH only supports pp_size == 1, but the configuration has pp={config.pp}"
            + _sglang_says(release, "dflash_pp")
            + ": the drafter reads hidden states from all target layers on one rank",
            remedy="serve DFLASH with tensor or expert parallelism instead (e.g. tp=8 ep=4, pp=1), "
            "or keep pipeline parallelism without speculative decoding",
            details={"rule": "dflash_pp", "pp": config.pp, "version": release.version},
        )


def check_supported(config: ServerConfig, caps: SglangCapabilities) -> None:
    """Every flag the configuration passes must be in the installed --help; the algorithm among those it takes."""
    algo = config.speculative_algorithm
    if algo is not None and not caps.offers(algo.value):
        since = first_release_with(algo.value)
        too_old = SglangTooOld if since is not None else UnsupportedFlags
        needs = f" ({algo.value} needs SGLang >= {since})" if since else ""
        raise too_old(
            f"SGLang {caps.version} on {caps.host} does not offer --speculative-algorithm {algo.value}{needs}; "
            f"it offers {', '.join(caps.algorithms)}",
            remedy=f"upgrade SGLang on the host to {since or 'a release with ' + algo.value} or newer, "
            "or launch without speculative decoding",
            details={
                "version": caps.version,
                "algorithm": algo.value,
                "choices": list(caps.algorithms),
                "needs": since,
            },
        )
    missing = [flag for flag in needed_flags(config, caps.flags) if not caps.has(flag)]
    if missing:
        speculative = algo is not None and any(f.startswith("--speculative-") for f in missing)
        error = SglangTooOld if speculative else UnsupportedFlags
        raise error(
            f"SGLang {caps.version} on {caps.host} does not know {', '.join(missing)} (not in launch_server --help)",
            remedy="upgrade SGLang on the host, or drop the settings those flags carry from the configuration",
            details={"version": caps.version, "missing_flags": missing},
        )
    check_choices(config, caps)


def check_choices(config: ServerConfig, caps: SglangCapabilities) -> None:
    """Parser names the installed SGLang's argparse refuses ('invalid choice': exit 2 before anything loads)."""
    for flag, value in (
        ("--tool-call-parser", config.tool_call_parser),
        ("--reasoning-parser", config.reasoning_parser),
    ):
        choices = caps.choices(flag)
        if value is None or choices is None or value in choices:
            continue
        close = difflib.get_close_matches(value, choices, n=3, cutoff=0.6)
        raise UnsupportedFlags(
            f"SGLang {caps.version} on {caps.host} has no {flag} {value!r} "
            f"(argparse would exit: invalid choice: {value!r})",
            remedy=(f"use {' or '.join(repr(c) for c in close)}: " if close else "")
            + f"SGLang's names are {', '.join(choices)}",
            details={"flag": flag, "value": value, "choices": list(choices), "version": caps.version},
        )
