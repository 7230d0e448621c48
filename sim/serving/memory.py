"""Does the model fit on the GPUs: SGLang's static memory pool, per GPU, in MiB.

mem_fraction_static defaults as SGLang's _handle_gpu_memory_settings computes it:
(gpu_mem - reserved) / gpu_mem, reserved = 512 + 1.5 * max(chunked_prefill, 2048)
+ 2 * cuda_graph_max_bs + 1024 * tp*pp/8 (+3 * cuda_graph_max_bs * dp with DP
attention), at least 10 GiB on GPUs over 60 GiB, + 2 GiB for a draft model.
The pool (mem_fraction_static x GPU memory, less what other processes hold) must
carry this rank's weights (weights / (tp*pp)), its share of the drafter, the CUDA
graphs, and a KV cache; what is left over is the KV cache. No room: SGLang's
"Not enough memory" error. Weights alone larger than the free GPU memory: a CUDA
out-of-memory error while the shards load.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SGLANG_SRC, LaunchError, scheduler_traceback

GIB_MIB = 1024
MIN_KV_TOKENS = 1024  # below this no request of any use fits; SGLang refuses too


def default_chunked_prefill_size(gpu_mib: int) -> int:
    if gpu_mib < 35 * GIB_MIB:
        return 2048
    if gpu_mib < 60 * GIB_MIB:
        return 4096
    if gpu_mib < 160 * GIB_MIB:
        return 8192
    return 16384


def default_cuda_graph_max_bs(gpu_mib: int, tp: int) -> int:
    if gpu_mib < 35 * GIB_MIB:
        return 24 if tp < 4 else 80
    if gpu_mib < 60 * GIB_MIB:
        return 32 if tp < 4 else 160
    if gpu_mib < 90 * GIB_MIB:
        return 160 if tp < 4 else 256
    return 256 if tp < 4 else 512


def default_mem_fraction_static(
    gpu_mib: int,
    tp: int,
    pp: int,
    dp: int,
    dp_attention: bool,
    chunked_prefill: int,
    cuda_graph_max_bs: int,
    speculative: bool,
) -> float:
    reserved = 512 + max(chunked_prefill, 2048) * 1.5 + cuda_graph_max_bs * 2 + tp * pp / 8 * 1024
    if dp_attention:
        reserved += cuda_graph_max_bs * dp * 3
    if gpu_mib > 60 * GIB_MIB:
        reserved = max(reserved, 10 * GIB_MIB)
    if speculative:
        reserved += 2 * GIB_MIB
    return round((gpu_mib - reserved) / gpu_mib, 3)


@dataclass(frozen=True)
class MemoryPlan:
    gpu_mib: int
    foreign_mib: int
    mem_fraction_static: float
    weights_mib: float  # per GPU, target
    drafter_mib: float  # per GPU
    cuda_graph_mib: float
    kv_mib: float
    kv_mib_per_token: float  # per GPU, target + draft pools
    max_total_tokens: int

    @property
    def used_mib(self) -> int:
        """What this server holds on each of its GPUs once started (nvidia-smi's figure)."""
        return int(self.weights_mib + self.drafter_mib + self.cuda_graph_mib + self.kv_mib + 1024)

    def avail_gib(self, held_mib: float) -> float:
        return (self.gpu_mib - self.foreign_mib - held_mib) / 1024


def cuda_oom_error(gpu_mib: int, free_mib: float, tried_mib: float) -> LaunchError:
    total_gib = gpu_mib / 1024
    in_use_gib = (gpu_mib - free_mib) / 1024
    return LaunchError(
        scheduler_traceback(
            [
                (f"{SGLANG_SRC}/srt/model_executor/model_runner.py", 861, "load_model", "self.model = get_model("),
                (f"{SGLANG_SRC}/srt/model_loader/loader.py", 652, "load_model", "self.load_weights_and_postprocess("),
                ("/usr/local/lib/python3.12/dist-packages/torch/nn/modules/module.py", 1355, "convert", "return t.to("),
            ],
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {tried_mib / 1024:.2f} GiB. GPU 0 has a total "
            f"capacity of {total_gib:.2f} GiB of which {max(free_mib, 0):.2f} MiB is free. Including non-PyTorch memory, "
            f"this process has {in_use_gib:.2f} GiB memory in use. Of the allocated memory {in_use_gib - 0.2:.2f} GiB is "
            "allocated by PyTorch, and 210.42 MiB is reserved by PyTorch but unallocated. If reserved but unallocated "
            "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        )
    )


def not_enough_memory_error() -> LaunchError:
    return LaunchError(
        scheduler_traceback(
            [
                (f"{SGLANG_SRC}/srt/model_executor/model_runner.py", 1890, "init_memory_pool", "raise RuntimeError("),
            ],
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        )
    )


def plan_memory(
    *,
    gpu_mib: int,
    foreign_mib: int,
    mem_fraction_static: float,
    min_mem_fraction_static: float | None,
    target_weight_gib: float,
    drafter_weight_gib: float,
    gpus: int,
    tp: int,
    pp: int,
    cuda_graphs: bool,
    cuda_graph_mib: int,
    kv_mib_per_token: float,
    draft_kv_mib_per_token: float,
    max_total_tokens: int | None,
) -> MemoryPlan:
    """The per-GPU plan, or LaunchError: CUDA OOM while loading, or not enough memory for a KV cache."""
    weights = target_weight_gib * 1024 / gpus
    drafter = drafter_weight_gib * 1024 / tp
    free_at_load = gpu_mib - foreign_mib
    if weights + drafter > free_at_load:
        raise cuda_oom_error(gpu_mib, free_at_load - min(weights, free_at_load) * 0.98, min(1792.0, weights))
    graphs = cuda_graph_mib if cuda_graphs else 0
    pool = mem_fraction_static * gpu_mib - foreign_mib
    kv = pool - weights - drafter - graphs
    per_token = kv_mib_per_token / pp + draft_kv_mib_per_token
    tokens = int(kv / per_token) if kv > 0 else 0
    too_low = min_mem_fraction_static is not None and mem_fraction_static < min_mem_fraction_static
    if tokens < MIN_KV_TOKENS or too_low:
        raise not_enough_memory_error()
    if max_total_tokens is not None:
        tokens = min(tokens, max_total_tokens)
        kv = tokens * per_token
    return MemoryPlan(
        gpu_mib=gpu_mib,
        foreign_mib=foreign_mib,
        mem_fraction_static=mem_fraction_static,
        weights_mib=weights,
        drafter_mib=drafter,
        cuda_graph_mib=graphs,
        kv_mib=kv,
        kv_mib_per_token=per_token,
        max_total_tokens=tokens,
    )
