"""The configuration space a search policy explores: what the playbook can launch for this target on this host.

Derived from the facts the playbook decides from, never from one host:

- layouts: the playbook's autoregressive layouts for the host's GPUs and the target (playbook_configs.py: TP over
  every GPU; for a MoE target EP over all and over half of them and EP with DP attention; PP where there is no
  NVLink; over a host group, one server across the nodes and replicas where the model fits one node);
- speculation on or off, on the layouts the host's SGLang allows the algorithm on (host_facts' `speculative`), with
  the drafter's settings around SGLang's defaults (the drafter's config says them): DFLASH its block and a half and
  a quarter of it; n-gram its draft tokens, a half and a third; the EAGLE family its steps, two fewer and two more,
  top-k 1, its default and a 4-branch tree, and draft tokens (a chain of top-k 1 has steps + 1; a tree between
  steps + 1 and top-k x steps + 1);
- CUDA graphs on or off (on: graphs captured up to the running-request cap);
- mem_fraction_static: SGLang's default, or a smaller or a larger static pool;
- max_running_requests: half the goal's top concurrency, the top concurrency, twice it.

A proposal is drawn define-by-run from an Optuna trial, so a parameter is only drawn where it applies (the drafter's
settings only with speculation on, speculation only on a layout that allows it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specops.tools.drafters import DrafterConfig
from specops.tools.sglang.config import EAGLE_FAMILY, SpeculativeAlgorithm
from specops.tools.speculative_support import SpeculativeSupport

from .playbook_configs import Candidate, speculative_candidates
from .playbook_tuning import TREE_TOPK

if TYPE_CHECKING:
    from optuna.trial import BaseTrial

# A smaller and a larger static pool than SGLang's default (None): less KV cache and more room for activations and
# CUDA graphs, or the other way round. Launch recovery raises a pool that is too small (playbook_recovery.py).
MEM_FRACTIONS: tuple[float | None, ...] = (None, 0.8, 0.9)

# Parameter names, as the trials and a study's history carry them.
LAYOUT, SPECULATIVE, DRAFT_TOKENS, STEPS, TOPK = "layout", "speculative", "draft_tokens", "steps", "topk"
CUDA_GRAPHS, MEM_FRACTION, MAX_RUNNING = "cuda_graphs", "mem_fraction_static", "max_running_requests"


def _distinct(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted({v for v in values if v >= 1}))


@dataclass(frozen=True)
class SearchSpace:
    """The choices of each parameter; `propose` turns a trial's draws into a launch_server config."""

    layouts: tuple[Candidate, ...]  # the autoregressive layouts, as the playbook would launch them
    algorithm: SpeculativeAlgorithm | None  # None: no speculation to try (nothing settled the algorithm)
    support: SpeculativeSupport | None  # host_facts' `speculative`
    block_size: int | None  # DFLASH: the drafter's block, passed as the playbook passes it
    draft_tokens: tuple[int, ...]  # DFLASH: block sizes; others: --speculative-num-draft-tokens; (): SGLang's defaults
    steps: tuple[int, ...]  # EAGLE family: --speculative-num-steps
    topk: tuple[int, ...]  # EAGLE family: --speculative-eagle-topk
    cuda_graphs: tuple[bool, ...]
    mem_fractions: tuple[float | None, ...]
    max_running: tuple[int, ...]
    top_level: int

    @property
    def layout_names(self) -> list[str]:
        return [c.name for c in self.layouts]

    def layout(self, name: str) -> Candidate:
        return next(c for c in self.layouts if c.name == name)

    def allows_speculation(self, layout: Candidate) -> bool:
        return self.algorithm is not None and layout.allows(self.algorithm, self.support)

    @property
    def speculative_layouts(self) -> list[str]:
        return [c.name for c in self.layouts if self.allows_speculation(c)]

    def draft_settings(self) -> list[dict[str, int]]:
        """Every distinct drafter setting (launch config fields), SGLang's defaults first when none is tuned."""
        if self.algorithm in EAGLE_FAMILY and self.steps and self.topk and self.draft_tokens:
            found = [self._eagle(s, k, d) for s in self.steps for k in self.topk for d in self.draft_tokens]
            return list({tuple(sorted(f.items())): f for f in found}.values())
        if self.draft_tokens:
            return [{"block_size": d} for d in self.draft_tokens]
        return [{}]

    @staticmethod
    def _eagle(steps: int, topk: int, draft_tokens: int) -> dict[str, int]:
        """SGLang's rule: a chain (top-k 1) verifies steps + 1 tokens; a tree between steps + 1 and top-k x steps + 1."""
        tokens = steps + 1 if topk == 1 else min(max(draft_tokens, steps + 1), topk * steps + 1)
        return {"speculative_num_steps": steps, "speculative_eagle_topk": topk, "block_size": tokens}

    @property
    def size(self) -> int:
        """How many distinct configurations the space holds."""
        per_layout = len(self.cuda_graphs) * len(self.mem_fractions) * len(self.max_running)
        speculative = len(self.draft_settings())
        return sum(per_layout * (1 + (speculative if self.allows_speculation(c) else 0)) for c in self.layouts)

    def propose(self, trial: BaseTrial) -> Candidate:
        """The configuration `trial` draws (define-by-run: a parameter only where it applies); no drafter path and no
        port yet (the pipeline adds them)."""
        layout = self.layout(trial.suggest_categorical(LAYOUT, self.layout_names))
        graphs = trial.suggest_categorical(CUDA_GRAPHS, self.cuda_graphs)
        mem = trial.suggest_categorical(MEM_FRACTION, self.mem_fractions)
        running = trial.suggest_categorical(MAX_RUNNING, self.max_running)
        speculative = self.allows_speculation(layout) and trial.suggest_categorical(SPECULATIVE, (False, True))
        candidate = layout
        if speculative:
            assert self.algorithm is not None, "allows_speculation holds only with an algorithm"
            candidate = speculative_candidates(
                [layout], self.algorithm, None, self.top_level, block_size=self.block_size, support=self.support
            )[0].with_(**self._drafter_draw(trial))
        return candidate.with_(
            cuda_graphs=graphs,
            cuda_graph_max_bs=running if graphs else None,
            mem_fraction_static=mem,
            max_running_requests=running,
        )

    def _drafter_draw(self, trial: BaseTrial) -> dict[str, int]:
        if self.algorithm in EAGLE_FAMILY and self.steps and self.topk and self.draft_tokens:
            steps = trial.suggest_categorical(STEPS, self.steps)
            topk = trial.suggest_categorical(TOPK, self.topk)
            return self._eagle(steps, topk, trial.suggest_categorical(DRAFT_TOKENS, self.draft_tokens))
        if self.draft_tokens:
            return {"block_size": trial.suggest_categorical(DRAFT_TOKENS, self.draft_tokens)}
        return {}

    def defaults(self) -> list[dict[str, Any]]:
        """The draws of the configurations the playbook starts from: the first layout autoregressive, and speculation
        at the drafter's defaults on the first layout that allows it; CUDA graphs on, SGLang's memory pool, running
        requests up to the top level (a search may start from them: `defaults=true`)."""
        common = {CUDA_GRAPHS: True, MEM_FRACTION: None, MAX_RUNNING: self.top_level}
        first = self.layouts[0]
        found: list[dict[str, Any]] = [
            {LAYOUT: first.name, **common, **({SPECULATIVE: False} if self.allows_speculation(first) else {})}
        ]
        if self.speculative_layouts:
            draft: dict[str, Any] = {}
            if self.algorithm in EAGLE_FAMILY and self.steps:
                draft = {STEPS: self.steps[0], TOPK: self.topk[0], DRAFT_TOKENS: self.draft_tokens[0]}
            elif self.draft_tokens:
                draft = {DRAFT_TOKENS: self.draft_tokens[-1]}
            found.append({LAYOUT: self.speculative_layouts[0], **common, SPECULATIVE: True, **draft})
        return found


