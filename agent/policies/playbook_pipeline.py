"""The playbook's pipeline, written as one generator: it yields the tool calls it wants and receives their outcomes.

    facts -> target on the host -> drafter config (Hub; settles the algorithm) -> disk (room made safely)
    -> download, detached; meanwhile the autoregressive baseline, config by config
    -> wait for the download (recovering by cause) -> drafter config (local)
    -> speculation on the allowed layouts at SGLang's defaults: acceptance once, a sweep each,
       CUDA graphs off when graphs-on loses at high load -> a few tuned settings on the best layout
    -> recommendation -> deploy or clean up

MTP heads in the target and n-gram speculation need no drafter: the config read is
the target's, and there is no disk check or download (the baseline runs first).

Because it is a generator over outcomes, the same code runs again from the
start on every model request (playbook.py replays it over the history), so it
must be deterministic: it decides only from the goal and the outcomes.
A `Stop` ends the pipeline early with a status; servers it started are then
stopped and the plan closed before the final answer.
"""

from __future__ import annotations

import posixpath
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import Any

from specops.agent.answers import Answers
from specops.agent.durations import duration_words
from specops.agent.final import FinalAnswer
from specops.agent.goal import NO_DRAFTER, Goal
from specops.agent.report.bracketing import BRACKET_FACTOR, octave_levels, unbracketed
from specops.agent.report.servers import other_processes
from specops.sglang_releases.facts import first_release_with, for_version
from specops.tools.acceptance import AcceptanceResult
from specops.tools.benchmark.models import BenchmarkResult
from specops.tools.disk import DiskCheck, human_bytes
from specops.tools.download.models import (
    DownloadCause,
    DownloadHandle,
    DownloadMethod,
    DownloadState,
    DownloadStatus,
    WaitDownloadResult,
)
from specops.tools.drafters import SPOKEN_NAMES, DrafterConfig, algorithm_of, family, served_by
from specops.tools.errors import ErrorKind
from specops.tools.facts import HostFacts
from specops.tools.host_problems import HostProblem, gpu_problem, hub_problem, sglang_problem
from specops.tools.hub_search import HubModel, HubSearch
from specops.tools.models_on_host import ModelOnHost, ModelsOnHost
from specops.tools.sglang.config import SpeculativeAlgorithm
from specops.tools.sglang.handle import RunningServer
from specops.tools.sglang.multinode import RANK_NOT_JOINED
from specops.tools.sglang.status import ServerStatus
from specops.tools.space import FreeableItem, FreeableList, FreeableSet, FreeSpaceResult

from .playbook_budget import HostBudget
from .playbook_configs import (
    ONE_NODE_SHARE,
    Candidate,
    autoregressive_candidates,
    group_candidates,
    rank_for_speculation,
    speculative_candidates,
)
from .playbook_drafters import DrafterResult, drafter_lines
from .playbook_goal import Understood, target_name_for
from .playbook_history import Call, Outcome
from .playbook_level_failure import LevelFailure, incomplete_why, level_failure, reproduced_line, transient_line
from .playbook_plan import Plan
from .playbook_recovery import (
    MAKE_ROOM,
    MAX_DOWNLOAD_RESTARTS,
    RESTART,
    STOP,
    SWITCH_METHOD,
    GiveUp,
    after_launch_failure,
    stalled_twice,
)
from .playbook_search import MAX_CONFIGS_READ, SEARCH_WORD, DrafterCandidate, drafter_candidates
from .playbook_settings import PlaybookSettings
from .playbook_summary import Sweep, compare, comparison_lines, recommend, shape_line, tuning_lines
from .playbook_tuning import Tuning, settings_to_try

Steps = Generator[list[Call], list[Outcome], Any]

DEFAULT_PORT = 30000
MAX_DELETIONS_ASKED = 10  # ask_user takes at most this many deletions
TRANSIENT = (ErrorKind.HOST_UNAVAILABLE, ErrorKind.HUB_UNAVAILABLE)
WAIT = {"timeout_s": 3600.0, "poll_s": 1.0}
HUNG_GRACE_S = 5.0
# A screened layout whose share of the best baseline grows by this much over the low levels is catching up.
CATCHING_UP = 0.1


def _smallest_covering(items: list[FreeableItem], sets: list[FreeableSet], shortfall: int) -> list[str]:
    """The ids of the smallest unit (one item, or a set freed together, by the set's id) that covers the shortfall;
    else every item (the dry run says what they free together)."""
    units = [([i.id], i.size_bytes) for i in items] + [([s.id], s.frees_bytes) for s in sets]
    covering = sorted((u for u in units if u[1] >= shortfall), key=lambda u: (u[1], len(u[0])))
    if covering:
        return covering[0][0]
    return [i.id for i in items]


def _needing_approval(listing: FreeableList, mount: str) -> tuple[list[FreeableSet], list[FreeableItem]]:
    """What on `mount` only the user's approval frees: each cached repo's revisions as one set, and every other
    item not yet approved (what _what_to_free offers and _approvals_to_ask asks about)."""
    repo_sets = [s for s in listing.sets if s.id.startswith("repo:") and s.mount_point == mount and s.approve_with]
    in_sets = {i for s in repo_sets for i in s.ids}
    lone = [
        i
        for i in listing.items
        if i.mount_point == mount and i.safety == "needs_approval" and not i.approved_by and i.id not in in_sets
    ]
    return repo_sets, lone


def _approvals_to_ask(listing: FreeableList, mount: str) -> list[str]:
    """What to ask the user's approval to delete on `mount`, as --allow-delete values: each cached repo's revisions
    together, each directory alone (what the goal needs, its target and the download's directory, the tools class
    never)."""
    repo_sets, lone = _needing_approval(listing, mount)
    asked = [spec for s in repo_sets for spec in s.approve_with]
    asked += [i.approve_with or i.id for i in lone]
    return list(dict.fromkeys(asked))[:MAX_DELETIONS_ASKED]


def _what_to_free(check: DiskCheck, listing: FreeableList, mount: str) -> str:
    """Where else it could go and what could be freed on the user's approval, each with what it frees."""
    other = [
        f"{a.mount.mount_point} ({a.mount.free} free): {a.why or 'not allowed'}"
        for a in check.alternatives
        if not a.allowed or a.ram_backed
    ]
    other += [f"{m.mount_point}: {m.why}" for m in check.set_aside if m.reason != "system"]
    items = [i for i in listing.items if i.mount_point == mount and i.safety == "needs_approval"]
    repo_sets, lone = _needing_approval(listing, mount)
    frees = [
        f"{s.what} frees {s.frees} together (each revision alone: "
        f"{', '.join(i.size for i in items if i.id in s.ids)}; --allow-delete {', '.join(s.approve_with)})"
        for s in repo_sets
    ]
    frees += [f"{i.path} frees {i.size} (--allow-delete {i.approve_with or i.path})" for i in lone]
    text = ""
    if other:
        text += "Other mounts: " + "; ".join(other) + ". "
    if frees:
        text += (
            "On your approval it could free: " + "; ".join(frees) + ". Rerun with the --allow-delete of what may go."
        )
    else:
        text += "Nothing on the mount could be freed: free space on the host, or rerun with a target on another mount."
    return text


@dataclass(frozen=True)
class Target:
    """The target model the drafter is for: a model find_models found, or the model a running server serves."""

    name: str
    path: str
    moe: bool
    size_bytes: int | None = None  # None: not measured (a running server's model)

    missing_on: tuple[str, ...] = ()  # a host group's nodes without it at this path

    @classmethod
    def found(cls, model: ModelOnHost) -> Target:
        return cls(
            model.name,
            model.path,
            moe=bool(model.num_experts),
            size_bytes=model.size_bytes,
            missing_on=tuple(model.missing_on),
        )


