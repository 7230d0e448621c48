"""Checks before a launch: SGLang's own start-up rules, and the installed SGLang's flags.

Both run before anything starts on the host, so a configuration SGLang would
refuse costs no model load (minutes on a real host) and leaves nothing behind.
"""

from __future__ import annotations

from .capabilities import SglangCapabilities
from .command import needed_flags
from .config import ServerConfig, SpeculativeAlgorithm
from .errors import SglangRuleViolation, SglangTooOld, UnsupportedFlags

# The first SGLang that accepts --speculative-algorithm DFLASH (PR sgl-project/sglang#22077,
# merged right after the v0.5.10 tag; builds of main that week report 0.5.10).
DFLASH_MIN_VERSION = "0.5.10"


def check_rules(config: ServerConfig) -> None:
    """SGLang's server-args rules for speculative decoding (srt/server_args.py), applied up front."""
    if config.speculative_algorithm is not SpeculativeAlgorithm.DFLASH:
        return
    if config.pp != 1:
        raise SglangRuleViolation(
            f"DFLASH speculative decoding only supports pp_size == 1, but the configuration has pp={config.pp}: "
            "SGLang refuses it at start (the drafter reads hidden states from all target layers on one rank)",
            remedy="serve DFLASH with tensor or expert parallelism instead (e.g. tp=8 ep=4, pp=1), "
            "or keep pipeline parallelism without speculative decoding",
            details={"rule": "dflash_pp", "pp": config.pp},
        )
    if config.enable_dp_attention:
        raise SglangRuleViolation(
            "DFLASH speculative decoding does not support dp attention: SGLang refuses --enable-dp-attention with it",
            remedy="drop enable_dp_attention for the DFLASH server (dp attention stays available without a drafter)",
            details={"rule": "dflash_dp_attention"},
        )


def check_supported(config: ServerConfig, caps: SglangCapabilities) -> None:
    """Every flag the configuration passes must be in the installed --help; DFLASH among the algorithm choices."""
    algo = config.speculative_algorithm
    if algo is not None and caps.speculative_algorithms is not None and algo.value not in caps.speculative_algorithms:
        too_old = SglangTooOld if algo is SpeculativeAlgorithm.DFLASH else UnsupportedFlags
        since = f" (DFLASH needs SGLang >= {DFLASH_MIN_VERSION})" if algo is SpeculativeAlgorithm.DFLASH else ""
        raise too_old(
            f"SGLang {caps.version} on {caps.host} does not offer --speculative-algorithm {algo.value}{since}; "
            f"it offers {', '.join(caps.speculative_algorithms)}",
            remedy=f"upgrade SGLang on the host to a release with {algo.value}, or launch without speculative decoding",
            details={"version": caps.version, "algorithm": algo.value, "choices": list(caps.speculative_algorithms)},
        )
    missing = [flag for flag in needed_flags(config) if not caps.has(flag)]
    if missing:
        speculative = algo is SpeculativeAlgorithm.DFLASH and any(f.startswith("--speculative-") for f in missing)
        error = SglangTooOld if speculative else UnsupportedFlags
        raise error(
            f"SGLang {caps.version} on {caps.host} does not know {', '.join(missing)} (not in launch_server --help)",
            remedy="upgrade SGLang on the host, or drop the settings those flags carry from the configuration",
            details={"version": caps.version, "missing_flags": missing},
        )
