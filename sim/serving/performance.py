"""The serving performance model: how long one decode step takes and how many tokens it gives.

Choosing a configuration
- The profile's ParallelConfig that matches the launch exactly (tp, ep, pp, dp,
  dp_attention, cuda_graphs). Else the nearest, by this order of importance:
  same GPU count (tp*pp), same pp, same dp_attention, same cuda_graphs, then the
  smallest |log2| distance of ep and dp. A nearest pick is logged as a warning.
- With a speculative algorithm: the SpeculativeConfig of that algorithm (NEXTN and
  EAGLE are one: SGLang serves NEXTN as EAGLE) with the launch's cuda_graphs whose
  base has the launch's layout; else the same algorithm preferring the same
  cuda_graphs, then the base whose layout is nearest the launch by the rule above
  (the base's own cuda_graphs do not count: the speculative config states its own);
  among equals, the one stated nearest the launch's speculative settings. A profile
  without figures for that algorithm serves at the base config's speed with acceptance 1.

Step times
- A curve gives aggregate output tok/s T(C) at concurrency C. A decode step of n
  running requests takes step_time(n) = n / T(n) (autoregressive), or
  n * mean_accept / T_spec(n) (speculative: the curve is stated at the mean
  acceptance length over the prompt kinds). step_time is interpolated piecewise
  linearly in n between the known points (None skipped) and extrapolated past the
  last with the last segment's slope, so throughput saturates.
- A speculative config's figures hold at its stated settings (steps, topk, draft
  tokens; DFLASH: the block size). A launch at other settings gets the accept
  lengths and step times of the settings model (spec_settings.py): the stated
  settings reproduce the stated figures exactly.
- Each speculative step gives each request k = 1 + Binomial(depth, p) tokens, depth
  the draft's chain length (DFLASH: block_size - 1; EAGLE with topk 1: steps),
  p = (tau_r - 1) / depth, tau_r ~ N(accept_length[kind], accept_spread) clipped to
  [1, depth + 1]. The draw is seeded from (--random-seed, prompt, temperature), so
  greedy decoding of one prompt accepts the same way every time.
- Prefill takes input_tokens / prefill_tok_s before a request joins the batch.
- A launch over several nodes (--nnodes) adds the host's internode link to every step (internode.py): the
  curves of such layouts are stated as if within one NVLink domain.
All times are modelled seconds; the engine divides them by time_scale.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ...sglang_releases.facts import ReleaseFacts
from ..profiles.schema import (
    ConcurrencyCurve,
    InternodeLink,
    ParallelConfig,
    PromptKind,
    ServingSpec,
    SpeculativeConfig,
)
from .internode import LinkedStepTime, link_cost
from .spec_settings import (
    VERIFY_TOKEN_SHARE,
    SpecSettings,
    accept_length_at,
    canonical_algorithm,
    draft_cost_of,
    draft_shape,
    stated_settings,
    step_cost,
)


@dataclass(frozen=True)
class Launch:
    """The parallel layout and modes a server was launched with.

    The speculative settings are SGLang's resolved ones; None: those the profile's figures are stated at
    (DFLASH: the block size build_performance_model is given).
    """

    tp: int = 1
    ep: int = 1
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    cuda_graphs: bool = True
    nnodes: int = 1
    speculative_algorithm: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None


def _log2_distance(a: int, b: int) -> float:
    return abs(math.log2(max(a, 1)) - math.log2(max(b, 1)))


def _parallel_distance(
    config: ParallelConfig, launch: Launch, with_graphs: bool = True
) -> tuple[float, bool, bool, bool, float, str]:
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


def _settings_distance(
    spec: SpeculativeConfig, serving: ServingSpec, launch: Launch, release: ReleaseFacts | None
) -> int:
    stated = stated_settings(spec, serving.target, release)
    wanted = (launch.speculative_num_steps, launch.speculative_eagle_topk, launch.speculative_num_draft_tokens)
    return sum(abs(w - s) for w, s in zip(wanted, stated.as_tuple(), strict=True) if w is not None)


def choose_config(serving: ServingSpec, launch: Launch, release: ReleaseFacts | None = None) -> ConfigChoice:
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
        wanted = canonical_algorithm(launch.speculative_algorithm, release)
        same_algo = [s for s in serving.speculative if canonical_algorithm(s.algorithm, release) == wanted]
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
                    _settings_distance(s, serving, launch, release),
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

    @property
    def tail_slope(self) -> float:
        """Seconds one more running request adds to a step, over the last known segment (a forward that is
        compute-bound); with one known point, that point's time per request."""
        xs, ys = self._n, self._t
        if len(xs) < 2:
            return ys[0] / xs[0]
        return max((ys[-1] - ys[-2]) / (xs[-1] - xs[-2]), 0.0)


