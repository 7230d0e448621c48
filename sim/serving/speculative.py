"""Speculative launch rules (DFLASH, the EAGLE family, NGRAM), with the messages of the host's SGLang release
(read from its wheel).

DFLASH. Server-args time (before anything loads): a draft model path is required, pp_size
must be 1, DP attention is refused (0.5.11) or needs --enable-dp-lm-head (0.5.23),
the block size comes from
--speculative-num-draft-tokens / --speculative-dflash-block-size (both set and
different: error), else the drafter's config block_size, else 16 with a warning;
speculative_num_steps and speculative_eagle_topk are forced to 1 (warning when set
otherwise); max_running_requests defaults to 48. Every warning is the release's own
text (sglang_releases: launch_warnings), in the order SGLang logs them.
Load time: the draft model's config must name an architecture the release serves
under DFLASH (0.5.23: DFlashDraftModel, DFlash2DraftModel and others) and its
target_layer_ids must lie within the target's layers.

The EAGLE family (EAGLE, EAGLE3, NEXTN = EAGLE, STANDALONE), as SGLang 0.5.23's
`_handle_eagle_family` (sglang/srt/arg_groups/speculative_hook.py; older releases:
ServerArgs._handle_speculative_decoding) applies it, in its order: STANDALONE refuses
DP attention; max_running_requests defaults to 48 with its warning; a target whose
architecture is in the release's MTP list and has no --speculative-draft-model-path
is its own draft (its NextN layers), one with a path gets "DeepSeek MTP does not
require ..."; without --speculative-num-steps the three settings come from
`_auto_choose_speculative_params` (an AssertionError when topk or draft tokens were
given alone); trtllm_mha refuses topk > 1; topk 1 forces draft tokens = steps + 1
with its warning; topk > 1 with page_size > 1 needs one of the backends the rule names.
NGRAM, as `_handle_ngram`: the device rule, max_running_requests 48, topk =
--speculative-ngram-max-bfs-breadth, draft tokens 12 with its warning, steps =
draft_tokens // topk (0.5.23; older releases leave it unset), the external-corpus
rules, the mixed-chunk warning, the topk/page-size rule, and no DP attention.
Every refusal's message is the release's own (sglang_releases: launch_rules), every
table (automatic settings, NGRAM defaults, MTP targets, draft classes) too.
Load time (check_eagle_drafter, once the draft has loaded and the KV pools are sized):
EAGLE3 needs a draft class the release has under EAGLE3, EAGLE one under EAGLE or
NEXTN; the draft's (target_)hidden_size must be the target's (EAGLE3's fc takes the
target's hidden states); STANDALONE needs the target's vocab_size. A smaller
draft_vocab_size is fine for EAGLE3 (it maps with d2t). A target without MTP and
without a draft path is loaded again as its own draft (SGLang's draft ModelConfig falls
back to the target's path): it counts in memory (a large target runs out there) and,
when it fits, fails the class check. That last failure is the simulator's choice:
SGLang has no check of its own there, and the AttributeError it shows is where a draft
class without the EAGLE hooks fails (the emulation does not look at which hooks a
class has).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import Any

from ...sglang_releases.facts import LATEST, ReleaseFacts, for_version, version_tuple
from .checkpoint import Checkpoint
from .errors import SGLANG_SRC, LaunchError, scheduler_traceback, server_args_traceback
from .server_args import ServerArgs
from .spec_settings import canonical_algorithm

DFLASH_DEFAULT_BLOCK_SIZE = 16
DFLASH_DEFAULT_MAX_RUNNING_REQUESTS = 48
# 0.5.23's DRAFT_ATTENTION_BACKEND_CHOICES (arg_groups/choices.py); 0.5.11's DFlash worker takes fewer
# (speculative/dflash_worker.py: `supported_draft_backends`).
DRAFT_ATTENTION_BACKENDS = ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu")
DRAFT_ATTENTION_BACKENDS_0_5_11 = ("flashinfer", "fa3", "fa4", "triton")
# type(current_platform).__name__ on an NVIDIA host (platforms/cuda.py), as 0.5.23's fallback warning names it.
CUDA_PLATFORM = "CudaSRTPlatform"
# What an unsupported draft backend falls back to on a Hopper GPU (the simulated ones): FlashInfer (fa4 on SM100).
DRAFT_FALLBACK_BACKEND = "flashinfer"


@dataclass
class SpeculativeSettings:
    """What SGLang's start-up resolved for a speculative launch."""

    algorithm: str  # as SGLang resolved it (NEXTN -> EAGLE)
    block_size: int  # DFLASH's block; the others: num_draft_tokens (what a verify step checks per request)
    max_running_requests: int
    warnings: list[str] = field(default_factory=list)
    num_steps: int | None = 1
    topk: int | None = 1
    num_draft_tokens: int | None = None  # None: the block size
    draft_model_path: str | None = None  # as resolved: an MTP target's own path when it is its own draft
    mtp: bool = False  # the draft is the target's own NextN (MTP) layers

    def __post_init__(self) -> None:
        if self.num_draft_tokens is None:
            self.num_draft_tokens = self.block_size


