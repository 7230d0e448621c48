"""The server configurations the playbook tries: autoregressive layouts from the host, speculation on the best of them.

Autoregressive candidates follow from the GPU count and what the model is:
tensor parallel over every GPU with CUDA graphs; for a MoE target, TP with
expert parallel over all GPUs and over half of them (on PCIe-only hosts EP
keeps MoE traffic off the slow all-reduce, as the seed found), and EP with DP
attention (no attention all-reduce: slower per token at low load, often the
best peak, so the baseline DFlash must beat at high load); and pipeline
parallel, which needs no all-reduce at all. Speculation runs only where the host's
SGLang allows it, on the best autoregressive layouts: pp = 1 for every algorithm
(SGLang writes the rule for DFLASH; the drafters of the others run beside the last
stage's hidden states, which no SGLang release documents for pipeline parallel, so
specops does not try it); DP attention as host_facts' `speculative` says (DFLASH:
refused on 0.5.11, with the DP LM head on 0.5.23; STANDALONE and NGRAM: refused).
max_running_requests and the CUDA-graph batch are raised to the top benchmark level
(SGLang's speculative default of 48 running requests would cap the sweep).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specops.agent.report.naming import base_name
from specops.tools.sglang.config import ServerConfig, SpeculativeAlgorithm
from specops.tools.speculative_support import SpeculativeSupport

BENCHMARK_LEVELS = (1, 32, 64, 128, 256)
SPEC_LAYOUTS = 3  # best autoregressive layouts speculation is tried on
# A model fits one node when its weights take at most this share of the node's GPU memory: the rest is its KV cache
# and activations (SGLang's static pool is ~0.8-0.9 of each GPU, weights included).
ONE_NODE_SHARE = 0.8


@dataclass(frozen=True)
class Candidate:
    """A configuration to launch, by the fields of launch_server's `config`."""

    config: dict[str, Any]

    @property
    def name(self) -> str:
        return base_name(ServerConfig.model_validate(self.config))

    def allows(self, algorithm: SpeculativeAlgorithm, support: SpeculativeSupport | None) -> bool:
        """Whether SGLang serves `algorithm` on this layout, by host_facts' `speculative` (None: the strictest)."""
        if self.config.get("pp", 1) != 1:
            return False
        if not self.config.get("enable_dp_attention", False):
            return True
        if algorithm is SpeculativeAlgorithm.DFLASH:
            return support is not None and support.dflash_with_dp_attention in ("needs_dp_lm_head", "allowed")
        return support is not None and algorithm.value not in support.no_dp_attention

    def with_(self, **changes: Any) -> Candidate:
        return Candidate({**self.config, **changes})

    @property
    def launch_args(self) -> dict[str, Any]:
        """The config as launch_server is called with it: what differs from SGLang's defaults, as a model would write it."""
        fields = ServerConfig.model_fields
        return {
            k: v for k, v in self.config.items() if k not in fields or fields[k].is_required() or v != fields[k].default
        }


def autoregressive_candidates(
    model_path: str, gpu_count: int, *, moe: bool, interconnect: str | None
) -> list[Candidate]:
    n = max(gpu_count, 1)
    common = {"model_path": model_path, "trust_remote_code": True}
    found = [Candidate({**common, "tp": n})]
    if moe and n > 1:
        found.append(Candidate({**common, "tp": n, "ep": n}))
        if n >= 4:
            found.append(Candidate({**common, "tp": n, "ep": n // 2}))
        found.append(Candidate({**common, "tp": n, "ep": n, "dp": n, "enable_dp_attention": True}))
    if n > 1 and interconnect != "nvlink":
        # On NVLink TP all-reduce is cheap and PP only adds bubbles; over PCIe it is worth measuring.
        found.append(Candidate({**common, "pp": n}))
    return found


def group_candidates(
    model_path: str, node_gpus: int, nodes: int, *, moe: bool, interconnect: str | None, fits_one_node: bool
) -> list[Candidate]:
    """The layouts over a host group: one server across every node's GPUs (SGLang's --nnodes) and, where the
    model fits one node, replicas of each one-node layout, one per node behind SGLang's Model Gateway; the two
    shapes alternate, so that a cap on layouts still measures both."""
    across = autoregressive_candidates(model_path, node_gpus * nodes, moe=moe, interconnect=interconnect)
    if not fits_one_node:
        return across
    replicas = [
        c.with_(replicas=nodes)
        for c in autoregressive_candidates(model_path, node_gpus, moe=moe, interconnect=interconnect)
    ]
    mixed = [c for pair in zip(across, replicas, strict=False) for c in pair]
    return mixed + across[len(replicas) :] + replicas[len(across) :]


def rank_for_speculation(launched: list[Candidate], measured: dict[str, dict[int, float]]) -> list[Candidate]:
    """The layouts to try speculation on, most promising first: the best autoregressive layout at the lowest
    level (where speculation pays most), the best at the highest level (the peak it must beat), then the
    rest by their peak."""

    def at(candidate: Candidate, level: int) -> float:
        return measured.get(candidate.name, {}).get(level, 0.0)

    by_peak = sorted(launched, key=lambda c: -max(measured.get(c.name, {0: 0.0}).values()))
    levels = sorted({level for figures in measured.values() for level in figures})
    if not levels:
        return by_peak
    firsts = [max(launched, key=lambda c: at(c, levels[0])), max(launched, key=lambda c: at(c, levels[-1]))]
    return list({c.name: c for c in [*firsts, *by_peak]}.values())


def speculative_candidates(
    ranked: list[Candidate],
    algorithm: SpeculativeAlgorithm,
    drafter_path: str | None,
    top_level: int,
    *,
    block_size: int | None = None,
    layouts: int = SPEC_LAYOUTS,
    support: SpeculativeSupport | None = None,
) -> list[Candidate]:
    """`algorithm` on the `layouts` best allowed layouts (best first), CUDA graphs on, at SGLang's default settings
    (DFLASH: the drafter's block size); the DP LM head where the host's SGLang needs it for DFLASH on DP attention."""
    allowed = [c for c in ranked if c.allows(algorithm, support)]
    chosen = allowed[:layouts]
    # DP attention splits the batch over its ranks (C=64 on DP8 is 8 requests a rank), so speculation keeps paying
    # there at loads where it no longer does on TP: where the host allows it, it is among the layouts tried even
    # when its autoregressive figures rank it lower (it takes the last place).
    dp_attention = next((c for c in allowed if c.config.get("enable_dp_attention")), None)
    if dp_attention is not None and dp_attention not in chosen and layouts > 1:
        chosen = [*chosen[: layouts - 1], dp_attention]
    allowed = chosen
    dp_lm_head = (
        algorithm is SpeculativeAlgorithm.DFLASH
        and support is not None
        and support.dflash_with_dp_attention == "needs_dp_lm_head"
    )
    return [
        c.with_(
            speculative_algorithm=algorithm.value,
            **({"drafter_path": drafter_path} if drafter_path else {}),
            **({"block_size": block_size} if block_size else {}),
            max_running_requests=top_level,
            cuda_graph_max_bs=top_level,
            cuda_graphs=True,
            **({"enable_dp_lm_head": True} if c.config.get("enable_dp_attention") and dp_lm_head else {}),
        )
        for c in allowed
    ]
