"""`python -m sglang.launch_server` arguments, as the host's SGLang version parses them.

A table of flags modelled on SGLang's ServerArgs (names, aliases, types, defaults,
choices) with the version each appeared in. The parser for a version holds only
the flags that version has, so an older SGLang answers a newer flag the way
argparse does ("unrecognized arguments", exit 2), and its
`--speculative-algorithm` choices lack DFLASH ("invalid choice", exit 2).
"""

from __future__ import annotations

import argparse
import io
from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from .errors import LaunchError
from .versions import (
    DFLASH_SINCE,
    DSPARK_UNO_SINCE,
    NGRAM_SINCE,
    STANDALONE_SINCE,
    Version,
    at_least,
)

OLD: Version = (0, 4, 0)  # present in every version the simulator models


def _bool_flag() -> dict[str, Any]:
    return {"action": "store_true"}


@dataclass(frozen=True)
class Flag:
    names: tuple[str, ...]
    dest: str
    since: Version = OLD
    kwargs: dict[str, Any] = field(default_factory=dict)
    help: str = ""


def _flag(*names: str, dest: str, since: Version = OLD, help: str = "", **kwargs: Any) -> Flag:
    return Flag(names=names, dest=dest, since=since, kwargs=kwargs, help=help)


FLAGS: list[Flag] = [
    # Model and tokenizer
    _flag("--model-path", "--model", dest="model_path", type=str, required=True,
          help="The path of the model weights. This can be a local folder or a Hugging Face repo ID."),
    _flag("--tokenizer-path", dest="tokenizer_path", type=str, default=None, help="The path of the tokenizer."),
    _flag("--tokenizer-mode", dest="tokenizer_mode", type=str, default="auto", choices=["auto", "slow"]),
    _flag("--skip-tokenizer-init", dest="skip_tokenizer_init", **_bool_flag()),
    _flag("--load-format", dest="load_format", type=str, default="auto",
          choices=["auto", "pt", "safetensors", "npcache", "dummy", "sharded_state", "gguf", "bitsandbytes", "layered", "remote"]),
    _flag("--trust-remote-code", dest="trust_remote_code", **_bool_flag()),
    _flag("--dtype", dest="dtype", type=str, default="auto", choices=["auto", "half", "float16", "bfloat16", "float", "float32"]),
    _flag("--kv-cache-dtype", dest="kv_cache_dtype", type=str, default="auto", choices=["auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"]),
    _flag("--quantization", dest="quantization", type=str, default=None),
    _flag("--context-length", dest="context_length", type=int, default=None),
    _flag("--device", dest="device", type=str, default=None),
    _flag("--served-model-name", dest="served_model_name", type=str, default=None),
    _flag("--chat-template", dest="chat_template", type=str, default=None),
    _flag("--revision", dest="revision", type=str, default=None),
    # HTTP server
    _flag("--host", dest="host", type=str, default="127.0.0.1"),
    _flag("--port", dest="port", type=int, default=30000),
    _flag("--api-key", dest="api_key", type=str, default=None),
    _flag("--skip-server-warmup", dest="skip_server_warmup", **_bool_flag()),
    # Memory and scheduling
    _flag("--mem-fraction-static", dest="mem_fraction_static", type=float, default=None),
    _flag("--max-running-requests", dest="max_running_requests", type=int, default=None),
    _flag("--max-total-tokens", dest="max_total_tokens", type=int, default=None),
    _flag("--max-prefill-tokens", dest="max_prefill_tokens", type=int, default=16384),
    _flag("--chunked-prefill-size", dest="chunked_prefill_size", type=int, default=None),
    _flag("--schedule-policy", dest="schedule_policy", type=str, default="fcfs", choices=["lpm", "random", "fcfs", "dfs-weight", "lof"]),
    _flag("--schedule-conservativeness", dest="schedule_conservativeness", type=float, default=1.0),
    _flag("--page-size", dest="page_size", type=int, default=None),
    _flag("--disable-radix-cache", dest="disable_radix_cache", **_bool_flag()),
    _flag("--stream-interval", dest="stream_interval", type=int, default=1),
    _flag("--incremental-streaming-output", dest="incremental_streaming_output", **_bool_flag()),
    # Parallelism
    _flag("--tensor-parallel-size", "--tp-size", "--tp", dest="tp_size", type=int, default=1),
    _flag("--pipeline-parallel-size", "--pp-size", dest="pp_size", type=int, default=1),
    _flag("--data-parallel-size", "--dp-size", "--dp", dest="dp_size", type=int, default=1),
    _flag("--expert-parallel-size", "--ep-size", "--ep", dest="ep_size", type=int, default=1),
    _flag("--enable-dp-attention", dest="enable_dp_attention", **_bool_flag()),
    _flag("--moe-a2a-backend", dest="moe_a2a_backend", type=str, default="none", choices=["none", "deepep", "mooncake"]),
    _flag("--nnodes", dest="nnodes", type=int, default=1),
    _flag("--node-rank", dest="node_rank", type=int, default=0),
    _flag("--dist-init-addr", dest="dist_init_addr", type=str, default=None),
    # Logging and metrics
    _flag("--log-level", dest="log_level", type=str, default="info"),
    _flag("--log-requests", dest="log_requests", **_bool_flag()),
    _flag("--enable-metrics", dest="enable_metrics", **_bool_flag()),
    _flag("--decode-log-interval", dest="decode_log_interval", type=int, default=40),
    _flag("--show-time-cost", dest="show_time_cost", **_bool_flag()),
    _flag("--enable-cache-report", dest="enable_cache_report", **_bool_flag()),
    _flag("--watchdog-timeout", dest="watchdog_timeout", type=float, default=300),
    _flag("--random-seed", dest="random_seed", type=int, default=None),
    # Parsers
    _flag("--tool-call-parser", dest="tool_call_parser", type=str, default=None),
    _flag("--reasoning-parser", dest="reasoning_parser", type=str, default=None),
    # Kernels and CUDA graphs
    _flag("--attention-backend", dest="attention_backend", type=str, default=None,
          choices=["flashinfer", "triton", "torch_native", "fa3", "fa4", "flashmla", "cutlass_mla", "trtllm_mla", "trtllm_mha", "aiter", "ascend"]),
    _flag("--disable-cuda-graph", dest="disable_cuda_graph", **_bool_flag()),
    _flag("--disable-cuda-graph-padding", dest="disable_cuda_graph_padding", **_bool_flag()),
    _flag("--cuda-graph-max-bs", dest="cuda_graph_max_bs", type=int, default=None),
    _flag("--cuda-graph-bs", dest="cuda_graph_bs", type=int, nargs="+", default=None),
    _flag("--enable-torch-compile", dest="enable_torch_compile", **_bool_flag()),
    _flag("--torch-compile-max-bs", dest="torch_compile_max_bs", type=int, default=32),
    _flag("--disable-overlap-schedule", dest="disable_overlap_schedule", **_bool_flag()),
    # Speculative decoding
    _flag("--speculative-algorithm", dest="speculative_algorithm", type=str.upper, default=None),  # choices per version
    _flag("--speculative-draft-model-path", "--speculative-draft-model", dest="speculative_draft_model_path", type=str, default=None),
    _flag("--speculative-draft-model-revision", dest="speculative_draft_model_revision", type=str, default=None),
    _flag("--speculative-num-steps", dest="speculative_num_steps", type=int, default=None),
    _flag("--speculative-eagle-topk", dest="speculative_eagle_topk", type=int, default=None),
    _flag("--speculative-num-draft-tokens", dest="speculative_num_draft_tokens", type=int, default=None),
    _flag("--speculative-accept-threshold-single", dest="speculative_accept_threshold_single", type=float, default=1.0),
    _flag("--speculative-token-map", dest="speculative_token_map", type=str, default=None),
    _flag("--speculative-draft-attention-backend", dest="speculative_draft_attention_backend", type=str, default=None, since=(0, 5, 3)),
    _flag("--speculative-dflash-block-size", dest="speculative_dflash_block_size", type=int, default=None, since=DFLASH_SINCE),
    _flag("--speculative-draft-window-size", dest="speculative_draft_window_size", type=int, default=None, since=DFLASH_SINCE),
    # The old spelling, still accepted (deprecated); same destination.
    _flag("--speculative-dflash-draft-window-size", dest="speculative_dflash_draft_window_size", type=int, default=None, since=DFLASH_SINCE),
]