def _value_error(message: str) -> LaunchError:
    return LaunchError(server_args_traceback(f"ValueError: {message}", check="_handle_speculative_decoding", line=2811))


def _refuse(release: ReleaseFacts, rule_id: str, **values: object) -> LaunchError:
    """The release's own message for a rule, its `{expression}` fields filled from `values` by their last name."""
    rule = release.rule(rule_id)
    if rule is None:
        raise KeyError(f"SGLang {release.version} has no speculative rule {rule_id!r}")
    message = re.sub(
        r"\{([^{}]+)\}", lambda m: str(values.get(m.group(1).rsplit(".", 1)[-1], m.group(0))), rule.message
    )
    return _value_error(message)


def drafter_dflash_config(drafter: Checkpoint) -> dict[str, Any]:
    """Fields a DFlash drafter config carries; the nested dflash_config wins over the top level."""
    merged: dict[str, Any] = {
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

    def warn(warning_id: str, *values: object) -> None:
        """The release's own text (sglang_releases: launch_warnings), formatted as its logger formats it."""
        found = release.warning(warning_id)
        if found is not None:
            warnings.append(found.message % values)

    for name, warning_id in (
        ("speculative_num_steps", "dflash_num_steps_override"),
        ("speculative_eagle_topk", "dflash_topk_override"),
    ):
        value = getattr(args, name)
        if value is not None and value != 1:
            warn(warning_id, value)
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
        # An unreadable draft config also logs "Failed to infer DFLASH block_size ... Error: <the exception>" first;
        # the simulator has no transformers exception text to put there, and the draft load fails later anyway.
        configured = drafter_dflash_config(drafter).get("block_size") if drafter is not None else None
        if configured is not None:
            block_size = int(configured)
        else:
            block_size = DFLASH_DEFAULT_BLOCK_SIZE
            warn("dflash_block_size_default", DFLASH_DEFAULT_BLOCK_SIZE)
    window = args.speculative_draft_window_size
    if window is not None and window < block_size:
        raise _refuse(
            release,
            "dflash_window_below_block",
            window_size=window,
            speculative_draft_window_size=window,
            draft_tokens=block_size,
        )
    warnings += _draft_backend_warnings(args, drafter, release)
    max_running = args.max_running_requests
    if max_running is None:
        max_running = DFLASH_DEFAULT_MAX_RUNNING_REQUESTS
        warn("dflash_max_running_requests")
    warn("dflash_overlap_disabled")  # 0.5.11 turns the overlap scheduler off and says so, whatever was asked
    if getattr(args, "enable_mixed_chunk", False):
        warn("dflash_mixed_chunk_disabled")
    return SpeculativeSettings(
        algorithm="DFLASH", block_size=block_size, max_running_requests=max_running, warnings=warnings
    )


def _draft_backend_warnings(args: ServerArgs, drafter: Checkpoint | None, release: ReleaseFacts) -> list[str]:
    """The draft attention backend's fallback warning: --speculative-draft-attention-backend, else the target's
    --attention-backend (unset: SGLang's own pick, taken as one the draft supports). 0.5.23 settles it at start-up
    (`_resolve_dflash_draft_attention_backend`); 0.5.11's DFlash worker does when it starts (logged here, with the
    start-up warnings, in its words: speculative/dflash_worker.py)."""
    backend = args.speculative_draft_attention_backend or args.attention_backend
    if backend is None:
        return []
    fallback = release.warning("dflash_draft_backend_fallback")
    if fallback is None:  # 0.5.11
        if backend == "trtllm_mha":
            return [
                "DFLASH draft worker does not support 'trtllm_mha' because the draft path requires non-causal "
                f"attention. Falling back to '{DRAFT_FALLBACK_BACKEND}'."
            ]
        if backend not in DRAFT_ATTENTION_BACKENDS_0_5_11:
            return [
                f"DFLASH draft worker only supports attention_backend in {DRAFT_ATTENTION_BACKENDS_0_5_11} for now, "
                f"but got {backend!r}. Falling back to '{DRAFT_FALLBACK_BACKEND}'."
            ]
        return []
    if backend not in DRAFT_ATTENTION_BACKENDS:
        return [fallback.message % (backend, CUDA_PLATFORM, DRAFT_FALLBACK_BACKEND)]
    trtllm = release.warning("dflash_draft_trtllm_mha_fallback")
    if backend == "trtllm_mha" and trtllm is not None:
        # Allowed only for a draft whose layers all use sliding attention, or one that says it is causal.
        config = drafter.text_config if drafter is not None else {}
        top = drafter.config if drafter is not None else {}
        layer_types = config.get("layer_types", top.get("layer_types"))
        layers = config.get("num_hidden_layers")
        all_sliding = (
            isinstance(layer_types, list) and len(layer_types) == layers and set(layer_types) == {"sliding_attention"}
        )
        if not (all_sliding or config.get("is_causal") is True):
            return [trtllm.message % (layer_types, config.get("is_causal"), DRAFT_FALLBACK_BACKEND)]
    return []


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


# --------------------------------------------------------------------------- the EAGLE family and NGRAM

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")
MAX_RUNNING_REQUESTS_WARNING = (
    "Max running requests is reset to {n} for speculative decoding. You can override this by explicitly setting "
    "--max-running-requests."
)
# Targets whose MTP layers SGLang loads although a draft path is given (it warns for the others of its list).
_MTP_PATH_SILENT = ("MistralLarge3ForCausalLM", "PixtralForConditionalGeneration")


def _is_new_hook(release: ReleaseFacts) -> bool:
    """0.5.23 moved the start-up rules into arg_groups/speculative_hook.py, with some messages reworded."""
    return release.version_tuple >= version_tuple("0.5.23")


def _rule_set(release: ReleaseFacts, rule_id: str) -> tuple[str, ...] | None:
    """The string tuple/list a rule's condition tests membership in (e.g. the attention backends), or None."""
    rule = release.rule(rule_id)
    if rule is None:
        return None
    found = re.search(r"not in (\(.*?\)|\[.*?\])", rule.condition)
    if found is None:
        return None
    try:
        values = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return None
    return tuple(str(v) for v in values)


def _attention_backends(args: ServerArgs) -> list[str]:
    return [
        b
        for b in (
            args.attention_backend,
            getattr(args, "decode_attention_backend", None),
            getattr(args, "prefill_attention_backend", None),
        )
        if b
    ]


def _max_running(args: ServerArgs, algorithm: str, release: ReleaseFacts, warnings: list[str]) -> int | None:
    if args.max_running_requests is not None:
        return args.max_running_requests
    default = release.max_running_requests_default(algorithm)
    if default is None:
        default = for_version(LATEST).max_running_requests_default(algorithm) or 48
    warnings.append(MAX_RUNNING_REQUESTS_WARNING.format(n=default))
    return default


def _type_error(message: str) -> LaunchError:
    return LaunchError(server_args_traceback(f"TypeError: {message}", check="_handle_speculative_decoding", line=2811))


def check_eagle_args(args: ServerArgs, target: Checkpoint, release: ReleaseFacts) -> SpeculativeSettings:
    """EAGLE / EAGLE3 / NEXTN / STANDALONE start-up, as the release's _handle_eagle_family applies it."""
    assert args.speculative_algorithm is not None
    algorithm = canonical_algorithm(args.speculative_algorithm, release)
    warnings: list[str] = []
    if algorithm == "STANDALONE" and args.enable_dp_attention:
        raise _refuse(release, "standalone_dp_attention")
    max_running = _max_running(args, algorithm, release, warnings)
    if _is_new_hook(release):
        if args.disable_overlap_schedule:
            warnings.append(
                "Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative decoding."
            )
    elif args.disable_overlap_schedule:
        warnings.append(
            "Spec v1 is used for eagle/eagle3/standalone speculative decoding because overlap schedule is disabled."
        )
    else:
        warnings.append("Spec v2 is enabled by default for eagle/eagle3/standalone speculative decoding.")
    arch = target.architecture
    draft_path, mtp = args.speculative_draft_model_path, False
    if arch in release.mtp_in_target_architectures:
        if draft_path is None:
            draft_path, mtp = args.model_path, True
        elif arch not in _MTP_PATH_SILENT:
            warnings.append("DeepSeek MTP does not require setting speculative_draft_model_path.")
    steps, topk, draft = args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens
    if steps is None:
        if topk is not None or draft is not None:
            raise LaunchError(
                server_args_traceback("AssertionError", check="_handle_speculative_decoding", line=2811).replace(
                    "raise ValueError(", "assert ("
                )
            )
        facts = release if release.speculative_auto_params.default is not None else for_version(LATEST)
        steps, topk, draft = facts.auto_params(algorithm, arch)
    if topk is None:  # SGLang compares it with 1 before anything sets it
        raise _type_error("'>' not supported between instances of 'NoneType' and 'int'")
    if topk > 1 and "trtllm_mha" in _attention_backends(args) and release.rule("trtllm_mha_topk") is not None:
        raise _refuse(release, "trtllm_mha_topk")
    if topk == 1 and draft != steps + 1:
        warnings.append(
            "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
        )
        draft = steps + 1
    page_size = getattr(args, "page_size", None) or 1
    backend = args.attention_backend or "flashinfer"  # unset: a backend SGLang picks, taken as one the rule allows
    allowed = _rule_set(release, "eagle_topk_page_size")
    if topk > 1 and page_size > 1 and allowed is not None and backend not in allowed:
        raise _refuse(release, "eagle_topk_page_size", attention_backend=repr(backend))
    if draft is None:  # topk > 1 and no --speculative-num-draft-tokens: nothing sets it
        raise _type_error("unsupported operand type(s) for -: 'NoneType' and 'int'")
    return SpeculativeSettings(
        algorithm=algorithm,
        block_size=draft,
        max_running_requests=max_running if max_running is not None else 48,
        warnings=warnings,
        num_steps=steps,
        topk=topk,
        num_draft_tokens=draft,
        draft_model_path=draft_path,
        mtp=mtp,
    )


def check_ngram_args(args: ServerArgs, release: ReleaseFacts) -> SpeculativeSettings:
    """NGRAM start-up, as the release's _handle_ngram applies it (no draft model: any path is ignored)."""
    warnings: list[str] = []
    device = getattr(args, "device", None) or "cuda"
    rule = release.rule("ngram_device")
    if rule is not None:
        allowed = _rule_set(release, "ngram_device") or re.findall(r"'([a-z]+)'", rule.condition.split(" in ")[-1])
        refused = not device.startswith("cuda") if "startswith" in rule.condition else device not in allowed
        if refused:
            raise _refuse(release, "ngram_device")
    max_running = _max_running(args, "NGRAM", release, warnings)
    defaults = release.ngram_defaults if release.ngram_defaults.num_draft_tokens else for_version(LATEST).ngram_defaults
    topk = getattr(args, "speculative_ngram_max_bfs_breadth", None) or defaults.eagle_topk or 1
    draft = args.speculative_num_draft_tokens
    if draft is None:
        draft = defaults.num_draft_tokens or 12
        warnings.append(
            f"speculative_num_draft_tokens is set to {draft} by default for ngram speculative decoding. "
            "You can override this by explicitly setting --speculative-num-draft-tokens."
        )
    steps = args.speculative_num_steps
    if steps is None and release.ngram_defaults.num_steps_source:
        steps = draft // topk
    if getattr(args, "speculative_ngram_external_corpus_path", None) is not None:
        budget = getattr(args, "speculative_ngram_external_sam_budget", 1)
        if budget is not None and budget <= 0:
            raise _refuse(release, "ngram_external_sam_budget_positive")
        corpus_max = getattr(args, "speculative_ngram_external_corpus_max_tokens", 1)
        if corpus_max is not None and corpus_max <= 0:
            raise _refuse(release, "ngram_external_corpus_max_tokens_positive")
        if budget is not None and budget > draft - 1:
            raise _refuse(release, "ngram_external_sam_budget_max", **{"speculative_num_draft_tokens - 1": draft - 1})
    warnings.append(
        "The mixed chunked prefill are disabled because of using ngram speculative decoding."
        if _is_new_hook(release)
        else "The overlap scheduler and mixed chunked prefill are disabled because of using ngram speculative decoding."
    )
    page_size = getattr(args, "page_size", None) or 1
    backend = args.attention_backend or "flashinfer"
    if topk > 1 and page_size > 1 and backend != "flashinfer":
        raise _refuse(release, "ngram_topk_page_size", speculative_eagle_topk=topk, page_size=page_size)
    if args.enable_dp_attention:
        raise _refuse(release, "ngram_dp_attention")
    return SpeculativeSettings(
        algorithm="NGRAM",
        block_size=draft,
        max_running_requests=max_running if max_running is not None else 48,
        warnings=warnings,
        num_steps=steps,
        topk=topk,
        num_draft_tokens=draft,
    )


def mtp_architecture(architecture: str, release: ReleaseFacts) -> str | None:
    """The NextN / MTP class SGLang's ModelConfig loads a draft checkpoint of this architecture as
    (DeepseekV3ForCausalLM -> DeepseekV3ForCausalLMNextN, InklingForConditionalGeneration ->
    InklingForConditionalGenerationMTP), where the release has one; None: it loads the checkpoint's own class."""
    nextn_classes = release.draft_architectures.get("NEXTN", ())
    candidates = (f"{architecture}NextN", f"{architecture.replace('V32', 'V3')}NextN", f"{architecture}MTP")
    return next((c for c in candidates if c in nextn_classes), None)


def mtp_drafter(target: Checkpoint, release: ReleaseFacts) -> Checkpoint:
    """The draft an MTP checkpoint is as a draft model: its NextN layers, under the class SGLang maps its class to
    (DeepseekV3ForCausalLM -> DeepseekV3ForCausalLMNextN), weighing their share of the checkpoint."""
    arch = target.architecture
    draft_arch = mtp_architecture(arch, release) or arch
    text = target.text_config
    nextn = max(int(text.get("num_nextn_predict_layers") or 0), 1)
    layers = max(target.num_hidden_layers, 1)
    config = {**target.config, "architectures": [draft_arch], "num_hidden_layers": nextn}
    return replace(target, config=config, shard_count=0, weight_bytes=target.weight_bytes * nextn // (layers + nextn))


def _eagle_worker_error(source: str, exception: str, line: int = 360) -> LaunchError:
    return LaunchError(
        scheduler_traceback(
            [
                (
                    f"{SGLANG_SRC}/srt/managers/scheduler.py",
                    1530,
                    "init_model_worker",
                    "self.draft_worker.alloc_memory_pool(",
                ),
                (f"{SGLANG_SRC}/srt/speculative/eagle_worker_v2.py", 257, "alloc_memory_pool", "self.init_lm_head()"),
                (f"{SGLANG_SRC}/srt/speculative/eagle_worker_v2.py", line, "init_lm_head", source),
            ],
            exception,
        )
    )


def check_eagle_drafter(
    spec: SpeculativeSettings, drafter: Checkpoint, target: Checkpoint, release: ReleaseFacts
) -> None:
    """Load-time checks of an EAGLE-family draft model against the target; LaunchError as the worker fails."""
    arch = drafter.architecture
    classes = release.draft_architectures
    if spec.algorithm == "EAGLE3" and arch not in classes.get("EAGLE3", ()):
        raise _eagle_worker_error(
            "self.draft_runner.model.set_embed(embed)",
            f"AttributeError: '{arch}' object has no attribute 'set_embed'",
            363,
        )
    if spec.algorithm == "EAGLE" and arch not in (*classes.get("EAGLE", ()), *classes.get("NEXTN", ())):
        raise _eagle_worker_error(
            "self.draft_runner.model.set_embed_and_head(embed, head)",
            f"AttributeError: '{arch}' object has no attribute 'set_embed_and_head'",
            378,
        )
    target_hidden = target.text_config.get("hidden_size")
    if spec.algorithm == "STANDALONE":
        target_vocab, draft_vocab = target.text_config.get("vocab_size"), drafter.text_config.get("vocab_size")
        if target_vocab != draft_vocab:
            raise LaunchError(
                scheduler_traceback(
                    [
                        (
                            f"{SGLANG_SRC}/srt/speculative/standalone_worker_v2.py",
                            168,
                            "__init__",
                            "self._validate_vocab_compatibility(",
                        ),
                        (
                            f"{SGLANG_SRC}/srt/speculative/standalone_worker_v2.py",
                            194,
                            "_validate_vocab_compatibility",
                            "raise ValueError(",
                        ),
                    ],
                    "ValueError: STANDALONE speculative decoding requires the draft model to share the same vocabulary "
                    f"as the target model, but got target vocab_size={target_vocab} and draft vocab_size={draft_vocab}. "
                    "Use a draft model with a matching vocabulary, or a speculative algorithm that supports "
                    "heterogeneous vocabularies.",
                )
            )
        return
    if spec.mtp or target_hidden is None:
        return
    if drafter.config.get("hidden_size") is None:
        return
    draft_hidden, target_hidden = int(drafter.config["hidden_size"]), int(target_hidden)
    takes = int(drafter.config.get("target_hidden_size") or draft_hidden)
    if takes == target_hidden:
        return
    if spec.algorithm == "EAGLE3":  # fc takes the concatenated states of the target's aux layers
        eagle_config = drafter.config.get("eagle_config") or {}
        aux = len(eagle_config.get("eagle_aux_hidden_state_layer_ids") or [0, 0, 0])
        model_file, given, wanted = "llama_eagle3.py", aux * target_hidden, aux * takes
    else:  # fc takes the token's embedding beside the target's last hidden state
        model_file, given, wanted = "llama_eagle.py", draft_hidden + target_hidden, 2 * draft_hidden
    raise LaunchError(
        scheduler_traceback(
            [
                (
                    f"{SGLANG_SRC}/srt/speculative/eagle_worker_v2.py",
                    288,
                    "init_cuda_graphs",
                    "self._capture_cuda_graphs()",
                ),
                (
                    f"{SGLANG_SRC}/srt/speculative/eagle_draft_extend_cuda_graph_runner.py",
                    231,
                    "capture",
                    "self.capture_one_batch_size(bs, forward)",
                ),
                (f"{SGLANG_SRC}/srt/models/{model_file}", 247, "forward", "hidden_states = self.fc(hidden_states)"),
            ],
            f"RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x{given} and {wanted}x{draft_hidden})",
        )
    )
