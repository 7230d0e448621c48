"""The serving performance model: how long one decode step takes and how many tokens it gives.

Choosing a configuration
- The profile's ParallelConfig that matches the launch exactly (tp, ep, pp, dp,
  dp_attention, cuda_graphs). Else the nearest, by this order of importance:
  same GPU count (tp*pp), same pp, same dp_attention, same cuda_graphs, then the
  smallest |log2| distance of ep and dp. A nearest pick is logged as a warning.
- With a speculative algorithm: the SpeculativeConfig of that algorithm with the
  launch's cuda_graphs whose base has the launch's layout; else the same algorithm
  preferring the same cuda_graphs, then the base whose layout is nearest the launch
  by the rule above (the base's own cuda_graphs do not count: the speculative
  config states its own). A profile without
  figures for that algorithm serves at the base config's speed with acceptance 1.

Step times
- A curve gives aggregate output tok/s T(C) at concurrency C. A decode step of n
  running requests takes step_time(n) = n / T(n) (autoregressive), or
  n * mean_accept / T_spec(n) (speculative: the curve is stated at the mean
  acceptance length over the prompt kinds). step_time is interpolated piecewise
  linearly in n between the known points (None skipped) and extrapolated past the
  last with the last segment's slope, so throughput saturates.
- Each speculative step gives each request k = 1 + Binomial(block_size - 1, p) tokens,
  p = (tau_r - 1) / (block_size - 1), tau_r ~ N(accept_length[kind], accept_spread)
  clipped to [1, block_size]. The draw is seeded from (--random-seed, prompt,
  temperature), so greedy decoding of one prompt accepts the same way every time.
- Prefill takes input_tokens / prefill_tok_s before a request joins the batch.
All times are modelled seconds; the engine divides them by time_scale.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..profiles.schema import ConcurrencyCurve, ParallelConfig, PromptKind, ServingSpec, SpeculativeConfig


@dataclass(frozen=True)
class Launch:
    """The parallel layout and modes a server was launched with."""

    tp: int = 1
    ep: int = 1
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    cuda_graphs: bool = True
    speculative_algorithm: str | None = None


def _log2_distance(a: int, b: int) -> float:
    return abs(math.log2(max(a, 1)) - math.log2(max(b, 1)))


def _parallel_distance(config: ParallelConfig, launch: Launch, with_graphs: bool = True) -> tuple:
    return (
        _log2_distance(config.tp * config.pp, launch.tp * launch.pp),
        config.pp != launch.pp,
        config.dp_attention != launch.dp_attention,
        with_graphs and config.cuda_graphs != launch.cuda_graphs,
        _log2_distance(config.ep, launch.ep) + _log2_distance(config.dp, launch.dp),
        config.name,
    )


def _same_layout(config: ParallelConfig, launch: Launch) -> bool:
    return (config.tp, config.ep, config.pp, config.dp, config.dp_attention) == (
        launch.tp,
        launch.ep,
        launch.pp,
        launch.dp,
        launch.dp_attention,
    )


def _exact(config: ParallelConfig, launch: Launch) -> bool:
    return (config.tp, config.ep, config.pp, config.dp, config.dp_attention, config.cuda_graphs) == (
        launch.tp,
        launch.ep,
        launch.pp,
        launch.dp,
        launch.dp_attention,
        launch.cuda_graphs,
    )


@dataclass(frozen=True)
class ConfigChoice:
    parallel: ParallelConfig
    speculative: SpeculativeConfig | None
    warnings: tuple[str, ...]


def choose_config(serving: ServingSpec, launch: Launch) -> ConfigChoice:
    warnings: list[str] = []
    exact = [c for c in serving.configs if _exact(c, launch)]
    if exact:
        parallel = exact[0]
    else:
        parallel = min(serving.configs, key=lambda c: _parallel_distance(c, launch))
        warnings.append(
            f"[sim] no calibrated configuration for tp={launch.tp} ep={launch.ep} pp={launch.pp} dp={launch.dp} "
            f"dp_attention={launch.dp_attention} cuda_graphs={launch.cuda_graphs}; "
            f"serving at the speed of the nearest one, {parallel.name!r}"
        )
    speculative = None
    if launch.speculative_algorithm:
        same_algo = [s for s in serving.speculative if s.algorithm == launch.speculative_algorithm]
        by_name = {c.name: c for c in serving.configs}
        if not same_algo:
            warnings.append(
                f"[sim] the host profile has no {launch.speculative_algorithm} figures; "
                "serving at the base configuration's speed with acceptance 1"
            )
        else:
            speculative = min(
                same_algo,
                key=lambda s: (
                    s.cuda_graphs != launch.cuda_graphs,
                    _parallel_distance(by_name[s.base], launch, with_graphs=False),
                ),
            )
            if not _same_layout(by_name[speculative.base], launch) or speculative.cuda_graphs != launch.cuda_graphs:
                warnings.append(
                    f"[sim] no {launch.speculative_algorithm} figures for this layout with "
                    f"cuda_graphs={launch.cuda_graphs}; using {speculative.name!r}"
                )
    return ConfigChoice(parallel=parallel, speculative=speculative, warnings=tuple(warnings))


class StepTimeCurve:
    """step_time(n), piecewise linear in n through (C, C * tokens_per_step / T(C))."""

    def __init__(self, curve: ConcurrencyCurve, tokens_per_step: float = 1.0) -> None:
        points = curve.known_points()
        self.tokens_per_step = tokens_per_step
        self._n = [float(c) for c, _ in points]
        self._t = [c * tokens_per_step / tok_s for c, tok_s in points]

    def __call__(self, n: float) -> float:
        xs, ys = self._n, self._t
        if len(xs) == 1:
            return ys[0] * n / xs[0]
        if n <= xs[0]:
            slope = (ys[1] - ys[0]) / (xs[1] - xs[0])
            return max(ys[0] + slope * (n - xs[0]), 0.1 * ys[0])
        if n >= xs[-1]:
            slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
            return ys[-1] + slope * (n - xs[-1])
        i = bisect.bisect_right(xs, n)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (n - x0) / (x1 - x0)

    def throughput(self, n: float) -> float:
        """Aggregate tok/s at n running requests, at the curve's tokens per step."""
        return n * self.tokens_per_step / self(n)