def speculative_algorithm_choices(version: Version) -> list[str]:
    choices = ["EAGLE", "EAGLE3", "NEXTN"]
    if at_least(version, STANDALONE_SINCE):
        choices.append("STANDALONE")
    choices.append("NGRAM" if at_least(version, NGRAM_SINCE) else "LOOKAHEAD")
    if at_least(version, DFLASH_SINCE):
        choices.append("DFLASH")
    if at_least(version, DSPARK_UNO_SINCE):
        choices += ["DSPARK", "UNO"]
    return choices


class _Parser(argparse.ArgumentParser):
    """argparse, but errors come back as LaunchError instead of exiting the caller."""

    def error(self, message: str) -> None:  # type: ignore[override]
        buf = io.StringIO()
        self.print_usage(buf)
        raise LaunchError(f"{buf.getvalue()}{self.prog}: error: {message}\n", exit_code=2)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        raise LaunchError(message or "", exit_code=status)


def build_parser(version: Version) -> argparse.ArgumentParser:
    parser = _Parser(prog="launch_server.py", allow_abbrev=False)
    for flag in FLAGS:
        if not at_least(version, flag.since):
            continue
        kwargs = dict(flag.kwargs)
        if flag.dest == "speculative_algorithm":
            kwargs["choices"] = speculative_algorithm_choices(version)
        parser.add_argument(*flag.names, dest=flag.dest, help=flag.help or None, **kwargs)
    return parser


def help_text(version: Version) -> str:
    return build_parser(version).format_help()


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

    @property
    def cuda_graphs(self) -> bool:
        return not self.disable_cuda_graph

    @property
    def gpus(self) -> int:
        return self.tp_size * self.pp_size


def parse_server_args(argv: list[str], version: Version) -> ServerArgs:
    """Parse as that SGLang version would; raises LaunchError (exit 2) as argparse exits."""
    namespace = build_parser(version).parse_args(argv)
    values = vars(namespace)
    if values.get("speculative_draft_window_size") is None and values.get("speculative_dflash_draft_window_size"):
        values["speculative_draft_window_size"] = values["speculative_dflash_draft_window_size"]
    return ServerArgs.model_validate(values)


ArgCheck = Callable[[ServerArgs], None]
