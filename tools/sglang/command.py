"""A ServerConfig as the argv of `python3 -m sglang.launch_server`: a list of words, never a shell line.

Releases spell some settings differently, so the words are chosen from the flags the
installed SGLang lists in its `--help` (SglangCapabilities.flags):
- the CUDA-graph batch cap: `--cuda-graph-max-bs` up to the 0.5.1x releases,
  `--cuda-graph-max-bs-decode` in 0.5.23 (where the old spelling is an argparse
  "ambiguous option" between -decode and -prefill);
- no CUDA graphs: `--cuda-graph-backend-decode disabled --cuda-graph-backend-prefill
  disabled` where those exist (0.5.23 deprecates `--disable-cuda-graph`);
- DP attention: `--attn-dp-size N` where it exists (0.5.23 rewrites the deprecated
  `--dp-size N --enable-dp-attention` to it), else `--dp-size N --enable-dp-attention`.
Without a host's flag list, the newest modelled release's flags are used.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

from ...sglang_releases.facts import LATEST, load
from .config import ServerConfig

LAUNCH_MODULE = "sglang.launch_server"


@functools.cache
def newest_release_flags() -> frozenset[str]:
    return frozenset(name for flag in load(LATEST).launch_flags for name in flag.names)


def launch_flags(config: ServerConfig, flags: Collection[str] | None = None) -> list[str]:
    """The flags and values, in a stable order; defaults SGLang already has are not passed."""
    known = frozenset(flags) if flags is not None else newest_release_flags()
    words: list[str] = ["--model-path", config.model_path, "--tp-size", str(config.tp)]

    def flag(name: str, value: object, *, when: bool = True) -> None:
        if when and value is not None:
            words.extend([name, str(value)])

    def switch(name: str, on: bool) -> None:
        if on:
            words.append(name)

    flag("--ep-size", config.ep, when=config.ep > 1)
    if config.enable_dp_attention and "--attn-dp-size" in known:
        flag("--attn-dp-size", config.dp, when=config.dp > 1)
    else:
        flag("--dp-size", config.dp, when=config.dp > 1)
        switch("--enable-dp-attention", config.enable_dp_attention)
    switch("--enable-dp-lm-head", config.enable_dp_lm_head)
    flag("--pp-size", config.pp, when=config.pp > 1)
    if not config.cuda_graphs and "--cuda-graph-backend-decode" in known:
        words.extend(["--cuda-graph-backend-decode", "disabled", "--cuda-graph-backend-prefill", "disabled"])
    else:
        switch("--disable-cuda-graph", not config.cuda_graphs)
    cap_flag = "--cuda-graph-max-bs" if "--cuda-graph-max-bs" in known else "--cuda-graph-max-bs-decode"
    flag(cap_flag, config.cuda_graph_max_bs, when=config.cuda_graphs)
    switch("--disable-cuda-graph-padding", config.disable_cuda_graph_padding)
    flag("--mem-fraction-static", config.mem_fraction_static)
    flag("--max-running-requests", config.max_running_requests)
    flag("--context-length", config.context_length)
    switch("--trust-remote-code", config.trust_remote_code)
    if config.speculative_algorithm is not None:
        flag("--speculative-algorithm", config.speculative_algorithm.value)
        flag("--speculative-draft-model-path", config.drafter_path)
        flag("--speculative-num-draft-tokens", config.block_size)
        flag("--speculative-num-steps", config.speculative_num_steps)
        flag("--speculative-eagle-topk", config.speculative_eagle_topk)
    flag("--tool-call-parser", config.tool_call_parser)
    flag("--reasoning-parser", config.reasoning_parser)
    flag("--served-model-name", config.served_model_name)
    flag("--host", config.host)
    flag("--port", config.port)
    switch("--enable-metrics", config.enable_metrics)
    return words


def needed_flags(config: ServerConfig, flags: Collection[str] | None = None) -> list[str]:
    """The flag names the configuration passes: what the installed SGLang's --help must list."""
    return [w for w in launch_flags(config, flags) if w.startswith("--")]


def launch_argv(config: ServerConfig, *, python: str = "python3", flags: Collection[str] | None = None) -> list[str]:
    return [python, "-m", LAUNCH_MODULE, *launch_flags(config, flags)]
