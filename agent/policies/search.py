"""The `search` policies: Optuna's TPE (`search:tpe`) or random search (`search:random`) over the configuration space.

What InferenceBench's non-agent baseline does, with specops' tools: the same job as the playbook (its facts, target,
drafter, disk, download, acceptance, report and final answer: playbook_pipeline.py), but the measurements are a
search instead of the playbook's reasoning. One trial is one launch and one benchmark sweep over the goal's
concurrency levels; its objective is the geometric mean over those levels of the output throughput (a level not
measured counts as 1 tok/s), so that a gain at C=1 weighs as much as the same gain at C=256. The answer per level
is the best configuration measured there, speculative against autoregressive, as the playbook's.

    search:tpe                          8 trials, seed 0, starting from SGLang's defaults
    search:random:trials=12;seed=3      random search, 12 trials
    search:tpe:defaults=false           TPE from the first trial (no warm start from the defaults)
    search:tpe:levels=1,64              the playbook's measurement settings (levels, bench_*, acceptance_*) apply too

The budget is a count of trials: a proposal that repeats a measured configuration is answered from the history (not
launched again) and does not count; the search ends when the trials are measured or every configuration is.
The sampler is seeded and the pipeline decides only from the goal and the outcomes, so a run is reproducible, and
replayed from its history on every request like the playbook (playbook.py).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai.models.function import FunctionModel

from specops.agent.report.naming import ConfigNames
from specops.tools.download.models import DownloadState
from specops.tools.drafters import DrafterConfig
from specops.tools.sglang.config import ServerConfig
from specops.tools.sglang.handle import RunningServer

from .playbook import playbook_model
from .playbook_configs import Candidate
from .playbook_goal import Understood
from .playbook_history import Outcome
from .playbook_pipeline import Pipeline, Steps, Target
from .playbook_settings import PlaybookSettings
from .search_settings import SearchSettings
from .search_space import SearchSpace, search_space

if TYPE_CHECKING:
    import optuna

MISSING_TOK_S = 1.0  # a level a trial has no figure for (its server did not come up, or failed there)
MAX_REPEATS = 20  # proposals per trial that repeat measured configurations before the search gives up
# The plan items of the playbook's measurements, which the search's trials are.
_MEASURING_ITEMS = ("baseline", "speculative", "spec_bench")


def make_sampler(settings: SearchSettings) -> optuna.samplers.BaseSampler:
    import optuna

    if settings.sampler == "random":
        return optuna.samplers.RandomSampler(seed=settings.seed)
    with warnings.catch_warnings():  # options Optuna marks experimental in some releases
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=settings.seed, n_startup_trials=settings.startup)


def new_study(space: SearchSpace, settings: SearchSettings) -> optuna.Study:
    """A fresh in-memory study with the seeded sampler, and the defaults queued first when the settings ask."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no line per trial on the run's terminal
    study = optuna.create_study(direction="maximize", sampler=make_sampler(settings))
    if settings.defaults:
        for params in space.defaults():
            study.enqueue_trial(params, skip_if_exists=True)
    return study


def objective(sweep: dict[int, float], levels: list[int]) -> float:
    """The geometric mean of a sweep's output tok/s over `levels` (a level without a figure counts MISSING_TOK_S)."""
    return math.exp(sum(math.log(max(sweep.get(c, 0.0), MISSING_TOK_S)) for c in levels) / len(levels))


@dataclass(frozen=True)
class Trial:
    number: int
    name: str | None  # the configuration measured, as the report names it; None: its server did not come up
    proposed: str  # the configuration proposed (before launch recovery changed it)
    value: float


def _key(candidate: Candidate) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(candidate.config.items()))


