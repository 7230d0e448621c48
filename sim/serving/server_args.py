"""`python -m sglang.launch_server` arguments, as the host's SGLang release parses them.

The parser is built from that release's own flags (`specops.sglang_releases`, read
from its wheel): the same option strings, types, choices and defaults, and
argparse's own prefix matching, so an abbreviation such as `--cuda-graph-max-bs` is
"ambiguous" on 0.5.23 (which has only the -decode and -prefill spellings) exactly as
it is there, and a flag a release lacks is "unrecognized arguments" (exit 2).
The parsed values are then named as the simulator's ServerArgs names them: older
releases store --tp-size in `tensor_parallel_size`, 0.5.23 turns the deprecated
--enable-dp-attention into `attn_dp_size`, and so on.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable
from typing import Any, NoReturn

from pydantic import BaseModel, ConfigDict, Field

from ...sglang_releases.facts import LaunchFlag, ReleaseFacts
from .errors import LaunchError

# SGLang's prepare_server_args builds `argparse.ArgumentParser(prog="sglang serve")`.
PROG = "sglang serve"

# Older releases store parallel sizes under their long names.
_DEST_RENAMES = {
    "tensor_parallel_size": "tp_size",
    "pipeline_parallel_size": "pp_size",
    "data_parallel_size": "dp_size",
    "expert_parallel_size": "ep_size",
}

# argparse `type=` callables by the name the source gives them; SGLang's own parsers
# of structured values (json_list_type, nullable_str, ...) take the text as it is.
_TYPES: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "str": str, "human_readable_int": int}


class _DeprecatedStoreTrue(argparse.Action):
    """SGLang's DeprecatedStoreTrueAction: stores True and warns with the replacement."""

    def __init__(self, option_strings: list[str], dest: str, replacement: str | None = None, **kwargs: Any) -> None:
        self.replacement = replacement
        super().__init__(option_strings, dest, nargs=0, const=True, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, True)
        instead = f" Use '{self.replacement}' instead." if self.replacement else ""
        _warnings(namespace).append(
            f"'{option_string}' is deprecated and will be removed in a future release.{instead}"
        )


