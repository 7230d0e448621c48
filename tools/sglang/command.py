"""A ServerConfig as the argv of `python3 -m sglang.launch_server`: a list of words, never a shell line."""

from __future__ import annotations

from .config import ServerConfig

LAUNCH_MODULE = "sglang.launch_server"


def launch_flags(config: ServerConfig) -> list[str]:
    """The flags and values, in a stable order; defaults SGLang already has are not passed."""
    words: list[str] = ["--model-path", config.model_path, "--tp-size", str(config.tp)]

    def flag(name: str, value: object, *, when: bool = True) -> None:
        if when and value is not None:
            words.extend([name, str(value)])

    def switch(name: str, on: bool) -> None:
        if on:
            words.append(name)

    flag("--ep-size", config.ep, when=config.ep > 1)
    flag("--dp-size", config.dp, when=config.dp > 1)
    flag("--pp-size", config.pp, when=config.pp > 1)
    switch("--enable-dp-attention", config.enable_dp_attention)
    switch("--disable-cuda-graph", not config.cuda_graphs)
    flag("--cuda-graph-max-bs", config.cuda_graph_max_bs, when=config.cuda_graphs)
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


def needed_flags(config: ServerConfig) -> list[str]:
    """The flag names the configuration passes: what the installed SGLang's --help must list."""
    return [w for w in launch_flags(config) if w.startswith("--")]


def launch_argv(config: ServerConfig, *, python: str = "python3") -> list[str]:
    return [python, "-m", LAUNCH_MODULE, *launch_flags(config)]
