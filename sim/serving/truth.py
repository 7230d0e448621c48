"""What a server the simulator runs should measure: the truth evals and accuracy benchmarks compare with.

Throughput: the profile's curve for the configuration the simulator chooses for a
launch (performance.py), at the launch's speculative settings (the settings model,
spec_settings.py; a Launch without them: the stated ones, DFLASH at `block_size`),
at the tokens per verify step the sweep's prompts get: a speculative step time
holds at the mean acceptance over prompt kinds, a sweep of one kind gains that
kind's (random token ids are chat to the simulator, its lowest acceptance). A
drafter whose CUDA graphs collapsed accepts nothing: one token per verify step at
the speculative step's cost.

A benchmark level's own tokens per step. Each request accepts per its own tau, so a
level of a few requests (C=1: one at a time; C=32: 1/sqrt(32) of the 10% spread)
gains several per cent more or less than the kind's mean: real, and what the
simulator serves. The draws are seeded from the server's seed and the prompt
(greedy decoding), so replayed_verify_steps gives the exact steps each request
took to make the tokens it streamed: the level's decode tokens (its first from
the prefill left out: a level's window opens once every request has it) over
those steps are the tokens per step its window saw, to put in modelled_tok_s.

Acceptance of a benchmark level: what sum(completion_tokens) / sum(spec_verify_ct)
over that level's requests comes to in expectation. Not the profile's mean itself:
each request draws its own tau (mean accept_length[kind] at the launch's settings,
std accept_spread, clipped to [1, depth + 1]), a token-weighted ratio of requests of equal length is
T / E[steps], so it sits at the harmonic side of the tau spread; a request's
last verify step is cut at max_tokens, costing a whole step for part of its tokens;
and its first token comes from the prefill, no verify step (T tokens over the
steps that make T - 1). All are real (SGLang measures the same way); this computes
them exactly.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

from ...sglang_releases.facts import ReleaseFacts
from ..profiles.schema import InternodeLink, PromptKind, ServingSpec
from .performance import Launch, PerformanceModel, build_performance_model, sampler_seed_material
from .prompt_kind import classify_prompt, thinking_switched_off

_QUADRATURE_POINTS = 81  # tau nodes over +-5 std-devs: far below the 0.005 the tests resolve
_FIXED_POINT_ROUNDS = 100


def modelled_tok_s(
    serving: ServingSpec,
    launch: Launch,
    concurrency: float,
    *,
    block_size: int = 1,
    prompt_kind: PromptKind = "chat",
    collapsed: bool = False,
    release: ReleaseFacts | None = None,
    tokens_per_step: float | None = None,
    link: InternodeLink | None = None,
) -> float:
    """Output tok/s of `concurrency` requests decoding together: the step rate at that batch times the tokens a
    verify step gives each request, the mean accept length of `prompt_kind`, or `tokens_per_step` when the
    requests' own are known (replayed_verify_steps). A launch over several nodes pays `link`, the host's."""
    model = build_performance_model(serving, launch, block_size, collapsed=collapsed, release=release, link=link)
    tok_s = model.step_time.throughput(concurrency)
    mean = model.mean_accept_length
    if model.accept_length is None or mean is None:
        return tok_s
    if collapsed:
        return tok_s / mean
    per_step = tokens_per_step if tokens_per_step is not None else model.accept_length[prompt_kind]
    return tok_s * per_step / mean


def steady_tokens_per_step(model: PerformanceModel, prompt_kind: PromptKind = "chat") -> float | None:
    """The decode tokens a verify step gives a batch of requests of `prompt_kind` mid-stream, on average per request:
    each request draws its own tau (the kind's mean, the model's spread) clipped to [1, the most a step gives], and
    the batch steps together, so it is the mean of the clipped draws (below the kind's mean where the block is short
    enough to cut the upper tail: a block of 2 caps every draw at 2). None: not speculative."""
    if not model.speculative or model.accept_length is None:
        return None
    mean, spread, top = model.accept_length[prompt_kind], model.accept_spread, float(model.max_tokens_per_step)
    if spread <= 0:
        return min(max(mean, 1.0), top)
    nodes = _clipped_tau_nodes(mean, spread, top)
    return sum(weight * tau for weight, tau in nodes) / sum(weight for weight, _ in nodes)


def replayed_verify_steps(
    model: PerformanceModel, prompt_text: str, output_tokens: int, *, random_seed: int, temperature: float = 0.0
) -> int | None:
    """The verify steps the engine runs for a greedy request of `prompt_text` to make its first `output_tokens`
    tokens (the first from the prefill; the step that reaches the count cut there, as the engine cuts it at
    max_new_tokens). Exact, not expected: the sampler is seeded from the server's seed and the prompt
    (performance.sampler_seed_material), so replaying it gives the draws the server made. None: not
    speculative, or sampled (temperature > 0: the server's request counter seeds it too)."""
    if temperature != 0.0:
        return None
    sampler = model.sampler(
        classify_prompt(prompt_text),
        sampler_seed_material(random_seed, prompt_text, temperature),
        thinking_off=thinking_switched_off(prompt_text),
    )
    if sampler is None:
        return None
    made, steps = min(output_tokens, 1), 0
    while made < output_tokens:
        made += min(sampler.draw(), output_tokens - made)
        steps += 1
    return steps


def expected_verify_steps(tau: float, block_size: int, output_tokens: int) -> float:
    """E[verify steps] for one request of exactly `output_tokens` tokens whose steps give 1 + Binomial(block_size - 1,
    p) tokens, p = (tau - 1) / (block_size - 1); the step that reaches the length counts whole (the engine's rule).
    `block_size` is the most tokens a step gives (PerformanceModel.max_tokens_per_step)."""
    drafts = block_size - 1
    p = 0.0 if drafts <= 0 else min(max((tau - 1.0) / drafts, 0.0), 1.0)
    gains = [math.comb(drafts, k) * p**k * (1 - p) ** (drafts - k) for k in range(drafts + 1)]  # P(1 + k tokens)
    steps = [0.0] * (output_tokens + 1)  # steps[n]: expected steps to make n more tokens
    for n in range(1, output_tokens + 1):
        steps[n] = 1.0 + sum(prob * steps[n - 1 - k] for k, prob in enumerate(gains) if k + 1 < n)
    return steps[output_tokens]


def level_accept_length(
    serving: ServingSpec,
    launch: Launch,
    *,
    block_size: int,
    output_tokens: int,
    prompt_kind: PromptKind = "chat",
    collapsed: bool = False,
    release: ReleaseFacts | None = None,
) -> float | None:
    """The expected token-weighted acceptance of a level whose requests each make `output_tokens` tokens (ignore_eos)
    from prompts of `prompt_kind`; None when the launch is not speculative."""
    model = build_performance_model(serving, launch, block_size, collapsed=collapsed, release=release)
    if not model.speculative or model.accept_length is None:
        return None
    if collapsed:
        return 1.0
    most = model.max_tokens_per_step
    mean, spread, top = model.accept_length[prompt_kind], model.accept_spread, float(most)
    decoded = output_tokens - 1  # the prefill gives the first token
    if decoded <= 0:
        return None  # done at prefill: no verify step, no acceptance of its own
    if spread <= 0:
        return output_tokens / expected_verify_steps(min(max(mean, 1.0), top), most, decoded)
    nodes = _clipped_tau_nodes(mean, spread, top)
    steps = sum(weight * expected_verify_steps(tau, most, decoded) for weight, tau in nodes)
    return output_tokens * sum(weight for weight, _ in nodes) / steps


def closed_loop_tok_s(
    model: PerformanceModel, clients: int, *, input_len: int, output_len: int, prompt_kind: PromptKind = "chat"
) -> float:
    """Output tok/s of one server that `clients` requests keep busy in a closed loop (each finished request replaced
    at once, as the benchmark's clients do), every request a prompt of `input_len` and exactly `output_len` tokens.

    Each client's requests renew: a request prefills (no step waits for it, engine.py), joins the batch at the next
    step (half a step on average, when others are decoding), makes its first token from the prefill and the rest in
    verify steps, as many as its own tau needs on average (expected_verify_steps over the kind's clipped draw: the
    harmonic side of the spread, the last step cut at the length). So a client makes output_len tokens per cycle and the server
    `clients * output_len / cycle`, with the batch at the clients decoding at a time (the fixed point of
    `running = clients * decoding / cycle`). Below the steady figure (modelled_tok_s at `clients`), by more where
    decoding is fast beside the prefill: a speculative server's short answers lose the most. A collapsed drafter's
    steps give one token each."""
    if clients <= 0 or output_len <= 0:
        return 0.0
    decoded = output_len - 1  # the prefill gives the first token
    if model.speculative and not model.collapsed and decoded > 0:
        assert model.accept_length is not None
        mean, spread = model.accept_length[prompt_kind], model.accept_spread
        steps = _mean_verify_steps(mean, spread, model.max_tokens_per_step, decoded)
    else:
        steps = float(decoded)
    prefill = model.prefill_seconds(input_len)
    # A prefilled request waits for the step under way to end, if the others are decoding: none with one client.
    join_wait = 0.5 * (clients - 1) / clients if steps else 0.0
    running = float(clients)
    cycle = prefill
    for _ in range(_FIXED_POINT_ROUNDS):  # a step's time grows with the batch: converges in a few rounds
        step = model.step_time(max(running, 1.0))  # whenever a step runs, at least one request is in it
        cycle = prefill + (join_wait + steps) * step
        decoding = steps * step / cycle if cycle > 0 else 0.0
        if abs(clients * decoding - running) < 1e-9 * clients:
            break
        running = max(clients * decoding, 1e-9)
    return clients * output_len / cycle if cycle > 0 else 0.0


@functools.lru_cache(maxsize=4096)
def _mean_verify_steps(mean: float, spread: float, most: int, decoded: int) -> float:
    """E[verify steps] to decode `decoded` tokens over the requests' tau draws, N(mean, spread) clipped to [1, most]
    (kept: the regret oracle asks it for every configuration of a space, of a few settings each)."""
    if spread <= 0:
        return expected_verify_steps(min(max(mean, 1.0), float(most)), most, decoded)
    nodes = _clipped_tau_nodes(mean, spread, float(most))
    weights = sum(weight for weight, _ in nodes)
    return sum(weight * expected_verify_steps(tau, most, decoded) for weight, tau in nodes) / weights


def _clipped_tau_nodes(mean: float, spread: float, top: float) -> list[tuple[float, float]]:
    """(weight, tau) over a request's tau draw, N(mean, spread), clipped to [1, top] as the sampler clips it. The
    tails beyond +-5 std-devs (below 1e-6) are left out: callers renormalise over the weights summed."""
    normal = NormalDist(mean, spread)
    edges = [mean + spread * (-5 + 10 * i / _QUADRATURE_POINTS) for i in range(_QUADRATURE_POINTS + 1)]
    return [
        (normal.cdf(high) - normal.cdf(low), min(max((low + high) / 2, 1.0), top))
        for low, high in zip(edges, edges[1:], strict=False)
    ]