class AcceptanceSampler:
    """Tokens gained per verify step for one request: 1 + Binomial(block_size - 1, p)."""

    __slots__ = ("tau", "block_size", "_cdf", "_rng")

    def __init__(self, tau: float, block_size: int, rng: random.Random) -> None:
        self.tau = tau
        self.block_size = block_size
        self._rng = rng
        drafts = block_size - 1
        p = 0.0 if drafts == 0 else (tau - 1.0) / drafts
        cdf, total = [], 0.0
        for k in range(drafts + 1):
            total += math.comb(drafts, k) * p**k * (1 - p) ** (drafts - k)
            cdf.append(total)
        cdf[-1] = 1.0
        self._cdf = cdf

    def draw(self) -> int:
        return 1 + bisect.bisect_right(self._cdf, self._rng.random())


@dataclass(frozen=True)
class PerformanceModel:
    """Everything the engine needs to time steps, for one launched server."""

    choice: ConfigChoice
    step_time: StepTimeCurve
    block_size: int
    prefill_tok_s: float
    accept_length: dict[PromptKind, float] | None
    accept_spread: float
    accept_length_thinking_off: dict[PromptKind, float] | None = None
    collapsed: bool = False  # CUDA-graph fault: acceptance 1, speculative step cost

    @property
    def speculative(self) -> bool:
        return self.accept_length is not None

    def prefill_seconds(self, input_tokens: int) -> float:
        return input_tokens / self.prefill_tok_s

    def sampler(
        self, kind: PromptKind, seed_material: Sequence[object], *, thinking_off: bool = False
    ) -> AcceptanceSampler | None:
        if not self.speculative:
            return None
        rng = random.Random("|".join(map(str, seed_material)))
        if self.collapsed:
            return AcceptanceSampler(1.0, self.block_size, rng)
        assert self.accept_length is not None
        table = (
            self.accept_length_thinking_off if thinking_off and self.accept_length_thinking_off else self.accept_length
        )
        tau = rng.gauss(table[kind], self.accept_spread)
        tau = min(max(tau, 1.0), float(self.block_size))
        return AcceptanceSampler(tau, self.block_size, rng)


def build_performance_model(
    serving: ServingSpec, launch: Launch, block_size: int, collapsed: bool = False
) -> PerformanceModel:
    choice = choose_config(serving, launch)
    if choice.speculative is not None:
        spec = choice.speculative
        curve = StepTimeCurve(spec.throughput, tokens_per_step=spec.mean_accept_length)
        return PerformanceModel(
            choice=choice,
            step_time=curve,
            block_size=block_size,
            prefill_tok_s=serving.target.prefill_tok_s,
            accept_length=dict(spec.accept_length),
            accept_spread=spec.accept_spread,
            accept_length_thinking_off=dict(spec.accept_length_thinking_off)
            if spec.accept_length_thinking_off
            else None,
            collapsed=collapsed,
        )
    return PerformanceModel(
        choice=choice,
        step_time=StepTimeCurve(choice.parallel.throughput),
        block_size=block_size if launch.speculative_algorithm else 1,
        prefill_tok_s=serving.target.prefill_tok_s,
        accept_length=None,
        accept_spread=0.0,
    )