def search_space(
    layouts: Sequence[Candidate],
    config: DrafterConfig | None,
    support: SpeculativeSupport | None,
    levels: Sequence[int],
) -> SearchSpace:
    """The space for these autoregressive `layouts` (the playbook's, from the host's facts), the drafter's `config`
    (its algorithm and SGLang's defaults for it; None: no speculation), the host's SGLang `support` and the goal's
    concurrency `levels`. The first draw of each setting is SGLang's default (defaults() starts from them)."""
    top = max(levels)
    algorithm = config.algorithm if config is not None else None
    defaults = config.sglang_defaults if config is not None else None
    block: int | None = None
    tokens: tuple[int, ...] = ()
    steps: tuple[int, ...] = ()
    topk: tuple[int, ...] = ()
    if algorithm is SpeculativeAlgorithm.DFLASH:
        block = (config.block_size if config else None) or (defaults.num_draft_tokens if defaults else None)
        tokens = _distinct([block, block // 2, block // 4]) if block else ()
        tokens = tuple(t for t in tokens if t >= 2)
    elif algorithm is SpeculativeAlgorithm.NGRAM and defaults is not None:
        d = defaults.num_draft_tokens
        tokens = _distinct([d, d // 2, d // 3])
    elif algorithm in EAGLE_FAMILY and defaults is not None:
        s, k, d = defaults.num_steps, defaults.eagle_topk, defaults.num_draft_tokens
        steps = (s, *(v for v in _distinct([s - 2, s + 2]) if v != s))
        topk = (k, *(v for v in _distinct([1, TREE_TOPK]) if v != k))
        tokens = (d, *(v for v in _distinct([s + 1, 2 * (s + 1)]) if v != d))
    return SearchSpace(
        layouts=tuple(layouts),
        algorithm=algorithm,
        support=support,
        block_size=block,
        draft_tokens=tokens,
        steps=steps,
        topk=topk,
        cuda_graphs=(True, False),
        mem_fractions=MEM_FRACTIONS,
        max_running=_distinct([top // 2, top, 2 * top]),
        top_level=top,
    )