class _DeprecatedNoop(argparse.Action):
    """SGLang's DeprecatedAction (0.5.1x): takes no value, only warns."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        kwargs.pop("type", None)
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        _warnings(namespace).append(
            f"The command line argument '{option_string}' is deprecated and will be removed in future versions."
        )


def _warnings(namespace: argparse.Namespace) -> list[str]:
    if not hasattr(namespace, "deprecation_warnings"):
        namespace.deprecation_warnings = []
    warnings: list[str] = namespace.deprecation_warnings
    return warnings


def _argparse_kwargs(flag: LaunchFlag) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"dest": flag.dest, "default": flag.default}
    if flag.kind in ("store_true", "store_false", "append"):
        return {**kwargs, "action": flag.kind}
    if flag.kind == "store_const":
        return {**kwargs, "action": "store_const", "const": True}
    if flag.kind == "deprecated_store_true":
        return {**kwargs, "action": _DeprecatedStoreTrue, "replacement": flag.replacement}
    if flag.action == "DeprecatedAction":
        return {**kwargs, "action": _DeprecatedNoop}
    if flag.action == "argparse.BooleanOptionalAction":
        return {**kwargs, "action": argparse.BooleanOptionalAction}
    kwargs["type"] = _TYPES.get(flag.type or "str", str)
    if flag.choices is not None and not flag.choices_dynamic:
        kwargs["choices"] = list(flag.choices)
    if flag.nargs is not None:
        kwargs["nargs"] = flag.nargs
    elif flag.action == "LoRAPathAction":
        kwargs["nargs"] = "*"
    if flag.required:
        kwargs["required"] = True
    return kwargs


class _Parser(argparse.ArgumentParser):
    """argparse, but errors come back as LaunchError instead of exiting the caller."""

    def error(self, message: str) -> NoReturn:
        buf = io.StringIO()
        self.print_usage(buf)
        raise LaunchError(f"{buf.getvalue()}{self.prog}: error: {message}\n", exit_code=2)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise LaunchError(message or "", exit_code=status)


def build_parser(release: ReleaseFacts) -> argparse.ArgumentParser:
    """The release's launch_server parser (prefix matching on, as argparse's default is)."""
    parser = _Parser(prog=PROG)
    for flag in release.launch_flags:
        parser.add_argument(*flag.names, **_argparse_kwargs(flag))
    return parser


def help_text(release: ReleaseFacts) -> str:
    return build_parser(release).format_help()


class ServerArgs(BaseModel):
    """The parsed arguments, before launch-time defaults are filled in."""

    model_config = ConfigDict(extra="allow")

    model_path: str
    tokenizer_path: str | None = None
    host: str = "127.0.0.1"
    port: int = 30000
    tp_size: int = 1
    pp_size: int = 1
    dp_size: int = 1
    ep_size: int = 1
    enable_dp_attention: bool = False
    enable_dp_lm_head: bool = False
    disable_cuda_graph: bool = False
    disable_cuda_graph_padding: bool = False
    cuda_graph_max_bs: int | None = None
    mem_fraction_static: float | None = None
    max_running_requests: int | None = None
    max_total_tokens: int | None = None
    context_length: int | None = None
    chunked_prefill_size: int | None = None
    served_model_name: str | None = None
    enable_metrics: bool = False
    decode_log_interval: int = 40
    watchdog_timeout: float = 300
    random_seed: int | None = None
    log_level: str = "info"
    stream_interval: int = 1
    incremental_streaming_output: bool = False
    skip_server_warmup: bool = False
    disable_overlap_schedule: bool = False
    api_key: str | None = None
    speculative_algorithm: str | None = None
    speculative_draft_model_path: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    speculative_dflash_block_size: int | None = None
    speculative_draft_window_size: int | None = None
    speculative_dflash_draft_window_size: int | None = None
    speculative_draft_attention_backend: str | None = None
    attention_backend: str | None = None
    tool_call_parser: str | None = None
    reasoning_parser: str | None = None
    kv_cache_dtype: str = "auto"
    trust_remote_code: bool = False
    deprecation_warnings: list[str] = Field(default_factory=list, exclude=True)

    @property
    def cuda_graphs(self) -> bool:
        """Decode CUDA graphs: off with --disable-cuda-graph, or 0.5.23's --cuda-graph-backend-decode disabled
        (which leaves disable_cuda_graph false, as SGLang's record does)."""
        return not self.disable_cuda_graph and getattr(self, "cuda_graph_backend_decode", None) != "disabled"

    @property
    def gpus(self) -> int:
        return self.tp_size * self.pp_size


def parse_server_args(argv: list[str], release: ReleaseFacts) -> ServerArgs:
    """Parse as that SGLang release would; raises LaunchError (exit 2) where its argparse exits."""
    namespace = build_parser(release).parse_args(argv)
    values = {_DEST_RENAMES.get(k, k): v for k, v in vars(namespace).items()}
    deprecations = values.pop("deprecation_warnings", [])
    # 0.5.23 names the CUDA-graph cap per phase; decode's is the one that bounds a decode batch.
    if "cuda_graph_max_bs_decode" in values:
        values["cuda_graph_max_bs"] = values["cuda_graph_max_bs_decode"]
    # 0.5.23: DP attention is `--attn-dp-size N`; the deprecated `--dp-size N --enable-dp-attention`
    # is rewritten to it (attn_dp_size=N, dp_size=1). The simulator models it as (dp_size, enable_dp_attention).
    attn_dp = values.get("attn_dp_size") or 1
    if attn_dp > 1:
        values["enable_dp_attention"], values["dp_size"] = True, attn_dp
    if values.get("speculative_draft_window_size") is None and values.get("speculative_dflash_draft_window_size"):
        values["speculative_draft_window_size"] = values["speculative_dflash_draft_window_size"]
    if isinstance(values.get("speculative_algorithm"), str):
        values["speculative_algorithm"] = values["speculative_algorithm"].upper()
    return ServerArgs.model_validate({**values, "deprecation_warnings": deprecations})


ArgCheck = Callable[[ServerArgs], None]


# 0.5.23's CudaGraphConfig phases (model_executor/cuda_graph_config.py PhaseConfig), in its field order.
_PHASE_KEYS = (
    "backend",
    "max_bs",
    "bs",
    "tc_compiler",
    "max_context_size",
    "full_prefill_max_req",
    "full_prefill_prefix_chunk_tokens",
    "max_seq_len",
)


def decode_cuda_graph_batch_sizes(max_bs: int, *, speculative: bool, no_padding: bool) -> list[int]:
    """0.5.23's `generate_decode_cuda_graph_batch_sizes` (arg_groups/cuda_graph_hook.py)."""
    if no_padding:
        sizes = list(range(1, max_bs + 1))
    elif not speculative:
        sizes = [1, 2, 4, 8, 12, *range(16, 257, 8), *range(272, 512, 16), *range(512, max_bs + 1, 32)]
    else:
        sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 65, 4), *range(72, 257, 8), *range(272, max_bs + 1, 16)]
    sizes = [bs for bs in sizes if bs <= max_bs]
    return sizes if max_bs in sizes else [*sizes, max_bs]


