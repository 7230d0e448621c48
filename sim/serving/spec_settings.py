"""The speculative settings model: how --speculative-num-steps / -eagle-topk / -num-draft-tokens (DFLASH: the block
size) move acceptance and step time away from the figures a profile states at one setting. Everything here is
`modelled`: a small physical model anchored at the stated point, never a replacement for it.

Draft shape
- The tokens a verify step can accept beyond the bonus token form a chain of `depth` positions, each with `breadth`
  candidates. EAGLE / EAGLE3 / NEXTN / STANDALONE: depth = min(steps, draft_tokens - 1) (a tree of draft_tokens - 1
  nodes cannot be deeper), breadth = min(topk, (draft_tokens - 1) / depth), at least 1 (the nodes left per level).
  DFLASH: depth = block_size - 1, breadth 1 (a block is one chain drafted in one pass). NGRAM: its trie's BFS
  takes up to topk (--speculative-ngram-max-bfs-breadth) candidates at the first level and follows the best match
  below it, so depth = 1 + max(0, draft_tokens - 1 - topk), breadth as above (SGLang's num_steps,
  draft_tokens // topk, plays no part in its tree).

Acceptance
- Chain acceptance: with a per-position acceptance a_eff, a step gives L = 1 + a_eff + ... + a_eff^depth
  = (1 - a_eff^(depth+1)) / (1 - a_eff) tokens: more steps or a bigger block always gain, saturating at 1/(1-a_eff).
- Breadth: each further candidate at a level is another chance to hit, not an independent one: the miss
  probability m = 1 - a of one candidate becomes m^(breadth^TOPK_EXPONENT) (0.3: four candidates turn a miss of
  0.3 into 0.16). So topk > 1 raises acceptance modestly.
- NGRAM: a first level of `breadth` candidates, then the one match followed: L = 1 + a_1 (1 + a + ... +
  a^(depth-1)), a_1 the first level's widened acceptance.
- Each prompt kind's stated accept length L0 at the stated settings gives its single-candidate acceptance a
  (inverting the above by bisection); the accept length at other settings is the same formula at that a, so the
  stated settings reproduce the stated accept lengths exactly.

Step time
- A forward pass over V tokens (all requests of the batch together) costs what the base layout's autoregressive
  decode step A(n) of its n requests costs, plus c per token past the knee K:
      forward(n, V) = A(n) + c * (max(0, V - K) - max(0, n - K))
  Below the knee the pass is memory-bound: the extra tokens ride on the weight read. Past it each token costs
  c = VERIFY_TOKEN_SHARE (0.5) x the slope of the base layout's autoregressive step time over its last measured
  segment: one more request costs a compute-bound decode step its FLOPs and communication plus its own KV read
  and bookkeeping; a further verify token of the same request pays the first half only. K is the target's
  verify_knee_tokens (profile). With the seed host's figures this puts the existing DFLASH curves within ~10% of
  the model past C=64, and the new modelled curves are the model's, less 15-25%.
- One speculative step of n requests: the verify pass, forward(n, n * draft_tokens), plus the draft: `passes`
  passes of `width` tokens per request, each costing draft_cost * forward(n, n * width) (EAGLE family and
  STANDALONE: steps passes of topk tokens; DFLASH: one pass over the block; NGRAM: one trie lookup, almost free).
  So the verify pass is free at C=1 and dear at high concurrency, and each draft step costs a share of a step.
- The step time at settings S is the stated curve's step time scaled by cost_S(n) / cost_stated(n), so the
  stated settings reproduce the stated curve, and throughput = n * L(S) / step_S(n).
Consequences (tests/sim/test_serving_algorithms_model.py): at C=1 more draft tokens win (acceptance rises, the
verify pass is free, only draft passes cost); at high concurrency fewer win (the verify pass is compute-bound and
its extra tokens cost more than their acceptance brings), down to speculation losing to autoregressive decoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...sglang_releases.facts import LATEST, ReleaseFacts, for_version
from ..profiles.schema import SpeculativeConfig, TargetModel

TOPK_EXPONENT = 0.3
VERIFY_TOKEN_SHARE = 0.5  # of the autoregressive step's marginal cost per request, a verify token pays
DFLASH_DEFAULT_BLOCK_SIZE = 16  # SGLang's, when neither the flags nor the drafter's config give one
MAX_ACCEPTANCE = 0.999  # a per-position acceptance of 1 has no inverse
DRAFT_COST: dict[str, float] = {
    # One draft pass as a fraction of the target's decode step at the same batch (modelled).
    "EAGLE": 0.07,  # one decoder layer (an MTP layer: a full MoE layer) and the shared LM head
    "EAGLE3": 0.07,  # one decoder layer fed by three target layers, its own small LM head
    "STANDALONE": 0.15,  # a whole small model: few FLOPs but as many kernel launches per layer
    "DFLASH": 0.10,  # a few layers over the whole block, in one pass
    "NGRAM": 0.02,  # a suffix-trie lookup on the CPU
}


@dataclass(frozen=True)
class SpecSettings:
    """(speculative_num_steps, speculative_eagle_topk, speculative_num_draft_tokens) as SGLang resolved them."""

    num_steps: int
    topk: int
    num_draft_tokens: int

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.num_steps, self.topk, self.num_draft_tokens)


def canonical_algorithm(algorithm: str, release: ReleaseFacts | None = None) -> str:
    """The algorithm a name stands for (NEXTN -> EAGLE), by the release's aliases (the older releases rename NEXTN
    in their start-up code instead, which the newest release's alias records)."""
    aliases = dict(for_version(LATEST).speculative_algorithm_aliases)
    if release is not None:
        aliases.update(release.speculative_algorithm_aliases)
    name = algorithm.upper()
    return aliases.get(name, name)