class SpeculativeStepTime:
    """step_time(n) at a launch's speculative settings: the stated curve's, scaled by the settings model's cost
    ratio (spec_settings.step_cost); `tokens_per_step` is the mean accept length at those settings."""

    def __init__(
        self,
        stated: StepTimeCurve,
        base: StepTimeCurve,
        algorithm: str,
        stated_settings: SpecSettings,
        settings: SpecSettings,
        knee: float,
        draft_cost: float,
        tokens_per_step: float,
    ) -> None:
        self.stated = stated
        self.base = base  # the autoregressive step time of the layout the speculative config runs on
        self.algorithm = algorithm
        self.stated_settings = stated_settings
        self.settings = settings
        self.knee = knee
        self.draft_cost = draft_cost
        self.tokens_per_step = tokens_per_step

    def cost(self, n: float, settings: SpecSettings) -> float:
        """The settings model's time of one step of n requests at `settings` (spec_settings.step_cost)."""
        return step_cost(
            n,
            self.algorithm,
            settings,
            self.base(n),
            VERIFY_TOKEN_SHARE * self.base.tail_slope,
            self.knee,
            self.draft_cost,
        )

    def cost_ratio(self, n: float) -> float:
        if self.settings == self.stated_settings:
            return 1.0
        return self.cost(n, self.settings) / self.cost(n, self.stated_settings)

    def __call__(self, n: float) -> float:
        return self.stated(n) * self.cost_ratio(n)

    def throughput(self, n: float) -> float:
        """Aggregate tok/s at n running requests, at the mean accept length of these settings."""
        return n * self.tokens_per_step / self(n)


def default_random_seed(speculative_algorithm: str | None) -> int:
    """SGLang's --random-seed when the launch gives none, as the simulator resolves it (DFLASH: 0, else 42)."""
    return 0 if speculative_algorithm == "DFLASH" else 42


def ids_prompt_text(ids: Sequence[int]) -> str:
    """The prompt text a request of token ids is to the simulator (what seeds its sampler and picks its kind)."""
    return " ".join(map(str, ids))


def sampler_seed_material(
    random_seed: int, prompt_text: str, temperature: float, request_counter: int | None = None
) -> list[object]:
    """What seeds a request's acceptance (and natural answer length): greedy decoding of one prompt is the same every
    time; a sampled request adds the server's request counter, so it differs from the last."""
    material: list[object] = [random_seed, prompt_text, temperature]
    if request_counter is not None:
        material.append(request_counter)
    return material


class AcceptanceSampler:
    """Tokens gained per verify step for one request: 1 + Binomial(max_tokens - 1, p)."""

    __slots__ = ("tau", "max_tokens", "_cdf", "_rng")

    def __init__(self, tau: float, max_tokens: int, rng: random.Random) -> None:
        self.tau = tau
        self.max_tokens = max_tokens
        self._rng = rng
        drafts = max_tokens - 1
        p = 0.0 if drafts <= 0 else (tau - 1.0) / drafts
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
    step_time: StepTimeCurve | SpeculativeStepTime | LinkedStepTime
    block_size: int  # draft tokens per verify step (DFLASH: the block): what proposed-draft counts are made of
    prefill_tok_s: float
    accept_length: dict[PromptKind, float] | None
    accept_spread: float
    accept_length_thinking_off: dict[PromptKind, float] | None = None
    collapsed: bool = False  # CUDA-graph fault: acceptance 1, speculative step cost
    settings: SpecSettings | None = None  # the launch's resolved speculative settings
    accept_depth: int | None = None  # drafts a step can accept (None: block_size - 1)

    @property
    def speculative(self) -> bool:
        return self.accept_length is not None

    @property
    def max_tokens_per_step(self) -> int:
        """The most tokens one verify step gives: the accepted chain and the bonus token."""
        return (self.accept_depth if self.accept_depth is not None else self.block_size - 1) + 1

    @property
    def mean_accept_length(self) -> float | None:
        """The mean over prompt kinds of the accept length at the launch's settings; None: not speculative."""
        if self.accept_length is None:
            return None
        return sum(self.accept_length.values()) / len(self.accept_length)

    def prefill_seconds(self, input_tokens: int) -> float:
        return input_tokens / self.prefill_tok_s

    def sampler(
        self, kind: PromptKind, seed_material: Sequence[object], *, thinking_off: bool = False
    ) -> AcceptanceSampler | None:
        if not self.speculative:
            return None
        rng = random.Random("|".join(map(str, seed_material)))
        top = self.max_tokens_per_step
        if self.collapsed:
            return AcceptanceSampler(1.0, top, rng)
        assert self.accept_length is not None
        table = (
            self.accept_length_thinking_off if thinking_off and self.accept_length_thinking_off else self.accept_length
        )
        tau = rng.gauss(table[kind], self.accept_spread)
        tau = min(max(tau, 1.0), float(top))
        return AcceptanceSampler(tau, top, rng)