def prefill_cuda_graph_batch_sizes(max_bs: int) -> list[int]:
    """0.5.23's `generate_prefill_cuda_graph_batch_sizes`: captured token counts."""
    sizes = [
        *range(4, 33, 4),
        *range(48, 257, 16),
        *range(288, 513, 32),
        *range(576, 1025, 64),
        *range(1280, 4097, 256),
        *range(4608, max_bs + 1, 512),
    ]
    return [s for s in sizes if s <= max_bs]


def reported_server_args(values: dict[str, Any], release: ReleaseFacts) -> dict[str, Any]:
    """The server args as the release's /server_info reports them, from the simulator's own naming.

    Up to 0.5.1x the record is reported as parsed and filled in. 0.5.23 reports its resolved record
    (`ServerArgs.resolved_dict`): DP attention as `attn_dp_size` N with `dp_size` 1 (the deprecated
    `--dp-size N --enable-dp-attention` is rewritten so) and `enable_dp_attention` true while N > 1; no
    `cuda_graph_max_bs` field: `cuda_graph_max_bs_decode` is what was given (null if nothing was) and the cap in
    force is `cuda_graph_config.decode.max_bs`; `disable_cuda_graph` is the deprecated flag's own value, which
    `--cuda-graph-backend-*` leave false (the backends are in `cuda_graph_config`).
    """
    info = dict(values)
    if release.has_flag("--attn-dp-size"):
        width = int(info.get("dp_size") or 1) if info.get("enable_dp_attention") else 1
        if info.get("enable_dp_attention"):
            info["dp_size"] = 1
        info["attn_dp_size"] = width
        info["enable_dp_attention"] = width > 1
    if release.has_flag("--cuda-graph-max-bs-decode") and not release.has_flag("--cuda-graph-max-bs"):
        info["cuda_graph_config"] = _cuda_graph_config(info)
        info.pop("cuda_graph_max_bs", None)
    return info


def _cuda_graph_config(info: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """0.5.23's resolved per-phase CUDA-graph settings (`parse_cuda_graph_config`, then the memory defaults).

    Prefill: breakable by default on CUDA, off under pipeline parallelism; SGLang's per-model rules (KDA,
    multimodal, DeepSeek-V4, ...) that turn it off too are not modelled, nor MLA's 8192 cap on its max_bs."""
    deprecated_off = bool(info.get("disable_cuda_graph"))

    def backend(phase: str, default: str) -> str:
        given = info.get(f"cuda_graph_backend_{phase}")
        if given is not None:
            return str(given)
        return "disabled" if deprecated_off or info.get(f"disable_{phase}_cuda_graph") else default

    decode_max_bs = info.get("cuda_graph_max_bs") or info.get("cuda_graph_max_bs_decode")
    decode: dict[str, Any] = dict.fromkeys(_PHASE_KEYS)
    decode.update(backend=backend("decode", "full"), max_bs=decode_max_bs, tc_compiler="eager")
    if decode_max_bs:
        decode["bs"] = decode_cuda_graph_batch_sizes(
            int(decode_max_bs),
            speculative=bool(info.get("speculative_algorithm")),
            no_padding=bool(info.get("disable_cuda_graph_padding")),
        )
    prefill: dict[str, Any] = dict.fromkeys(_PHASE_KEYS)
    prefill_default = "disabled" if int(info.get("pp_size") or 1) > 1 else "breakable"
    prefill_max_bs = info.get("cuda_graph_max_bs_prefill") or info.get("chunked_prefill_size")
    prefill.update(backend=backend("prefill", prefill_default), max_bs=prefill_max_bs, tc_compiler="eager")
    if prefill_max_bs and int(prefill_max_bs) > 0:
        prefill["bs"] = prefill_cuda_graph_batch_sizes(int(prefill_max_bs))
    return {"decode": decode, "prefill": prefill}
