"""MTP: the target's own multi-token-prediction heads as drafter (SGLang's NEXTN, an alias of EAGLE).

A checkpoint carries them when its config has `num_nextn_predict_layers` > 0
(DeepSeek-V3: 1). SGLang then drafts with the target's own weights, without a
--speculative-draft-model-path, for the target architectures its release lists
(`mtp_in_target_architectures`, read from the wheel); for another architecture it
needs a separate MTP checkpoint.
"""

from __future__ import annotations

from typing import Any

from ...sglang_releases.facts import ReleaseFacts
from .fit import Fit
from .model_facts import ModelConfigFacts, text_field


def mtp_layers(config: dict[str, Any]) -> int:
    value = text_field(config, "num_nextn_predict_layers")
    return value if isinstance(value, int) else 0


def check_mtp_in_target(config: dict[str, Any], target: ModelConfigFacts, release: ReleaseFacts, fit: Fit) -> None:
    layers = mtp_layers(config)
    if layers < 1:
        fit.problems.append(
            f"{target.source} carries no MTP heads (num_nextn_predict_layers is {text_field(config, 'num_nextn_predict_layers')}): "
            "there is nothing for --speculative-algorithm NEXTN to draft with"
        )
        return
    fit.checks.append(f"the target carries {layers} MTP layer{'s' if layers > 1 else ''} (num_nextn_predict_layers)")
    architecture = (target.architectures or ["unknown"])[0]
    if architecture not in release.mtp_in_target_architectures:
        fit.problems.append(
            f"SGLang {release.version} drafts from the target's own MTP heads only for "
            f"{', '.join(release.mtp_in_target_architectures)}; {architecture} needs a separate MTP draft checkpoint"
        )
    else:
        fit.checks.append(f"SGLang {release.version} drafts from {architecture}'s own MTP heads (no draft model path)")
