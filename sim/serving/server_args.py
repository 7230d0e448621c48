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
    return namespace.deprecation_warnings


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
        return not self.disable_cuda_graph

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
    if values.get("cuda_graph_backend_decode") == "disabled":  # what --disable-cuda-graph is rewritten to
        values["disable_cuda_graph"] = True
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