def _auto_params_facts(release: ReleaseFacts | None) -> ReleaseFacts:
    """The release if it records SGLang's automatic EAGLE-family settings, else the newest modelled one."""
    facts = release or for_version(LATEST)
    auto = facts.speculative_auto_params
    return facts if auto.default is not None or auto.by_architecture else for_version(LATEST)


def _ngram_facts(release: ReleaseFacts | None) -> ReleaseFacts:
    """The release if it records NGRAM's start-up defaults, else the newest modelled one."""
    facts = release or for_version(LATEST)
    return facts if facts.ngram_defaults.num_draft_tokens is not None else for_version(LATEST)


def sglang_default_settings(algorithm: str, architecture: str | None, release: ReleaseFacts | None) -> SpecSettings:
    """What SGLang resolves when no --speculative-num-steps / -eagle-topk / -num-draft-tokens is given."""
    algo = canonical_algorithm(algorithm, release)
    if algo == "DFLASH":
        return SpecSettings(1, 1, DFLASH_DEFAULT_BLOCK_SIZE)
    if algo == "NGRAM":
        ngram = _ngram_facts(release).ngram_defaults
        draft = ngram.num_draft_tokens or 12
        topk = ngram.eagle_topk or 1
        return SpecSettings(max(draft // topk, 1), topk, draft)
    steps, topk, draft = _auto_params_facts(release).auto_params(algo, architecture or "")
    return SpecSettings(steps, topk, draft)


def stated_settings(spec: SpeculativeConfig, target: TargetModel, release: ReleaseFacts | None = None) -> SpecSettings:
    """The settings a speculative config's figures hold at: its own, SGLang's choice for what it leaves open."""
    default = sglang_default_settings(spec.algorithm, target.architecture, release)
    algo = canonical_algorithm(spec.algorithm, release)
    if algo == "DFLASH":
        return SpecSettings(1, 1, spec.num_draft_tokens or default.num_draft_tokens)
    if algo == "NGRAM":
        topk = spec.topk or default.topk
        draft = spec.num_draft_tokens or default.num_draft_tokens
        return SpecSettings(spec.num_steps or max(draft // topk, 1), topk, draft)
    if spec.num_steps is None:
        return default
    topk = spec.topk or 1
    draft = spec.num_steps + 1 if topk == 1 else (spec.num_draft_tokens or spec.num_steps + 1)
    return SpecSettings(spec.num_steps, topk, draft)


def draft_shape(algorithm: str, settings: SpecSettings) -> tuple[int, float]:
    """(depth, breadth) of the draft a verify step checks (see the module docstring); NGRAM's breadth is that of
    its first level (the levels below it follow one match)."""
    nodes = max(settings.num_draft_tokens - 1, 0)
    algo = canonical_algorithm(algorithm)
    if algo == "DFLASH":
        return nodes, 1.0
    if algo == "NGRAM":
        depth = min(1 + max(nodes - settings.topk, 0), nodes)
        return depth, float(max(min(settings.topk, nodes), 1))
    depth = min(max(settings.num_steps, 1), nodes)
    if depth == 0:
        return 0, 1.0
    return depth, max(1.0, min(float(settings.topk), nodes / depth))


def chain_accept_length(a: float, depth: int) -> float:
    """1 + a + ... + a^depth: the mean tokens per step of a chain of `depth` drafts, each kept with probability a
    given the ones before it were."""
    if a >= 1.0:
        return float(depth + 1)
    return (1.0 - a ** (depth + 1)) / (1.0 - a)


def _bisect(f: Callable[[float], float], target: float) -> float:
    """The a in [0, MAX_ACCEPTANCE] where the increasing f(a) reaches target (clipped to the ends)."""
    if target <= f(0.0):
        return 0.0
    if target >= f(MAX_ACCEPTANCE):
        return MAX_ACCEPTANCE
    low, high = 0.0, MAX_ACCEPTANCE
    for _ in range(80):
        mid = (low + high) / 2
        if f(mid) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def chain_acceptance(accept_length: float, depth: int) -> float:
    """The per-position acceptance whose chain of `depth` gives `accept_length` (bisection; clipped to [0, 1))."""
    if depth <= 0:
        return 0.0
    return _bisect(lambda a: chain_accept_length(a, depth), accept_length)


def _widen(a: float, breadth: float) -> float:
    """Per-position acceptance with `breadth` candidates, from that of one."""
    widened: float = 1.0 - (1.0 - a) ** (breadth**TOPK_EXPONENT)
    return widened


def accept_length_of(a: float, algorithm: str, settings: SpecSettings) -> float:
    """The mean tokens per verify step at `settings` for a single-candidate per-position acceptance `a`."""
    depth, breadth = draft_shape(algorithm, settings)
    if depth == 0:
        return 1.0
    if canonical_algorithm(algorithm) == "NGRAM":  # a wide first level, then one match followed
        return 1.0 + _widen(a, breadth) * chain_accept_length(a, depth - 1)
    return chain_accept_length(_widen(a, breadth), depth)


def accept_length_at(stated_length: float, algorithm: str, stated: SpecSettings, settings: SpecSettings) -> float:
    """A prompt kind's accept length at `settings`, from the one stated at `stated`: the single-candidate
    acceptance that gives the stated length at the stated settings (bisection), at the new settings."""
    if settings == stated:
        return stated_length
    a = _bisect(lambda x: accept_length_of(x, algorithm, stated), stated_length)
    return accept_length_of(a, algorithm, settings)


def forward_cost(n: float, tokens: float, decode_step: float, token_cost: float, knee: float) -> float:
    """A forward pass over `tokens` tokens for `n` requests whose decode step takes `decode_step`: that step, plus
    `token_cost` for each token past the knee that the decode step does not already pay."""
    return decode_step + token_cost * (max(tokens - knee, 0.0) - max(n - knee, 0.0))


def step_cost(
    n: float,
    algorithm: str,
    settings: SpecSettings,
    decode_step: float,
    token_cost: float,
    knee: float,
    draft_cost: float,
) -> float:
    """One speculative step of `n` running requests (the unit of `decode_step`, the base layout's
    autoregressive step at n): the verify pass and the draft passes."""
    algo = canonical_algorithm(algorithm)
    n = max(n, 1.0)
    verify = forward_cost(n, n * settings.num_draft_tokens, decode_step, token_cost, knee)
    if algo == "DFLASH":
        passes, width = 1, settings.num_draft_tokens
    elif algo == "NGRAM":
        passes, width = 1, 1
    else:
        passes, width = settings.num_steps, settings.topk
    return verify + draft_cost * passes * forward_cost(n, n * width, decode_step, token_cost, knee)


def draft_cost_of(spec: SpeculativeConfig) -> float:
    if spec.draft_cost is not None:
        return spec.draft_cost
    return DRAFT_COST.get(canonical_algorithm(spec.algorithm), DRAFT_COST["EAGLE"])