class Stop(Exception):
    def __init__(self, status: str, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


NOTHING_CHANGED = "Nothing was downloaded or launched"


class HostNotReady(Stop):
    """The host lacks what the run needs (tools/host_problems.py): one line, said before anything changed on it."""

    def __init__(self, problem: HostProblem) -> None:
        super().__init__("failed", f"{problem.line}. {NOTHING_CHANGED}")
        self.problem = problem


def _upgrade(since: str | None) -> str:
    how = f" (pip install -U 'sglang>={since}')" if since else ""
    return f"upgrade SGLang on the host{how}, then run again. {NOTHING_CHANGED}"


def _refuse_what_sglang_cannot_serve(
    facts: HostFacts, algorithm: SpeculativeAlgorithm | None, drafter: DrafterConfig | None = None
) -> None:
    """Stop before anything changes on the host when its SGLang cannot serve the drafter at all: not the algorithm
    in this release, or not the drafter's architecture. Found from host_facts and the drafter's config on the Hub, it
    would otherwise surface only at the speculative launch, after the download and the baselines."""
    support, version = facts.speculative, facts.sglang_version
    if support is None or algorithm is None or version is None:
        return
    if algorithm is SpeculativeAlgorithm.DFLASH and not support.dflash:
        raise Stop(
            "failed",
            f"SGLang {version} on the host has no DFLASH speculative algorithm"
            f"{f' (first in SGLang {support.dflash_since})' if support.dflash_since else ''}: "
            + _upgrade(support.dflash_since),
        )
    if algorithm.value not in support.algorithms:
        since = first_release_with(algorithm.value)
        raise Stop(
            "failed",
            f"SGLang {version} on the host has no {algorithm.value} speculative algorithm"
            f"{f' (first in SGLang {since})' if since else ''}: " + _upgrade(since),
        )
    architectures = drafter.drafter.architectures if drafter is not None and drafter.drafter is not None else []
    known = family(algorithm) if algorithm is not SpeculativeAlgorithm.STANDALONE else {}
    ours = [a for a in architectures if a in known]
    if not ours:
        return
    served = served_by(for_version(version), algorithm)
    if not set(ours) & set(served):
        since = known[ours[0]]
        raise Stop(
            "failed",
            f"SGLang {version} on the host does not serve {'/'.join(architectures)} under {algorithm.value} (it "
            f"serves {', '.join(served) or 'none'}; SGLang {since} does): " + _upgrade(since),
        )


def choose_layouts(facts: HostFacts, target: Target) -> tuple[list[Candidate], str | None]:
    """The autoregressive layouts to measure, and the answer's line on the deployment shapes (None on one node):
    over the host's GPUs; over a group's nodes, one server across them and, where the model fits one node,
    replicas of it behind SGLang's gateway. The search policies' space and the regret oracle start from them too."""
    link = facts.interconnect.interconnect if facts.interconnect else None
    if facts.group is None or len(facts.group.nodes) < 2:
        return autoregressive_candidates(target.path, facts.gpu_count, moe=target.moe, interconnect=link), None
    nodes = len(facts.group.nodes)
    room = int(facts.gpu_memory_total_bytes * ONE_NODE_SHARE)
    fits = target.size_bytes is not None and target.size_bytes <= room
    if fits:
        shapes = (
            f"deployment shapes: {target.name} ({human_bytes(target.size_bytes or 0)}) fits one node, so "
            f"both are measured: one server across the {nodes} nodes, and a replica per node behind SGLang's "
            "Model Gateway"
        )
    else:
        size = human_bytes(target.size_bytes) if target.size_bytes is not None else "size unknown"
        shapes = (
            f"deployment shapes: one server across the {nodes} nodes only: {target.name} ({size}) does not "
            f"fit one node's {human_bytes(facts.gpu_memory_total_bytes)} of GPU memory with room for a KV "
            f"cache (at most {ONE_NODE_SHARE:.0%} for weights), so no replica fits a node"
        )
    layouts = group_candidates(
        target.path, facts.gpu_count, nodes, moe=target.moe, interconnect=link, fits_one_node=fits
    )
    return layouts, shapes


def _fastest(sweeps: dict[str, Sweep], level: int) -> tuple[str, float] | None:
    """The configuration fastest at `level` and its tok/s; None where none was measured there."""
    here = [(name, sweep[level]) for name, sweep in sweeps.items() if sweep.get(level, 0.0) > 0]
    return max(here, key=lambda item: item[1], default=None)


class Pipeline:
    def __init__(
        self, understood: Understood, settings: PlaybookSettings | None = None, *, can_ask: bool = False
    ) -> None:
        self.u = understood
        self.settings = settings or PlaybookSettings()
        # --ask-once: the run offers ask_user (the same in every request of a run, so every replay takes the same
        # branch); the playbook asks once, before its first change, when the job needs the user's approval.
        self.can_ask = can_ask
        self.asked = False
        self.plan = Plan()
        self.done: list[str] = []  # what happened, in order, for the summary
        self.handled: list[str] = []  # failures met and how each was handled
        self.unresolved: list[str] = []
        self.running: dict[int, RunningServer] = {}  # pid -> each server up now
        self.servers_started = 0
        self.left_running: list[str] = []
        self.port = DEFAULT_PORT
        self.ar: dict[str, Sweep] = {}
        self.spec: dict[str, Sweep] = {}
        self.ar_candidates: dict[str, Candidate] = {}
        self.spec_candidates: dict[str, Candidate] = {}
        self.levels = list(self.settings.levels)
        self.crash_level: int | None = None  # the lowest level where a speculative server died or hung
        self.incomplete: str | None = None  # what the comparison lacks, when a node went away mid-sweep
        self.hung: set[int] = set()  # pids of servers that hung under load: stopped without a long grace
        self.acceptance: AcceptanceResult | None = None
        self.acceptance_tried = False  # measured once: a failed measurement is not repeated on every layout
        self.algorithm: SpeculativeAlgorithm | None = None  # settled by the drafter config
        self.tuned: dict[str, str] = {}  # name of each tuned configuration -> why it was chosen
        self.download: DownloadHandle | None = None  # the current download
        self.download_state: DownloadState | None = None
        self.download_restarts = 0
        self.last_give_up: ErrorKind | None = None  # error kind of the last launch given up on
        # A comparison of drafters: each one's results once measured; the plan item of the one measured now.
        self.drafters: list[DrafterResult] = []
        self.other: str | None = None
        self.budget = HostBudget(understood.host_budget_s)  # the host's time used, and what the budget left out
        self.deploying = False
        self.for_budget = False  # the budget does not fit the whole pipeline: the most telling experiments first

    @property
    def goal(self) -> Goal:
        """The goal being carried out: run() answers cannot_do before any step when there is none."""
        assert self.u.goal is not None, "the pipeline's steps run only for a goal"
        return self.u.goal

    @property
    def _download_handle(self) -> DownloadHandle:
        """The current download's handle: _start_download sets it, or stops the pipeline when it cannot start."""
        assert self.download is not None, "no download was started"
        return self.download

    # -- calling tools ------------------------------------------------------------------------------

    def call(self, tool: str, **args: Any) -> Steps:
        """One tool call; the plan goes with it when it changed."""
        calls = [self.plan.write_call()] if self.plan.dirty else []
        calls.append(Call(tool, args))
        outcomes = yield calls
        for made, out in zip(calls, outcomes, strict=True):
            self.budget.saw(made.tool, made.args, out)
        return outcomes[-1]

    def look(self, tool: str, **args: Any) -> Steps:
        """A read-only call; a host or Hub that stopped answering ends the run with the evidence. (It is not retried
        here: the host layer reconnects and reruns, the Hub client retries, and a third loop on top multiplied them.)"""
        out = yield from self.call(tool, **args)
        if out.kind in TRANSIENT:
            raise Stop(
                "failed",
                f"{tool}: the host or Hub is not answering after its retries: {out.describe()} ({out.remedy})",
            )
        return out

    # -- the run --------------------------------------------------------------------------------------

    def run(self) -> Steps:
        if self.u.cannot_do or self.u.goal is None:
            return FinalAnswer(
                status="cannot_do",
                summary="Cannot do this goal with the playbook: nothing was done on the host",  # unresolved: why
                unresolved=[str(self.u.cannot_do)],
            )
        self._write_plan()
        yield [self.plan.write_call()]  # the plan alone first, as the rules ask: then each step with its update
        status = "completed"
        stopped: Stop | None = None
        try:
            yield from self._pipeline()
        except Stop as stop:
            stopped, status = stop, stop.status
            self.unresolved.append(stop.why)
        yield from self._stop_all()
        yield from self._settle_download()
        self.plan.close(f"not reached: {stopped.why}" if stopped else "not needed for this goal")
        if self.plan.dirty:
            yield [self.plan.write_call()]
        if stopped is None and self.unresolved:
            status = "partial"
        return self._answer(status)

    def _write_plan(self) -> None:
        repo = self.goal.repo_id
        asked = self.goal.algorithm
        spoken = SPOKEN_NAMES[SpeculativeAlgorithm(asked)] if asked else "speculation"
        p = self.plan
        # A few words each, as todowrite asks: the plan is sent again at the end of every request.
        p.add("facts", "Read the host's GPUs, disks, SGLang and servers")
        p.add("target", "Find the target model on the host")
        algorithms = self.goal.compares_algorithms
        if algorithms:
            names = " and a ".join(SPOKEN_NAMES[SpeculativeAlgorithm(a)] for a in algorithms)
            p.add("find", f"Find a {names} drafter for it on the Hub")
        elif self._finds_drafter:
            p.add("find", f"Find a {spoken if asked else 'speculative'} drafter for it on the Hub")
        if repo or self._finds_drafter:
            p.add("drafter", f"Check {repo or 'the drafter'}'s config against the target")
            p.add("disk", "Check the disk; free only what the rule allows")
            p.add("download", f"Download {repo or 'the drafter'}")
        else:
            p.add("drafter", f"Check the target for {spoken}")
        if self._benchmarking:
            downloads = repo or self._finds_drafter
            p.add("baseline", "Benchmark autoregressive layouts" + (" during the download" if downloads else ""))
        p.add("speculative", f"Launch {spoken} where the host's SGLang allows")
        p.add("acceptance", "Measure acceptance length")
        comparing = self.goal.compares_drafters or bool(algorithms)
        if self._benchmarking:
            tunes = self.settings.tune and not comparing
            p.add(
                "spec_bench",
                f"Benchmark {repo or 'the first drafter' if comparing else spoken}"
                + ("; tune its settings" if tunes else ""),
            )
        others = self.goal.drafters[1:] or [
            f"the {SPOKEN_NAMES[SpeculativeAlgorithm(a)]} drafter" for a in algorithms[1:]
        ]
        for i, other in enumerate(others, start=1):
            p.add(f"other{i}", f"Check, download and measure {other} on the same layouts")
        if self._benchmarking:
            compared = "the drafters head to head and each " if comparing else ""
            p.add("compare", f"Compare {compared}with the best baseline per concurrency", "medium")
        if self.u.wants("deploy"):
            p.add("deploy", "Leave the recommended configuration running", "medium")
        p.add("cleanup", "Stop the other servers this run started", "medium")

    @property
    def _finds_drafter(self) -> bool:
        """The goal names no drafter but needs one: the playbook searches the Hub for it."""
        return self.goal.repo_id is None and self.goal.algorithm not in NO_DRAFTER

    @property
    def _benchmarking(self) -> bool:
        return self.u.wants("benchmark", "compare", "deploy")

    @property
    def _asked(self) -> SpeculativeAlgorithm | None:
        """The algorithm the goal names, or the one its drafter's name does (for the early refusal only)."""
        if self.goal.algorithm:
            return SpeculativeAlgorithm(self.goal.algorithm)
        return SpeculativeAlgorithm.DFLASH if "dflash" in (self.goal.repo_id or "").lower() else None

    def _pipeline(self) -> Steps:
        facts, target, config = yield from self._prepare()
        ar_candidates = self._choose_layouts(facts, target)[: self.settings.ar_layouts]
        later: list[Candidate] = []  # baseline layouts left for the end (a budget the whole pipeline overruns)
        if self._benchmarking:
            self.plan.start("baseline")
            later = yield from self._baseline(ar_candidates)
            self.plan.complete("baseline")
        drafter_path, config = yield from self._drafter_ready(target, config)
        # As launched (what recovery changed, e.g. mem_fraction_static, carries over): the low-load and the
        # high-load winners first, then by peak.
        launched = [self.ar_candidates.get(c.name, c) for c in ar_candidates if c not in later]
        ranked = rank_for_speculation(launched, self.ar)
        candidates = self._speculative_candidates(ranked, drafter_path, config, facts)
        if self.goal.compares_drafters:
            yield from self._speculative(candidates)
            yield from self._other_drafters(facts, target, ranked)
        elif self.for_budget:
            yield from self._speculate_for_budget(candidates, config)
            for candidate in later:
                yield from self._measure(candidate, speculative=False, screened=True)
        else:
            yield from self._speculative(candidates)
            if self._benchmarking and self.settings.tune:
                yield from self._tune(config)  # under spec_bench: a few more sweeps, not a step of its own
            if self._benchmarking and self.settings.bracket:
                yield from self._bracket()
        yield from self._conclude()

    def _speculative_candidates(
        self, ranked: list[Candidate], drafter_path: str | None, config: DrafterConfig, facts: HostFacts
    ) -> list[Candidate]:
        """The drafter's algorithm on the best of `ranked` the host's SGLang allows, at its default settings."""
        assert self.algorithm is not None, "the drafter config settles the algorithm"
        return speculative_candidates(
            ranked,
            self.algorithm,
            drafter_path,
            max(self.levels),
            block_size=config.block_size if self.algorithm is SpeculativeAlgorithm.DFLASH else None,
            layouts=self.settings.spec_layouts,
            support=facts.speculative,
        )

    def _baseline(self, ar_candidates: list[Candidate]) -> Steps:
        """The autoregressive layouts, polling the download between them; the layouts left for the end, when the
        budget does not fit the whole pipeline (judged once the first launch is timed: playbook_budget.py)."""
        later: list[Candidate] = []
        for i, candidate in enumerate(ar_candidates):
            if i == 1:
                later = self._order_for_budget(ar_candidates)
            if candidate in later:
                continue
            yield from self._measure(candidate, speculative=False, screened=i > 0)
            if self.download_state == DownloadState.RUNNING:
                yield from self._poll_download()
        return later

    def _order_for_budget(self, ar_candidates: list[Candidate]) -> list[Candidate]:
        """After the first layout: whether the budget fits the whole pipeline; when not, the baseline layouts to
        measure only at the end (all but the one expected best at high load: DP attention, else the next)."""
        spec_layouts = min(self.settings.spec_layouts, len(ar_candidates))
        tunings = spec_layouts + 1 if self.settings.tune else 0  # a high-load setting per layout, one for low load
        whole = self.budget.overruns(
            baseline=len(ar_candidates) - 1,
            speculative=spec_layouts + tunings,
            levels=len(self.levels),
            deploy=self.u.wants("deploy"),
        )
        if whole is None:
            return []
        others = ar_candidates[1:]
        high_load = next((c for c in others if c.config.get("enable_dp_attention")), others[0])
        self.for_budget = True
        later = [c for c in others if c is not high_load]
        self.done.append(
            f"the host-time budget does not fit the whole pipeline (about {duration_words(whole)} more of the host): "
            f"the most telling experiments first ({ar_candidates[0].name} and {high_load.name}, {self._spoken} and "
            "the settings its acceptance picks on them), then "
            + (f"{', '.join(c.name for c in later)} and " if later else "")
            + "the rest with what is left"
        )
        return later

    def _speculate_for_budget(self, candidates: list[Candidate], config: DrafterConfig) -> Steps:
        """Speculation when the budget does not fit the whole pipeline: the first layout at the defaults with the
        acceptance eval; then each other layout once, at the setting its load calls for (`_high_load_on`: the
        high-load setting picked from the acceptance, or the defaults); the low-load settings on the first layout,
        then its high-load one where its top level is high load; then, with what is left, the defaults on the other
        layouts, CUDA graphs off, and the rest of the tuning."""
        tried = yield from self._speculative(candidates, until_one=True)
        first = next(iter(self.spec), None)  # as launched (recovery may have changed it)
        if not self._benchmarking or first is None:
            return
        accept = self.acceptance.overall.token_weighted if self.acceptance else None
        settings = settings_to_try(self.algorithm or SpeculativeAlgorithm.DFLASH, config.sglang_defaults, accept)
        high = [t for t in settings if t.high_load][:1]
        levels = [c for c in self.levels if self.crash_level is None or c < self.crash_level]
        others = [c for c in candidates if c not in tried]
        tune = self.settings.tune
        at_defaults = []  # the other layouts measured at the defaults already
        for base in others:
            if tune and high and self._high_load_on(base, first):
                yield from self._try_setting(base, high[0], levels)
            else:
                at_defaults.append(base)
                yield from self._measure(base, speculative=True)
        if tune:
            on_first = [t for t in settings if not t.high_load]
            on_first += high if self._high_load_on(self.spec_candidates[first], first) else []
            for tuning in on_first:
                yield from self._try_setting(self.spec_candidates[first], tuning, levels)
        yield from self._speculative([c for c in others if c not in at_defaults], required=False)
        yield from self._graphs_off_retry()
        if tune:
            yield from self._tune(config)
        if self.settings.bracket:
            yield from self._bracket()

    def _high_load_on(self, candidate: Candidate, first: str) -> bool:
        """Whether `candidate` runs at high load at the top level: each of its ranks sees the top level divided by
        DP attention's ranks and by its replicas (C=256 on DP8 is 32 a rank); at that load (the nearest level
        measured at or under it), speculation at the defaults on the first layout, `first`, kept less than half
        the gain over the best baseline it had at the lowest level, the verify step's cost having caught up."""
        ranks = (candidate.config.get("dp") or 1) if candidate.config.get("enable_dp_attention") else 1
        per_rank = max(self.levels) / (ranks * (candidate.config.get("replicas") or 1))
        measured = self.spec.get(first, {})
        best_ar = self._best_baseline(measured)
        gains = {c: measured[c] / best_ar[c] - 1.0 for c in measured if best_ar[c] > 0}
        if not gains:
            return False
        lowest = gains[min(gains)]
        at = max((c for c in gains if c <= per_rank), default=min(gains))
        return lowest <= 0.0 or gains[at] < lowest / 2

    def _prepare(self) -> Steps:
        """Everything before the first measurement: the host's facts, the target on it, the drafter's config (found
        on the Hub when the goal names none; it settles the algorithm), room on disk and the drafter's download
        started. Returns (facts, target, the drafter's config)."""
        self.plan.start("facts")
        facts = yield from self._facts()
        self.plan.start("target")
        target = yield from self._target(facts)
        if self._finds_drafter:
            self.plan.start("find")
            config = yield from self._find_drafters(target)  # each found drafter's config is read while choosing it
            self.plan.start("drafter")
        else:
            self.plan.start("drafter")
            config = yield from self._drafter_config(
                {"repo_id": self.goal.repo_id} if self.goal.repo_id else None, target
            )
        repo = self.goal.repo_id
        _refuse_what_sglang_cannot_serve(facts, self.algorithm, config)
        if repo:
            self.plan.start("disk")
            target_dir = yield from self._make_room(f"~/models/{repo.split('/')[-1]}")
            self.plan.start("download")
            yield from self._start_download(target_dir, self._download_method(facts))
        else:
            self.plan.complete("drafter")
        return facts, target, config

    def _drafter_ready(self, target: Target, config: DrafterConfig) -> Steps:
        """The drafter on the host, for a speculative launch: the download waited for and its config read there.
        Returns (its path, or None when the algorithm needs no drafter download; its config)."""
        drafter_path: str | None = None
        if self.goal.repo_id:
            self.plan.start("download")
            drafter_path = yield from self._finish_download()
            self._plan_start("speculative")
            config = yield from self._drafter_config({"path": drafter_path}, target)
        else:
            self._plan_start("speculative")
        return drafter_path, config

    def _conclude(self) -> Steps:
        """After the measurements: the comparison closed, the recommended configuration deployed when asked."""
        if self._benchmarking:
            self.plan.start("compare")
            self.plan.complete("compare")
        if self.u.wants("deploy"):
            self.plan.start("deploy")
            yield from self._deploy()
        self.plan.start("cleanup")

    # -- steps ----------------------------------------------------------------------------------------

    def _facts(self) -> Steps:
        out = yield from self.look("host_facts")
        if not out.ok:
            raise Stop("failed", f"could not read the host: {out.describe()}")
        facts = out.value(HostFacts)
        for missing in (gpu_problem(facts), sglang_problem(facts)):
            if missing is not None:
                raise HostNotReady(missing)
        if facts.group is not None and facts.group.problems:
            # One server over the nodes needs the same GPUs and the same SGLang on each: found before anything changes.
            raise Stop(
                "failed",
                f"the host group's nodes disagree: {'; '.join(facts.group.problems)}. Make them agree (the same "
                "SGLang release and GPUs on every node), then run again. Nothing was downloaded or launched",
            )
        link = facts.interconnect.interconnect if facts.interconnect else "unknown"
        nodes = f"{len(facts.group.nodes)} nodes of " if facts.group else ""
        self.done.append(f"host: {nodes}{facts.gpu_count}x {facts.gpu_model} ({link}), SGLang {facts.sglang_version}")
        _refuse_what_sglang_cannot_serve(facts, self._asked)
        # The drafter is searched for and downloaded on the host's Hub.
        offline = hub_problem(facts) if self.goal.repo_id or self._finds_drafter else None
        if offline is not None:
            raise HostNotReady(offline)
        return facts

    def _choose_layouts(self, facts: HostFacts, target: Target) -> list[Candidate]:
        layouts, shapes = choose_layouts(facts, target)
        self.done += [shapes] if shapes else []
        return layouts

    def _target(self, facts: HostFacts) -> Steps:
        repo = self.goal.repo_id
        named = self.goal.target
        wanted = named.split("/")[-1] if named else target_name_for(repo) if repo else None
        unread: str | None = None  # why the drafter's own config could not name its target
        if wanted is None and repo:
            # The drafter's name names no target: its config or model card may (trained_for).
            out = yield from self.look("read_drafter_config", drafter={"repo_id": repo}, **self._algorithm_arg)
            if out.ok and (trained := out.value(DrafterConfig).target_model):
                wanted = trained.split("/")[-1]
            elif not out.ok:
                unread = f"{out.describe()} — {out.remedy}"
        out = yield from self.look("find_models")
        # Drafters on the host are not targets: every architecture a speculative worker loads as a drafter.
        models = [m for m in out.value(ModelsOnHost).models if algorithm_of(m.architectures) is None] if out.ok else []
        if not out.ok:
            self.handled.append(f"find_models: {out.describe()}; looked at running servers instead")

        def called(model: ModelOnHost, name: str) -> bool:
            return name.lower() in (model.name.lower(), (model.repo_id or "").split("/")[-1].lower())

        chosen: Target | None = None
        if wanted:
            found = min((m for m in models if called(m, wanted)), key=lambda m: m.source != "directory", default=None)
            chosen = Target.found(found) if found else None
        if chosen is None and named is None:
            served = [s.model_path for s in facts.serving if s.model_path]
            in_use = next((m for m in models if m.path in served), None)
            if in_use is not None:
                chosen = Target.found(in_use)
            elif served:
                chosen = Target(posixpath.basename(served[0]), served[0], moe=False)
        if chosen is None and wanted is None and repo:
            itself = next((m for m in models if called(m, repo.split("/")[-1])), None)
            raise Stop(
                "failed",
                (unread or f"{repo} names no target model: not in its name, config or model card")
                + (f"; {repo} is itself a model on the host ({itself.path})" if itself else "")
                + ". Name the drafter and its target in the goal ('ORG/DRAFTER for ORG/TARGET')",
            )
        if chosen is None:
            have = ", ".join(f"{m.name} ({m.path})" for m in models) or "none"
            raise Stop(
                "failed",
                f"no target model for {self.goal.subject} on the host"
                f"{f' (looked for {wanted})' if wanted else ''}; models there: {have}. "
                "Download the target model first, or name its path in the goal",
            )
        if chosen.missing_on:
            # Every node reads the target at the same path (a server across the nodes, a replica on each).
            raise Stop(
                "failed",
                f"the target {chosen.name} is at {chosen.path} on rank 0 but not on {', '.join(chosen.missing_on)}: "
                "put it at the same path on every node (or on a filesystem they share), then run again. Nothing "
                "was downloaded or launched",
            )
        self.done.append(f"target: {chosen.name} at {chosen.path}")
        return chosen

    @property
    def _algorithm_arg(self) -> dict[str, str]:
        return {"algorithm": self.goal.algorithm} if self.goal.algorithm else {}

    def _drafter_config(self, drafter: dict[str, Any] | None, target: Target) -> Steps:
        """The drafter's config checked against the target (the target's own, for MTP heads and n-gram); it settles
        the algorithm."""
        args: dict[str, Any] = {"target": {"path": target.path}, **self._algorithm_arg}
        if drafter is not None:
            args["drafter"] = drafter
        out = yield from self.look("read_drafter_config", **args)
        where = "downloaded" if drafter and "path" in drafter else "on the Hub" if drafter else "(the target's own)"
        if not out.ok:
            raise Stop(
                "failed",
                f"the drafter {where} cannot be used with {target.name}: {out.describe()} — {out.remedy}",
            )
        config = out.value(DrafterConfig)
        self.algorithm = config.algorithm
        self.done.append(
            f"drafter config ({'local' if drafter and 'path' in drafter else 'Hub' if drafter else 'target'}): {config.summary}"
        )
        return config

    def _find_drafters(self, target: Target) -> Steps:
        """The drafter the goal asks for, or one of each algorithm it asks to compare, found on the Hub; the run
        carries on with them as if the goal had named them. The first one's config, read."""
        found: list[tuple[str, DrafterConfig]] = []
        for asked in self.goal.compares_algorithms or (self.goal.algorithm,):
            found.append((yield from self._find_drafter(target, asked)))
        repos = tuple(repo for repo, _ in found)
        # Found drafters' configs settle their algorithms (a comparison's first word names only the first).
        update: dict[str, Any] = {"repo_id": repos[0], "drafters": repos}
        if len(repos) > 1:
            update["algorithm"] = None
        self.u = Understood(goal=self.goal.model_copy(update=update))
        self.algorithm = found[0][1].algorithm
        return found[0][1]

    def _find_drafter(self, target: Target, asked: str | None) -> Steps:
        """Search the Hub for a drafter for `target` (of algorithm `asked`, when given) and read the likeliest
        candidates' configs until one fits: its repo id and config."""
        author = self.goal.author
        searches: list[dict[str, Any]] = [{"search": target.name}]
        if asked in SEARCH_WORD:
            searches.append({"search": SEARCH_WORD[asked]})
        if author:  # the organisation the goal names first; the whole Hub only when it lists none
            searches.insert(0, {"search": target.name, "author": author})
        listed: list[HubModel] = []
        candidates: list[DrafterCandidate] = []
        done: list[dict[str, Any]] = []
        for search in searches:
            out = yield from self.look("search_hub", **search, sort="downloads", limit=50)
            if not out.ok:
                raise Stop("failed", f"could not search the Hub: {out.describe()} — {out.remedy}")
            listed += out.value(HubSearch).models
            done.append(search)
            candidates = drafter_candidates(listed, target.name, asked)
            if author and search.get("author"):
                if candidates:
                    break
                self.handled.append(f"the Hub lists no drafter for {target.name} by {author}: searched the whole Hub")
        distinct = len({m.repo_id for m in listed})  # the searches overlap
        what = f"{SPOKEN_NAMES[SpeculativeAlgorithm(asked)]} drafter" if asked else "drafter"
        searched = " and ".join(repr(s["search"]) + (f" by {s['author']}" if s.get("author") else "") for s in done)
        passed: list[str] = []
        for candidate in candidates[:MAX_CONFIGS_READ]:
            args: dict[str, Any] = {"drafter": {"repo_id": candidate.repo_id}, "target": {"path": target.path}}
            out = yield from self.look("read_drafter_config", **args, **({"algorithm": asked} if asked else {}))
            if not out.ok:
                passed.append(f"{candidate.repo_id} ({out.describe()})")
                continue
            config = out.value(DrafterConfig)
            self.done.append(
                f"drafter found on the Hub: {candidate.repo_id}, the first of {len(candidates)} {what} candidates "
                f"for {target.name} in a search for {searched} ({distinct - 1} other repos listed): "
                f"{candidate.why(asked)}; its config confirms it: {config.summary}"
                + (f"; passed over: {'; '.join(passed)}" if passed else "")
            )
            return candidate.repo_id, config
        raise Stop(
            "failed",
            f"found no {what} for {target.name} on the Hub: searched {searched}, "
            f"{distinct} repos listed, {len(candidates)} claimed to be one"
            + (f"; their configs ruled out {'; '.join(passed)}" if passed else "")
            + ". Name the drafter in the goal (ORG/NAME). Nothing was downloaded or launched",
        )

    def _other_drafters(self, facts: HostFacts, target: Target, ranked: list[Candidate]) -> Steps:
        """A comparison: each further drafter the goal names, checked against the target, downloaded and measured
        on the layouts and levels the first was, at SGLang's defaults. One that cannot be measured is said so and
        the comparison goes on with the others."""
        method = self._download_method(facts)
        self._set_aside()
        for i, repo in enumerate(self.goal.drafters[1:], start=1):
            self.other = f"other{i}"
            self.plan.start(self.other)
            self.u = Understood(goal=self.goal.model_copy(update={"repo_id": repo}))
            self.algorithm, self.acceptance, self.acceptance_tried, self.crash_level = None, None, False, None
            self.download, self.download_state, self.download_restarts = None, None, 0
            try:
                config = yield from self._drafter_config({"repo_id": repo}, target)
                _refuse_what_sglang_cannot_serve(facts, self.algorithm, config)
                target_dir = yield from self._make_room(f"~/models/{repo.split('/')[-1]}")
                yield from self._start_download(target_dir, method)
                path = yield from self._finish_download()
                config = yield from self._drafter_config({"path": path}, target)
                yield from self._speculative(self._speculative_candidates(ranked, path, config, facts))
                self.plan.complete(self.other)
            except Stop as stop:
                yield from self._settle_download()
                self.unresolved.append(f"{repo} was not measured: {stop.why}")
                self.plan.cancel(self.other, stop.why)
            self._set_aside()
        self.other = None
        self.u = Understood(goal=self.goal.model_copy(update={"repo_id": self.goal.drafters[0]}))
        # Every drafter's configurations side by side, each named with its drafter: the answer and the deployment
        # choose among them all.
        self.spec = {r.tagged(n): sweep for r in self.drafters for n, sweep in r.sweeps.items()}
        self.spec_candidates = {r.tagged(n): c for r in self.drafters for n, c in r.candidates.items()}
        self.done.append(
            f"compared {', '.join(r.repo_id for r in self.drafters)} on the same layouts and levels, each at "
            "SGLang's default settings (tuning one and not the other would compare the tuning)"
        )

    def _set_aside(self) -> None:
        """Keep the results of the drafter just measured under its repo id, and start the next one afresh."""
        self.drafters.append(
            DrafterResult(
                repo_id=self.goal.repo_id or "",
                spoken=self._spoken,
                sweeps=dict(self.spec),
                candidates=dict(self.spec_candidates),
                acceptance=self.acceptance,
            )
        )
        self.spec, self.spec_candidates = {}, {}

    @property
    def _repo(self) -> str:
        """The drafter repo being downloaded: the disk and download steps run only for a goal that names one."""
        assert self.goal.repo_id is not None, "only a goal with a drafter repo downloads"
        return self.goal.repo_id

    def _make_room(self, target_dir: str) -> Steps:
        """The directory to download into, after making sure it fits: another mount (not a RAM-backed tmpfs), or
        space freed by the deletion rule (specops' own, then what the user approved); else a stop that names what
        to free, what each frees, and the --allow-delete that would allow it."""
        repo = self._repo
        check = yield from self.look("check_disk", repo_id=repo, target=target_dir)
        if not check.ok:
            raise Stop("failed", f"could not size the download: {check.describe()} — {check.remedy}")
        first = check.value(DiskCheck)
        if first.verdict == "fits":
            return target_dir
        self.handled.append(f"disk: {first.summary}")
        allowed = [a for a in first.alternatives if a.allowed and not a.ram_backed]
        if allowed:
            elsewhere = allowed[0].mount.mount_point
            other = allowed[0].target or f"{elsewhere.rstrip('/')}/models/{repo.split('/')[-1]}"
            again = yield from self.look("check_disk", repo_id=repo, target=other)
            if again.ok and again.value(DiskCheck).verdict == "fits":
                self.handled[-1] += f"; downloading to {other} on {elsewhere} instead"
                return other
        listing = yield from self.look("list_freeable")
        if not listing.ok:
            raise Stop(
                "failed", f"the download does not fit and freeable space could not be listed: {listing.describe()}"
            )
        freeable = listing.value(FreeableList)
        mount, shortfall = first.mount.mount_point, first.shortfall_bytes
        if (yield from self._free_what_may_go(freeable, mount, target_dir, shortfall)):
            return target_dir
        if self.can_ask and not self.asked:
            # The one round of questions: each deletion that would help, with what it frees (the tool says).
            ask = _approvals_to_ask(freeable, mount)
            if ask:
                self.asked = True
                out = yield from self.call("ask_user", delete=ask)
                approved_now = out.ok and any(a.approved for a in out.value(Answers).deletions.values())
                if not out.ok:
                    self.handled.append(f"asking the user: {out.describe()}")
                elif approved_now:
                    listing = yield from self.look("list_freeable")
                    if listing.ok:
                        freeable = listing.value(FreeableList)
                        if (yield from self._free_what_may_go(freeable, mount, target_dir, shortfall)):
                            return target_dir
                else:
                    self.handled[-1] += "; asked to delete " + ", ".join(ask) + ": not approved"
        approved = [
            i
            for i in freeable.items
            if i.mount_point == mount and i.safety == "needs_approval" and i.approved_by is not None
        ]
        may = "specops' own downloads" + (" and what you approved" if approved else "")
        raise Stop(
            "failed",
            f"{repo} needs {first.needed} on {mount} ({first.free} free), and what may be "
            f"deleted without more approval ({may}) does not free enough. Nothing was deleted. "
            + _what_to_free(first, freeable, mount),
        )

    def _free_what_may_go(self, freeable: FreeableList, mount: str, target_dir: str, shortfall: int) -> Steps:
        """Free `shortfall` bytes on `mount` by the deletion rule: specops' own first, what the user approved only
        when that is not enough. True when the download fits now; False when what may go does not free enough
        (nothing deleted); a stop when freeing failed or did not make room."""
        repo = self._repo
        # Never the download's own directory: a partial download there is resumed, not freed.
        here = [
            i for i in freeable.items if i.mount_point == mount and not i.path.endswith(target_dir.removeprefix("~"))
        ]
        safe = [i for i in here if i.safety == "safe"]
        approved = [i for i in here if i.safety == "needs_approval" and i.approved_by]
        sets = [s for s in freeable.sets if s.mount_point == mount and s.approved]
        for pool in [safe, safe + approved] if approved else [safe]:
            ids = _smallest_covering(pool, [s for s in sets if set(s.ids) <= {i.id for i in pool}], shortfall)
            if not ids:
                continue
            dry = yield from self.call("free_space", ids=ids, dry_run=True)
            if not (dry.ok and dry.value(FreeSpaceResult).expected_freed_bytes >= shortfall):
                continue
            out = yield from self.call("free_space", ids=ids, dry_run=False)
            if not out.ok:
                raise Stop("failed", f"freeing space failed: {out.describe()}")
            freed = out.value(FreeSpaceResult)
            on = sorted({i.approved_by for i in freed.deleted if i.approved_by})
            self.handled[-1] += (
                f"; {freed.summary} ("
                + (f"on {'; '.join(on)}" if on else "only what specops created")
                + f": {', '.join(ids)})"
            )
            again = yield from self.look("check_disk", repo_id=repo, target=target_dir)
            if again.ok and again.value(DiskCheck).verdict == "fits":
                return True
            raise Stop(
                "failed",
                f"{freed.summary}, and {repo} still does not fit: "
                f"{again.value(DiskCheck).summary if again.ok else again.describe()}",
            )
        return False

    def _download_method(self, facts: HostFacts) -> DownloadMethod:
        """`hf download`, unless host_facts found that it does not work: then the library, without asking."""
        hf = next((c for c in facts.clis if c.name == "hf"), None)
        if hf is None or hf.works:
            return DownloadMethod.HF
        self.handled.append(
            f"the hf CLI does not work on the host ({hf.detail}): downloading with the huggingface_hub library instead"
        )
        return DownloadMethod.LIBRARY

    def _start_download(self, target_dir: str, method: DownloadMethod) -> Steps:
        out = yield from self.call(
            "start_download", repo_id=self._repo, target_dir=target_dir, method=method, retry_backoff_s=10.0
        )
        if not out.ok:
            raise Stop("failed", f"the download could not start: {out.describe()} — {out.remedy}")
        self.download, self.download_state = out.value(DownloadHandle), DownloadState.RUNNING

    def _poll_download(self) -> Steps:
        out = yield from self.look("wait_download", download=self._download_handle.id, timeout_s=0)
        if out.ok and (status := out.value(WaitDownloadResult).status).state != DownloadState.RUNNING:
            yield from self._download_ended(status)

    def _download_ended(self, status: DownloadStatus) -> Steps:
        """React to a finished or failed download: switch method, make room, restart, or stop."""
        if status.state == DownloadState.FINISHED:
            self.download_state = DownloadState.FINISHED
            return
        failure = status.failure
        cause = failure.cause if failure else DownloadCause.UNKNOWN
        what = failure.what if failure else f"the download {status.state} without a recognised cause"
        self.download_state = DownloadState.FAILED
        handle = self._download_handle
        if cause in STOP:
            raise Stop("failed", f"{what} — {failure.remedy if failure else 'read its log'}")
        if self.download_restarts >= MAX_DOWNLOAD_RESTARTS:
            raise Stop("failed", f"the download failed {self.download_restarts + 1} times, last: {what}")
        self.download_restarts += 1
        method, target_dir = handle.method, handle.target_dir
        if cause == SWITCH_METHOD:
            method = DownloadMethod.LIBRARY if method != DownloadMethod.LIBRARY else DownloadMethod.HF
            self.handled.append(f"download: {what}; restarted with the {method} method")
        elif cause == MAKE_ROOM:
            self.handled.append(f"download: {what}; made room again")
            target_dir = yield from self._make_room(target_dir)  # room here, or another mount
        elif cause in RESTART:
            self.handled.append(f"download: {what}; restarted (complete files are kept)")
        yield from self._start_download(target_dir, method)

    def _settle_download(self) -> Steps:
        """A run that stops while its download runs lets it finish (waited on as ever): nothing is left running,
        and the next run finds the drafter on disk. One that cannot be followed is said to go on."""
        if self.download is None or self.download_state != DownloadState.RUNNING:
            return
        try:
            yield from self._finish_download()
        except Stop as stop:
            self.left_running.append(
                f"the download of {self._repo} into {self.download.target_dir} ({self.download.id}) may still "
                f"be running on the host: {stop.why}"
            )

    def _finish_download(self) -> Steps:
        waits = 0
        while self.download_state == DownloadState.RUNNING:
            waits += 1
            out = yield from self.look("wait_download", download=self._download_handle.id, **WAIT)
            if not out.ok:
                raise Stop("failed", f"could not follow the download: {out.describe()}")
            waited = out.value(WaitDownloadResult)
            if waited.timed_out:
                if waits >= 2:
                    raise Stop(
                        "partial",
                        f"the download is still running after {waits} waits: {waited.status.progress_human}",
                    )
                continue
            yield from self._download_ended(waited.status)
        if self.other is None:
            self.plan.complete("download")
        handle = self._download_handle
        self.done.append(f"downloaded {self._repo} to {handle.target_dir} ({handle.expected_human})")
        return handle.target_dir

    # -- servers --------------------------------------------------------------------------------------

    def _launch(self, candidate: Candidate) -> Steps:
        """Launch with the recovery rules; the RunningServer, or None when it would not come up."""
        if "port" not in candidate.config:
            candidate = candidate.with_(port=self.port)
        tried: list[Candidate] = []
        while True:
            tried.append(candidate)
            out = yield from self.call("launch_server", config=candidate.launch_args)
            if out.ok:
                server = out.value(RunningServer)
                self.running[server.pid] = server
                self.servers_started += 1
                self.port = candidate.config["port"]
                return server, candidate
            if out.kind == ErrorKind.HOST_UNAVAILABLE:
                raise Stop("failed", f"the host dropped while launching {candidate.name}: {out.describe()}")
            if out.kind == ErrorKind.BUDGET_SPENT:  # the loop's own refusal: nothing more is launched
                self.budget.leave_out(candidate.name, None)
                self.last_give_up = out.kind
                return None, candidate
            if out.details.get("cause") == RANK_NOT_JOINED:
                # The node, not the configuration: every other launch over the nodes would wait for it the same way.
                raise Stop(
                    "failed",
                    f"launch {candidate.name}: {out.describe()} — {out.remedy}. No other configuration was launched: "
                    "each would wait for the same node",
                )
            rule = after_launch_failure(candidate, out, tried)
            if isinstance(rule, GiveUp) and out.details.get("cause") == "stalled":
                raise Stop("partial" if self.ar else "failed", stalled_twice(candidate.name, out.details))
            if isinstance(rule, GiveUp):
                self.last_give_up = out.kind
                self.handled.append(f"launch {candidate.name}: {rule.reason}; moved on")
                return None, candidate
            self.handled.append(f"launch {candidate.name}: {out.describe()[:300]}; retried with {rule.change}")
            candidate = rule.candidate

    def _stop(self, server: RunningServer) -> Steps:
        # A hung server ignores SIGTERM (it sits in a collective): kill it after a short grace, not the default 30 s.
        grace = {"grace_s": HUNG_GRACE_S} if server.pid in self.hung else {}
        out = yield from self.call("stop_server", server=server.id, **grace)
        self.running.pop(server.pid, None)
        if not out.ok and out.kind != ErrorKind.SERVER_NOT_OURS:
            self.unresolved.append(f"stopping the server on port {server.port}: {out.describe()}")

    def _stop_all(self) -> Steps:
        for server in list(self.running.values()):
            if any(f"pid {server.pid}" in left for left in self.left_running):
                continue
            yield from self._stop(server)

    def _benchmark(self, server: RunningServer, name: str, levels: list[int]) -> Steps:
        """The sweep's valid levels, and the failure at the lowest level the server died or hung in (or None)."""
        out = yield from self.call("benchmark", port=server.port, levels=levels, **self.settings.bench_args)
        if not out.ok:
            self.handled.append(f"benchmark {name}: {out.describe()}")
            return {}, None
        # A level counts only when tokens streamed and no request failed: a level where the server died (failures)
        # or hung (not one token within the window) says nothing about its throughput. Requests still running when
        # a timed level ends are cut, not failed (tools/benchmark/stream_client.py): their tokens count.
        # (A server that hangs mid-level may have streamed tokens before it hung, none in the steady window: 0 tok/s.)
        measured = out.value(BenchmarkResult).levels
        streamed = [lv for lv in measured if lv.total_output_tokens > 0 and lv.output_tok_s > 0]
        sweep = {lv.concurrency: lv.output_tok_s for lv in streamed if lv.requests_failed == 0}
        failed = [lv.concurrency for lv in measured if lv.requests_failed > 0]
        hung = [lv.concurrency for lv in measured if lv not in streamed and not lv.requests_failed]
        if not failed and not hung:
            stalled = [lv.concurrency for lv in streamed if lv.stalled and lv.concurrency in sweep]
            if stalled:
                sweep.update((yield from self._remeasure_stalled(server, name, stalled)))
            return sweep, None
        level = min(failed + hung)
        status = yield from self.look("server_status", server=server.id)
        down = status.ok and not status.value(ServerStatus).up
        if level in failed and not down:
            self.handled.append(f"benchmark {name}: requests failed at C={level}")  # the server is fine: not a crash
            return sweep, None
        failure = level_failure(measured, failed, hung, down)
        if not failure.down:
            self.hung.add(server.pid)
        return {c: tok_s for c, tok_s in sweep.items() if c < failure.level}, failure

    def _remeasure_stalled(self, server: RunningServer, name: str, levels: list[int]) -> Steps:
        """Levels that stalled inside their window (LevelResult.stalled) measured once more: the figures of those
        that held still this time. The report leaves the stalled sweep out where another one held (rows.py)."""
        said = ", ".join(f"C={c}" for c in levels)
        self.handled.append(f"benchmark {name}: the throughput stalled inside {said}; measured again")
        out = yield from self.call("benchmark", port=server.port, levels=levels, **self.settings.bench_args)
        if not out.ok:
            return {}
        again = out.value(BenchmarkResult).levels
        held = {
            lv.concurrency: lv.output_tok_s for lv in again if lv.valid and not lv.stalled and not lv.requests_failed
        }
        return {c: tok_s for c, tok_s in held.items() if tok_s > 0}

    def _best_baseline(self, levels: Iterable[int]) -> dict[int, float]:
        """The best autoregressive tok/s measured so far at each level (0.0 where none was)."""
        return {c: max((s[c] for s in self.ar.values() if c in s), default=0.0) for c in levels}

    def _far_behind(self, sweep: Sweep) -> str | None:
        """Why a baseline layout is not worth its high levels, or None: under screen_below of the best baseline at
        every level measured so far and not catching up (as PP8 is on the seed host). A layout whose share grows
        with the load (DP attention: slow at C=1, often the best peak) is measured on; one level shows no trend."""
        share = self.settings.screen_below
        best = self._best_baseline(sweep)
        if not share or len(sweep) < 2 or not all(best.values()):
            return None
        shares = [sweep[c] / best[c] for c in sorted(sweep)]
        if max(shares) >= share or shares[-1] - shares[0] >= CATCHING_UP:
            return None
        return ", ".join(f"{sweep[c]:.0f} vs {best[c]:.0f} tok/s at C={c}" for c in sorted(sweep))

    def _sweep(self, server: RunningServer, name: str, levels: list[int], *, screened: bool) -> Steps:
        """The layout's sweep and the failure it met (or None); a screened one stops after the lower half of the
        levels when it is far behind."""
        low, high = (levels[: (len(levels) + 1) // 2], levels[(len(levels) + 1) // 2 :]) if screened else (levels, [])
        sweep, failure = yield from self._benchmark(server, name, low)
        if high and sweep and len(sweep) == len(low) and failure is None:
            behind = self._far_behind(sweep)
            if behind is None:
                more, failure = yield from self._benchmark(server, name, high)
                sweep = {**sweep, **more}
            else:
                self.done.append(
                    f"{name} not measured past C={low[-1]}: under {self.settings.screen_below:.0%} of "
                    f"the best baseline at every level below and not catching up ({behind})"
                )
        return sweep, failure

    def _measure_again(self, candidate: Candidate, name: str, first: LevelFailure, levels: list[int]) -> Steps:
        """After a level failed (`first`): the same configuration on a fresh server, from that level. Its sweep
        when the failure does not come back (transient); else the levels below where it failed again, and the
        conclusion drawn (playbook_level_failure.py)."""
        again = [c for c in levels if c >= first.level]
        try:
            server, _ = yield from self._launch(candidate)
        except Stop as stop:
            if first.node is None:
                raise
            raise self._incomplete(name, first, stop.why) from None
        if server is None:
            if first.node is not None:
                raise self._incomplete(name, first, "a fresh server did not come up")
            self.handled.append(f"benchmark {name}: {first.words}; a fresh server did not come up to measure it again")
            self.crash_level = min(first.level, self.crash_level or first.level)
            return {}
        sweep, failure = yield from self._benchmark(server, name, again)
        yield from self._stop(server)
        if failure is None:
            self.handled.append(transient_line(name, first))
            return sweep
        if first.node is not None or failure.node is not None:
            raise self._incomplete(name, failure if failure.node else first, "again on a fresh server")
        self.handled.append(reproduced_line(name, first, failure))
        self.crash_level = min(failure.level, self.crash_level or failure.level)
        return sweep

    def _incomplete(self, name: str, failure: LevelFailure, after: str) -> Stop:
        """The stop when a node went away: the comparison lacks `name` from the failed level up."""
        self.incomplete = f"{name} has no figures from C={failure.level} up"
        return Stop("partial", incomplete_why(name, failure, self._measured(name), after))

    def _measured(self, name: str) -> list[int]:
        return sorted({**self.ar.get(name, {}), **self.spec.get(name, {})})

    def _measure(
        self,
        candidate: Candidate,
        *,
        speculative: bool,
        acceptance: bool = False,
        levels: list[int] | None = None,
        screened: bool = False,
    ) -> Steps:
        if acceptance and self._acceptance_left_out(candidate, levels):
            acceptance = False
        if not self._fits(candidate, speculative=speculative, acceptance=acceptance, levels=levels):
            return None
        server, launched = yield from self._launch(candidate)
        if server is None:
            return None
        name = self._config_name(server, launched)
        if acceptance:
            self.acceptance_tried = True
            self._plan_start("acceptance")
            out = yield from self.call("acceptance", port=server.port, **self.settings.acceptance_args)
            if out.ok:
                self.acceptance = out.value(AcceptanceResult)
                self.plan.complete("acceptance")
                # A standard dataset the host could not fetch was measured on a shipped set instead: say so.
                self.handled += [f"acceptance: {note}" for note in self.acceptance.notes if "shipped" in note]
            else:
                self.handled.append(f"acceptance on {name}: {out.describe()}")
            self._plan_start("spec_bench" if self._benchmarking else "speculative")
        if self._benchmarking:
            levels = levels or self.levels
            levels = [c for c in levels if self.crash_level is None or c < self.crash_level] if speculative else levels
            sweep, failure = (yield from self._sweep(server, name, levels, screened=screened)) if levels else ({}, None)
            if failure is not None:
                yield from self._stop(server)
                self._keep(name, launched, sweep, speculative=speculative)
                sweep = yield from self._measure_again(launched, name, failure, levels)
                self._keep(name, launched, sweep, speculative=speculative)
                return launched
            self._keep(name, launched, sweep, speculative=speculative)
        yield from self._stop(server)
        return launched

    def _fits(self, candidate: Candidate, *, speculative: bool, acceptance: bool, levels: list[int] | None) -> bool:
        """Whether measuring `candidate` fits the host-time budget with room kept for what is worth more after it
        (playbook_budget.py): the first speculative measurement while none is made, the deploy's relaunch; when it
        does not, it is left out and said."""
        if self.budget.budget_s is None:
            return True
        count = len(levels or self.levels) if self._benchmarking else 0
        cost = self.budget.cost_s(speculative=speculative, levels=count, acceptance=acceptance)
        reserve, kept_for = self._reserve(speculative)
        if self.budget.fits(cost, reserve):
            return True
        some = f" at C={', '.join(map(str, levels))}" if levels and levels != self.levels else ""
        self.budget.leave_out(candidate.name, cost, reserve, " and ".join(kept_for), at=some)
        return False

    def _acceptance_left_out(self, candidate: Candidate, levels: list[int] | None) -> bool:
        """Whether the budget holds `candidate`'s speculative measurement only without its acceptance eval: then the
        eval is left out (and said), and the sweep's own per-level acceptance is what the run has of it."""
        if self.budget.budget_s is None:
            return False
        count = len(levels or self.levels) if self._benchmarking else 0
        with_eval = self.budget.cost_s(speculative=True, levels=count, acceptance=True)
        without = self.budget.cost_s(speculative=True, levels=count)
        reserve, kept_for = self._reserve(True)
        if with_eval is None or without is None or self.budget.fits(with_eval, reserve):
            return False
        if not self.budget.fits(without, reserve):
            return False  # left out whole (_fits says so)
        self.budget.leave_out(
            f"the acceptance eval on {candidate.name}", with_eval - without, reserve, " and ".join(kept_for)
        )
        return True

    def _reserve(self, speculative: bool) -> tuple[float, list[str]]:
        """The host seconds kept for what is worth more than the next measurement, and what each is kept for: the
        first speculative measurement (with acceptance) while none is made, and the deploy's relaunch."""
        reserve, kept_for = 0.0, []
        reserve_deploy, kept_deploy = self._deploy_reserve()
        if not speculative and not self.spec and not self.spec_candidates:
            # Room is kept only for a measurement that fits (with its acceptance eval, else without it, as
            # _acceptance_left_out measures it): one the budget can no longer hold keeps none from the baseline
            # layouts that still fit.
            for acceptance in (True, False) if not self.acceptance_tried else (False,):
                first = self.budget.cost_s(speculative=True, levels=len(self.levels), acceptance=acceptance)
                if self.budget.fits(first, reserve_deploy):
                    reserve += first or 0.0
                    kept_for.append(f"the first {self._spoken} measurement")
                    break
        return reserve + reserve_deploy, kept_for + kept_deploy

    def _deploy_reserve(self) -> tuple[float, list[str]]:
        if self.u.wants("deploy") and not self.deploying:
            return self.budget.launch_s(speculative=True) or 0.0, ["the deploy's relaunch"]
        return 0.0, []

    def _config_name(self, server: RunningServer, launched: Candidate) -> str:
        """The name a measured configuration's figures are kept under (a search names them as the report does)."""
        return launched.name

    def _plan_start(self, item: str) -> None:
        """Move the plan on, except while a comparison measures a further drafter: that is one item of its own."""
        if self.other is None:
            self.plan.start(item)

    def _keep(self, name: str, launched: Candidate, sweep: Sweep, *, speculative: bool) -> None:
        if sweep:  # a configuration measured again (at levels bracketing the crossover) keeps its first levels
            sweeps = self.spec if speculative else self.ar
            sweeps[name] = {**sweeps.get(name, {}), **sweep}
            (self.spec_candidates if speculative else self.ar_candidates)[name] = launched

    @property
    def _spoken(self) -> str:
        return SPOKEN_NAMES[self.algorithm] if self.algorithm else "speculation"

    @property
    def _spoken_overall(self) -> str:
        """What the speculative side is called in the answer: several drafters' configurations are 'speculation'."""
        return "speculation" if self.goal.compares_drafters else self._spoken

    def _speculative(self, candidates: list[Candidate], *, until_one: bool = False, required: bool = True) -> Steps:
        """Speculation at the defaults on each of `candidates` (`until_one`: until one has been measured), the
        acceptance eval with the first; when `required`, a run where none came up stops here, and CUDA graphs off
        are tried where graphs on lose at the top level. Returns the candidates tried."""
        launched_any, tried = False, []
        for candidate in candidates:
            tried.append(candidate)
            launched = yield from self._measure(candidate, speculative=True, acceptance=not self.acceptance_tried)
            launched_any = launched_any or launched is not None
            if launched is not None and (until_one or not self._benchmarking):
                break  # acceptance only, or the budget's first: one speculative server is enough
            if launched is None and self.last_give_up in (ErrorKind.SGLANG_TOO_OLD, ErrorKind.UNSUPPORTED_FLAGS):
                break  # the installed SGLang cannot run it at all: the other layouts would fail the same way
        if not required:
            return tried
        if not launched_any and self.budget.left_out and self._launched_none_for_budget(candidates):
            raise Stop(
                "partial" if self.ar else "failed",
                f"the host-time budget left no room for a {self._spoken} measurement: {self.budget.left_out[-1]}",
            )
        if not launched_any:
            raise Stop(
                "partial" if self.ar else "failed",
                f"no {self._spoken} server came up: " + (self.handled[-1] if self.handled else "no layout allowed"),
            )
        if not until_one:
            yield from self._graphs_off_retry()
        return tried

    def _graphs_off_retry(self) -> Steps:
        """CUDA graphs off for the best graphs-on layout when it loses to the best baseline at the top level."""
        if not self._benchmarking or not self.spec:
            return
        top = max(self.levels)
        graphs_on = {n: s for n, s in self.spec.items() if self.spec_candidates[n].config.get("cuda_graphs", True)}
        best_ar_top = max((s[top] for s in self.ar.values() if top in s), default=None)
        if graphs_on and best_ar_top is not None and self.settings.graphs_off_retry:
            name = max(graphs_on, key=lambda n: max(graphs_on[n].values()))
            # Only a measured loss: a top level the server died or hung at says nothing about CUDA graphs.
            if top in graphs_on[name] and graphs_on[name][top] < best_ar_top:
                loses = (
                    f"{name} with CUDA graphs loses to the best baseline at C={top} "
                    f"({graphs_on[name].get(top, 0.0):.1f} vs {best_ar_top:.1f} tok/s)"
                )
                off = self.spec_candidates[name].with_(cuda_graphs=False, cuda_graph_max_bs=None)
                # Graphs off can only help where graphs on lost: measure those levels, not the whole sweep again.
                best_ar = self._best_baseline(self.levels)
                losing = [c for c in self.levels if graphs_on[name].get(c, 0.0) < best_ar[c]]
                if off.name not in self.spec:
                    if not self._fits(off, speculative=True, acceptance=False, levels=losing):
                        self.handled.append(f"{loses}: CUDA graphs off left out for the host-time budget")
                        return
                    self.handled.append(f"{loses}: tried CUDA graphs off")
                    yield from self._measure(off, speculative=True, levels=losing)

    def _launched_none_for_budget(self, candidates: list[Candidate]) -> bool:
        """Whether every one of `candidates` was left out for the host-time budget (none failed to come up)."""
        return all(c.name in self.budget.left_out_names for c in candidates)

    def _tune(self, config: DrafterConfig) -> Steps:
        """A few other settings, chosen from the acceptance measured at SGLang's defaults (playbook_tuning.py): those
        for low load on the speculative layout fastest at the lowest level, those for high load on every layout
        measured (the fastest at each higher level first, the top level's leading); each over every level. Where a
        high-load setting beats the defaults at the top level on the layout fastest there, its next step the same
        way on that layout."""
        at_defaults = {n: s for n, s in self.spec.items() if n not in self.tuned}
        if not at_defaults:
            return
        low, top = min(self.levels), max(self.levels)

        def fastest_at(level: int, among: dict[str, Sweep]) -> str:
            return max(among, key=lambda n: (among[n].get(level, 0.0), max(among[n].values())))

        graphs_on = {n: s for n, s in at_defaults.items() if self.spec_candidates[n].config.get("cuda_graphs", True)}
        best_low = fastest_at(low, graphs_on or at_defaults)
        # High-load settings: on the layout fastest at each higher level, then on the other layouts measured (with
        # CUDA graphs): a cheaper verify changes which layout is fastest (on the seed's host EP4 with block 4 wins
        # C=64, where at the defaults DP attention did).
        higher = [c for c in sorted(self.levels, reverse=True) if c > low] or [top]
        by_top = sorted(graphs_on, key=lambda n: -at_defaults[n].get(top, 0.0))
        best_high = list(dict.fromkeys([*(fastest_at(c, at_defaults) for c in higher), *by_top]))
        accept = self.acceptance.overall.token_weighted if self.acceptance else None
        tried = settings_to_try(self.algorithm or SpeculativeAlgorithm.DFLASH, config.sglang_defaults, accept)
        levels = [c for c in self.levels if self.crash_level is None or c < self.crash_level]
        for tuning in tried:
            for base_name in best_high if tuning.high_load else [best_low]:
                tuned = yield from self._try_setting(self.spec_candidates[base_name], tuning, levels)
                further = tuning.further
                if further is None or tuned is None or base_name != best_high[0]:
                    continue
                won = self.spec.get(tuned, {}).get(top, 0.0) > at_defaults[base_name].get(top, 0.0)
                if won:
                    yield from self._try_setting(self.spec_candidates[base_name], further, levels)
        if self.tuned:
            highs = ", ".join(best_high)
            on = best_low if [best_low] == best_high else f"{best_low} (low load) and {highs} (higher load)"
            self.done.append(
                f"tuned on {on} (SGLang's defaults: "
                f"{config.sglang_defaults.label() if config.sglang_defaults else 'the drafter’s own'}): "
                + "; ".join(f"{name}: {why}" for name, why in self.tuned.items())
            )

    def _try_setting(self, base: Candidate, tuning: Tuning, levels: list[int]) -> Steps:
        """`tuning` on `base` over `levels`, unless that configuration was measured; its name (also when measured
        as a tuned one before: under a budget, straight after the defaults on the first layout), or None."""
        candidate = base.with_(**tuning.changes)
        if candidate.name in self.spec:
            return candidate.name if candidate.name in self.tuned else None
        self.tuned[candidate.name] = tuning.why
        launched = yield from self._measure(candidate, speculative=True, levels=levels)
        if launched is None and candidate.name in self.budget.left_out_names:
            del self.tuned[candidate.name]  # left out for the budget: not a setting tried
        return launched.name if launched is not None else None

    def _bracket(self) -> Steps:
        """Where the winner changes between two levels far apart, the octaves between them (report/bracketing.py),
        on the fastest speculative and the fastest baseline configuration at the two ends."""
        fastest_ar = {c: f for c in self.levels if (f := _fastest(self.ar, c))}
        fastest_spec = {c: f for c in self.levels if (f := _fastest(self.spec, c))}
        speedup = {c: fastest_spec[c][1] / fastest_ar[c][1] for c in fastest_ar.keys() & fastest_spec.keys()}
        for low, high in unbracketed(list(speedup.items())):
            spec_side, ar_side = (low, high) if speedup[low] > 1 else (high, low)
            spec_name, ar_name = fastest_spec[spec_side][0], fastest_ar[ar_side][0]
            levels = [c for c in octave_levels(low, high) if self.crash_level is None or c < self.crash_level]
            if not levels:
                continue
            yield from self._measure(self.ar_candidates[ar_name], speculative=False, levels=levels)
            yield from self._measure(self.spec_candidates[spec_name], speculative=True, levels=levels)
            self.done.append(
                f"measured C={', '.join(map(str, levels))} on {spec_name} and {ar_name}: the winner changed between "
                f"C={low} and C={high}, now bracketed within a factor of {BRACKET_FACTOR}"
            )

    def _deploy(self) -> Steps:
        self.deploying = True
        verdicts = compare(self.ar, self.spec)
        choice = recommend(verdicts, self._spoken_overall).deploy
        candidate = self.spec_candidates.get(choice) or self.ar_candidates.get(choice) if choice else None
        if candidate is None:
            self.unresolved.append("nothing to deploy: no configuration was measured")
            return
        if self.crash_level is not None and candidate.config.get("speculative_algorithm"):
            cap = max([c for c in self.levels if c < self.crash_level] or [1])
            candidate = candidate.with_(
                max_running_requests=cap, cuda_graph_max_bs=min(cap, candidate.config.get("cuda_graph_max_bs") or cap)
            )
        server, launched = yield from self._launch(candidate)
        if server is None:
            self.unresolved.append(f"could not relaunch {candidate.name} to leave it running")
            return
        capped = launched.config.get("max_running_requests") if self.crash_level is not None else None
        others = "".join(f"; {p.role} on {p.host}: pid {p.pid}" for p in other_processes(server))
        self.left_running.append(
            f"{launched.name} on port {server.port} (pid {server.pid}{others}): the recommended "
            "configuration, left running as the goal asked"
            + (
                f", capped at {capped} running requests (under C={self.crash_level}, where it failed under load)"
                if capped
                else ""
            )
        )
        self.plan.complete("deploy")

    # -- the answer -----------------------------------------------------------------------------------

    def _answer(self, status: str) -> FinalAnswer:
        verdicts = compare(self.ar, self.spec)
        parts = [f"Goal: {self.goal.text}"] + self.done
        if self.acceptance and not self.goal.compares_drafters:  # a comparison says each drafter's
            overall = self.acceptance.overall
            parts.append(
                f"acceptance length (overall): request mean {overall.request_mean:.2f}, "
                f"token weighted {overall.token_weighted:.2f}"
            )
        if self.goal.compares_drafters:
            parts += drafter_lines(self.drafters, self.ar)
        else:
            parts += comparison_lines(verdicts, self._spoken)
        replicated = {
            name
            for name, candidate in (*self.ar_candidates.items(), *self.spec_candidates.items())
            if candidate.config.get("replicas", 1) > 1
        }
        shapes = shape_line({**self.ar, **self.spec}, replicated) if replicated else None
        parts += [shapes] if shapes else []
        defaults = {n: s for n, s in self.spec.items() if n not in self.tuned}
        parts += tuning_lines(defaults, {n: s for n, s in self.spec.items() if n in self.tuned})
        if self.handled:
            parts.append("what went wrong and how it was handled: " + " | ".join(self.handled))
        budget = self.budget.sentence()
        parts += [budget] if budget else []
        if self.servers_started and not self.left_running:
            parts.append("every server this run started was stopped")
        recommendation = recommend(verdicts, self._spoken_overall).text if (self.ar or self.spec) else None
        if recommendation and self.incomplete:
            recommendation = f"from what was measured, which is incomplete ({self.incomplete}): {recommendation}"
        if recommendation and self.crash_level is not None:
            recommendation += (
                f"; {self._spoken} has no figures from C={self.crash_level} up (its server died or hung under "
                f"load there), so {self._spoken} is only recommended under C={self.crash_level}"
            )
        return FinalAnswer(
            status=status,
            summary="\n".join(parts),
            recommendation=recommendation,
            left_running=self.left_running,
            unresolved=self.unresolved,
            left_out=self.budget.left_out,
        )
