"""DFlash launch rules, with the messages of the host's SGLang release (read from its wheel).

Server-args time (before anything loads): a draft model path is required, pp_size
must be 1, DP attention is refused (0.5.11) or needs --enable-dp-lm-head (0.5.23),
the block size comes from
--speculative-num-draft-tokens / --speculative-dflash-block-size (both set and
different: error), else the drafter's config block_size, else 16 with a warning;
speculative_num_steps and speculative_eagle_topk are forced to 1 (warning when set
otherwise); max_running_requests defaults to 48.
Load time: the draft model's config must name an architecture the release serves
under DFLASH (0.5.23: DFlashDraftModel, DFlash2DraftModel and others) and its
target_layer_ids must lie within the target's layers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...sglang_releases.facts import ReleaseFacts
from .checkpoint import Checkpoint
from .errors import SGLANG_SRC, LaunchError, scheduler_traceback, server_args_traceback
from .server_args import ServerArgs

DFLASH_DEFAULT_BLOCK_SIZE = 16
DFLASH_DEFAULT_MAX_RUNNING_REQUESTS = 48
DRAFT_ATTENTION_BACKENDS = ("flashinfer", "fa3", "fa4", "triton", "trtllm_mha", "ascend")


@dataclass
class SpeculativeSettings:
    algorithm: str
    block_size: int
    max_running_requests: int
    warnings: list[str] = field(default_factory=list)


def _value_error(message: str) -> LaunchError:
    return LaunchError(server_args_traceback(f"ValueError: {message}", check="_handle_speculative_decoding", line=2811))


def _refuse(release: ReleaseFacts, rule_id: str, **values: object) -> LaunchError:
    """The release's own message for a rule, its `{expression}` fields filled from `values` by their last name."""
    rule = release.rule(rule_id)
    if rule is None:
        raise KeyError(f"SGLang {release.version} has no DFLASH rule {rule_id!r}")
    message = re.sub(
        r"\{([^{}]+)\}", lambda m: str(values.get(m.group(1).rsplit(".", 1)[-1], m.group(0))), rule.message
    )
    return _value_error(message)


def drafter_dflash_config(drafter: Checkpoint) -> dict:
    """Fields a DFlash drafter config carries; the nested dflash_config wins over the top level."""
    merged = {
        k: drafter.config[k]
        for k in ("block_size", "target_layer_ids", "mask_token", "mask_token_id")
        if k in drafter.config
    }
    nested = drafter.config.get("dflash_config")
    if isinstance(nested, dict):
        merged.update(nested)
    return merged


def check_dflash_args(args: ServerArgs, drafter: Checkpoint | None, release: ReleaseFacts) -> SpeculativeSettings:
    """The server-args checks of that release, in its order; `drafter` is the draft model's checkpoint when it could be read."""
    if args.enable_dp_attention:
        if release.rule("dflash_dp_attention") is not None:  # 0.5.11: refused outright
            raise _refuse(release, "dflash_dp_attention")
        if not getattr(args, "enable_dp_lm_head", False):  # 0.5.23: allowed with the DP LM head
            raise _refuse(release, "dflash_dp_attention_needs_dp_lm_head")
    if args.pp_size != 1:
        raise _refuse(release, "dflash_pp")
    if not args.speculative_draft_model_path:
        raise _refuse(release, "dflash_draft_model_path")
    warnings: list[str] = []
    num_draft, dflash_block = args.speculative_num_draft_tokens, args.speculative_dflash_block_size
    if dflash_block is not None and dflash_block <= 0:
        raise _refuse(release, "dflash_block_size_positive", speculative_dflash_block_size=dflash_block)
    if num_draft is not None and dflash_block is not None and num_draft != dflash_block:
        raise _refuse(
            release,
            "dflash_block_size_mismatch",
            speculative_num_draft_tokens=num_draft,
            speculative_dflash_block_size=dflash_block,
        )
    block_size = num_draft if num_draft is not None else dflash_block
    if block_size is None:
        configured = drafter_dflash_config(drafter).get("block_size") if drafter is not None else None
        if configured is not None:
            block_size = int(configured)
        else:
            block_size = DFLASH_DEFAULT_BLOCK_SIZE
            warnings.append(
                "DFLASH block_size is not set (neither --speculative-num-draft-tokens nor the draft model config); "
                f"defaulting to {DFLASH_DEFAULT_BLOCK_SIZE}."
            )
    for name in ("speculative_num_steps", "speculative_eagle_topk"):
        value = getattr(args, name)
        if value is not None and value != 1:
            warnings.append(f"DFLASH only supports {name} == 1; overriding {name}={value} to 1.")
    window = args.speculative_draft_window_size
    if window is not None and window < block_size:
        raise _refuse(
            release,
            "dflash_window_below_block",
            window_size=window,
            speculative_draft_window_size=window,
            draft_tokens=block_size,
        )
    backend = args.speculative_draft_attention_backend
    if backend is not None and backend not in DRAFT_ATTENTION_BACKENDS:
        warnings.append(f"DFLASH draft attention backend {backend!r} is not supported; falling back to flashinfer.")
    if not args.disable_overlap_schedule:
        warnings.append("Overlap scheduler is disabled when using DFLASH speculative decoding (spec v1).")
    max_running = args.max_running_requests
    if max_running is None:
        max_running = DFLASH_DEFAULT_MAX_RUNNING_REQUESTS
        warnings.append(
            f"max_running_requests is unset; defaulting to {DFLASH_DEFAULT_MAX_RUNNING_REQUESTS} for DFLASH speculative decoding."
        )
    return SpeculativeSettings(
        algorithm="DFLASH", block_size=block_size, max_running_requests=max_running, warnings=warnings
    )


def check_dflash_drafter(drafter: Checkpoint, target: Checkpoint, release: ReleaseFacts) -> None:
    """Load-time checks of the draft model against the target; LaunchError as the worker fails."""
    if drafter.architecture not in release.dflash_architectures:
        raise LaunchError(
            scheduler_traceback(
                [
                    (
                        f"{SGLANG_SRC}/srt/speculative/dflash_worker.py",
                        97,
                        "__init__",
                        "self.draft_model_runner = ModelRunner(",
                    ),
                    (f"{SGLANG_SRC}/srt/speculative/dflash_worker.py", 141, "_check_draft_model", "raise ValueError("),
                ],
                f"ValueError: DFLASH requires a DFlash draft model (architectures: {list(release.dflash_architectures)}), "
                f"but {drafter.path} has architectures {drafter.config.get('architectures')}.",
            )
        )
    if "num_hidden_layers" not in drafter.config:
        raise LaunchError(
            scheduler_traceback(
                [(f"{SGLANG_SRC}/srt/models/dflash.py", 318, "__init__", "num_layers = config.num_hidden_layers")],
                "AttributeError: 'PretrainedConfig' object has no attribute 'num_hidden_layers'",
            )
        )
    layers = drafter_dflash_config(drafter).get("target_layer_ids")
    n = target.num_hidden_layers
    if layers is not None:
        bad = [x for x in layers if not isinstance(x, int) or not 0 <= x < n]
        if not layers or bad:
            raise LaunchError(
                scheduler_traceback(
                    [
                        (f"{SGLANG_SRC}/srt/models/dflash.py", 92, "build_target_layer_ids", "raise ValueError("),
                    ],
                    f"ValueError: DFLASH target_layer_ids must be non-empty integers in [0, {n}) for the target model "
                    f"({n} layers), but got {layers}.",
                )
            )