def launch_settings(
    spec: SpeculativeConfig, serving: ServingSpec, launch: Launch, block_size: int, release: ReleaseFacts | None
) -> tuple[SpecSettings, SpecSettings]:
    """(stated, launched) settings: the launch's own where it has them. Without them, DFLASH runs at `block_size`;
    another algorithm given a `block_size` other than 1 runs at that many draft tokens (topk 1: steps one fewer,
    NGRAM: its stated breadth); else at the stated settings."""
    stated = stated_settings(spec, serving.target, release)
    algo = canonical_algorithm(spec.algorithm, release)
    steps, topk, draft = (
        launch.speculative_num_steps,
        launch.speculative_eagle_topk,
        launch.speculative_num_draft_tokens,
    )
    if algo == "DFLASH":
        return stated, SpecSettings(1, 1, draft or max(block_size, 1))
    if steps is None and topk is None and draft is None:
        if block_size > 1 and block_size != stated.num_draft_tokens:
            if algo == "NGRAM":
                return stated, SpecSettings(max(block_size // stated.topk, 1), stated.topk, block_size)
            return stated, SpecSettings(block_size - 1, 1, block_size)
        return stated, stated
    topk = topk or stated.topk
    draft = draft or (steps + 1 if steps is not None and topk == 1 else stated.num_draft_tokens)
    steps = steps or (max(draft // topk, 1) if algo == "NGRAM" else stated.num_steps)
    return stated, SpecSettings(steps, topk, draft)


def build_performance_model(
    serving: ServingSpec,
    launch: Launch,
    block_size: int,
    collapsed: bool = False,
    release: ReleaseFacts | None = None,
    link: InternodeLink | None = None,
) -> PerformanceModel:
    """The launch's model; a launch over several nodes pays `link` (the host's fabric) on every step."""
    choice = choose_config(serving, launch, release)
    cost = link_cost(link, serving.target, nnodes=launch.nnodes, tp=launch.tp, pp=launch.pp)
    if choice.speculative is not None:
        spec = choice.speculative
        stated, settings = launch_settings(spec, serving, launch, block_size, release)

        def at(table: dict[PromptKind, float]) -> dict[PromptKind, float]:
            return {kind: accept_length_at(value, spec.algorithm, stated, settings) for kind, value in table.items()}

        accept = at(spec.accept_length)
        mean = sum(accept.values()) / len(accept)
        speculative_step = SpeculativeStepTime(
            StepTimeCurve(spec.throughput, tokens_per_step=spec.mean_accept_length),
            StepTimeCurve(serving.config(spec.base).throughput),
            spec.algorithm,
            stated,
            settings,
            serving.target.verify_knee_tokens,
            draft_cost_of(spec),
            tokens_per_step=mean,
        )
        return PerformanceModel(
            choice=choice,
            step_time=speculative_step
            if cost is None
            else LinkedStepTime(speculative_step, cost, settings.num_draft_tokens),
            block_size=settings.num_draft_tokens,
            prefill_tok_s=serving.target.prefill_tok_s,
            accept_length=accept,
            accept_spread=spec.accept_spread,
            accept_length_thinking_off=at(spec.accept_length_thinking_off) if spec.accept_length_thinking_off else None,
            collapsed=collapsed,
            settings=settings,
            accept_depth=draft_shape(spec.algorithm, settings)[0],
        )
    draft_tokens = launch.speculative_num_draft_tokens or block_size
    decode_step = StepTimeCurve(choice.parallel.throughput)
    return PerformanceModel(
        choice=choice,
        step_time=decode_step if cost is None else LinkedStepTime(decode_step, cost, 1),
        block_size=draft_tokens if launch.speculative_algorithm else 1,
        prefill_tok_s=serving.target.prefill_tok_s,
        accept_length=None,
        accept_spread=0.0,
    )
