"""What a server the simulator runs should measure: the truth evals and accuracy benchmarks compare with.

The profile's curve for the configuration the simulator chooses for a launch
(performance.py), at the tokens per verify step the sweep's prompts get: a
speculative curve is stated at the mean acceptance over prompt kinds, a sweep of
one kind gains that kind's (random token ids are chat to the simulator, its lowest
acceptance). A drafter whose CUDA graphs collapsed accepts nothing: one token per
verify step at the speculative step's cost.
"""

from __future__ import annotations

from ..profiles.schema import PromptKind, ServingSpec
from .performance import Launch, build_performance_model


def modelled_tok_s(serving: ServingSpec, launch: Launch, concurrency: float, *, block_size: int = 1,
                   prompt_kind: PromptKind = "chat", collapsed: bool = False) -> float:  # fmt: skip
    model = build_performance_model(serving, launch, block_size, collapsed=collapsed)
    tok_s = model.step_time.throughput(concurrency)
    speculative = model.choice.speculative
    if speculative is None:
        return tok_s
    if collapsed:
        return tok_s / speculative.mean_accept_length
    return tok_s * speculative.accept_length[prompt_kind] / speculative.mean_accept_length