class SearchPipeline(Pipeline):
    """The playbook's pipeline with the measurements replaced by a search (`search` settings)."""

    def __init__(
        self,
        understood: Understood,
        settings: PlaybookSettings | None = None,
        *,
        can_ask: bool = False,
        search: SearchSettings | None = None,
    ) -> None:
        self.search = search or SearchSettings()
        super().__init__(understood, settings or self.search.measurement, can_ask=can_ask)
        self.names = ConfigNames()  # every launch's config, in order: the report's names (agent/report/naming.py)
        self.last_name: str | None = None
        self.trials: list[Trial] = []

    @property
    def _searching(self) -> bool:
        """A search measures one drafter against the baseline; a goal that compares drafters, or that measures
        nothing, runs the playbook's steps."""
        return (
            self.u.goal is not None
            and self._benchmarking
            and not self.goal.compares_drafters
            and not self.goal.compares_algorithms
        )

    def _write_plan(self) -> None:
        super()._write_plan()
        if self._searching:
            self.plan.replace(
                _MEASURING_ITEMS,
                "search",
                f"Search {self.search.trials} configurations: {self.search.describe()}",
            )

    def _plan_start(self, item: str) -> None:
        super()._plan_start("search" if self._searching and item in _MEASURING_ITEMS else item)

    def call(self, tool: str, **args: Any) -> Steps:
        """As the playbook's, and every launch's configuration named as the report will name it."""
        out: Outcome = yield from super().call(tool, **args)
        if tool == "launch_server":
            try:
                config = out.value(RunningServer).config if out.ok else ServerConfig.model_validate(args.get("config"))
            except (ValueError, TypeError):
                return out  # an unreadable config: the report lists it among failures only
            self.names.name(config)
        return out

    def _reserve(self, speculative: bool) -> tuple[float, list[str]]:
        """A search keeps room only for the deploy's relaunch: it has no order of value to protect."""
        return self._deploy_reserve()

    def _config_name(self, server: RunningServer, launched: Candidate) -> str:
        self.last_name = self.names.name(server.config)
        return self.last_name

    def _pipeline(self) -> Steps:
        if not self._searching:
            yield from super()._pipeline()
            return
        facts, target, config = yield from self._prepare()
        self._plan_start("search")
        layouts = self._choose_layouts(facts, target)
        space = search_space(layouts, config, facts.speculative, self.levels)
        yield from self._search(space, target, config)
        yield from self._conclude()

    def _search(self, space: SearchSpace, target: Target, config: DrafterConfig) -> Steps:
        study = new_study(space, self.search)
        told: dict[tuple[tuple[str, Any], ...], float] = {}
        drafter_path: str | None = None
        drafter_ready = False
        repeats = 0
        # Under a host-time budget the budget bounds the search, not a count of trials (unless the spec sets one).
        counted = self.budget.budget_s is None or "trials" in self.search.model_fields_set
        most = self.search.trials if counted else space.size
        out_of_budget = False
        while len(self.trials) < most and len(told) < space.size and repeats < MAX_REPEATS:
            trial = study.ask()
            proposed = space.propose(trial)
            key = _key(proposed)
            if key in told:  # measured already: answered from the history, no launch
                study.tell(trial, told[key])
                repeats += 1
                continue
            repeats = 0
            speculative = bool(proposed.config.get("speculative_algorithm"))
            candidate = proposed
            if speculative:
                if not drafter_ready:
                    drafter_path, config = yield from self._drafter_ready(target, config)
                    drafter_ready = True
                if drafter_path:
                    candidate = candidate.with_(drafter_path=drafter_path)
            self.last_name = None
            acceptance = speculative and not self.acceptance_tried
            if not self._fits(candidate, speculative=speculative, acceptance=acceptance, levels=None):
                out_of_budget = True  # every trial is a launch and a sweep: the next would not fit either
                break
            launched = yield from self._measure(candidate, speculative=speculative, acceptance=acceptance)
            name = self.last_name if launched is not None else None
            sweep: dict[int, float] = (self.spec if speculative else self.ar).get(name, {}) if name else {}
            value = objective(sweep, self.levels)
            study.tell(trial, value)
            told[key] = value
            self.trials.append(Trial(len(self.trials) + 1, name, candidate.name, value))
            if self.download_state == DownloadState.RUNNING:
                yield from self._poll_download()
        if out_of_budget:
            ended = "the host-time budget: the next trial would not fit"
        elif len(self.trials) >= most:
            ended = f"the budget of {most} trials spent"
        elif len(told) >= space.size:
            ended = "every configuration of the space measured"
        else:
            ended = f"the sampler proposing only measured configurations ({MAX_REPEATS} in a row)"
        self.done.append(self._search_line(space, study, ended))

    def _search_line(self, space: SearchSpace, study: optuna.Study, ended: str) -> str:
        measured = [t for t in self.trials if t.name is not None]
        failed = [t for t in self.trials if t.name is None]
        order = ", ".join(f"{t.number}. {t.name or f'{t.proposed} (did not come up)'}" for t in self.trials)
        repeated = len(study.trials) - len(self.trials)
        return (
            f"search: {self.search.describe()} over {space.size} configurations ({len(space.layouts)} layouts, "
            f"{self._spoken} on {len(space.speculative_layouts)} of them, {len(space.draft_settings())} drafter "
            f"settings, CUDA graphs on/off, {len(space.mem_fractions)} memory pools, "
            f"{len(space.max_running)} running-request caps); {len(measured)} measured"
            + (f", {len(failed)} did not come up" if failed else "")
            + (f", {repeated} proposals repeated a measured configuration" if repeated else "")
            + f"; ended with {ended}; trials in order: {order}. The objective is the geometric mean of output "
            "tok/s over the levels; the answer per level is the best configuration measured there"
        )


def search_model(settings: SearchSettings | None = None) -> FunctionModel:
    """The search policy as a pydantic-ai model: the playbook's FunctionModel replaying a SearchPipeline."""
    search = settings or SearchSettings()

    def pipeline(
        understood: Understood, settings: PlaybookSettings | None = None, *, can_ask: bool = False
    ) -> Pipeline:
        return SearchPipeline(understood, settings, can_ask=can_ask, search=search)

    return playbook_model(search.measurement, pipeline=pipeline, name=search.spec())
