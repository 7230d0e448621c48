"""The simulator's truth over every configuration a run could launch, and a run's regret against the best of them.

On a simulated host what each configuration serves is known, so a policy's recommendation can be set beside the best
configuration there is, not only the best it measured. For a finished run (its transcript and report):

- The space: the search policies' (agent/policies/search_space.py), rebuilt from what the run's tools recorded, as
  SearchPipeline builds it: the playbook's autoregressive layouts for the host's facts and the target
  (playbook_pipeline.choose_layouts), the drafter's config as read against the target (its algorithm and SGLang's defaults),
  the host's SGLang support and the goal's levels. Every configuration of it is enumerated through the space's own
  `propose`, one fixed draw per choice, so it holds what a search can launch and nothing else (`SearchSpace.size`).
- A configuration's truth: the simulator's own launch preparation (sim/serving/launch.py `Launcher.prepare`) on a
  host tree built from the profile and the scenario's faults (sim/host/build.py, no Hub, no processes), with the
  run's drafter laid down at the path it had: the arguments as the host's SGLang parses them, the speculative rules,
  the defaults it fills in, the performance model and the GPU memory plan. A configuration that cannot launch there
  (SGLang's "Not enough memory" or a CUDA OOM, a refused argument, a drafter the worker rejects at load, a
  CUDA-graph capture crash, a load that hangs) has no truth and is never the best. One that launches serves a level
  of C requests as the engine (sim/serving/engine.py) runs it: each replica takes its whole share of them, as
  evenly as they go (the gateway balances a closed loop; the grader's Truth takes C / replicas, which below one
  request per replica counts an idle replica half busy), runs at most its max_running_requests (given, or SGLang's
  default as the simulator logs it) and what its KV cache holds, and serves what a closed loop of that many
  clients measures on it (truth.closed_loop_tok_s: each request's prefill, its wait to join the batch and its
  verify steps at the benchmark's prompt and answer lengths, at chat acceptance, the kind random-id prompts are; a
  collapsed drafter's graphs accept nothing). Not the profile's curve at that many running requests: that steady
  figure leaves out the prefill and the spread of each request's acceptance, and so overstated speculation on
  short answers by 2-4% (n-gram replicas at C=32, answers of 64 tokens), more than the regret it judged. A
  deployment one of whose servers dies at that many running requests (crash_under_load, every time) serves 0 tok/s
  there. Memory acts on speed only through that KV cache; cuda_graph_max_bs changes the
  start-up's time and the decode log, not a step's time.
- The recommendation per level: the report's recommendation bands (agent/report/recommendation.py), the fastest
  configuration measured at that level. A comparison the report calls a tie (its 95% interval includes 1) is
  decided as the bands decide it, by the faster measurement: that is the configuration the report tells a user to
  serve there.
- regret(level) = 1 - truth(recommended) / truth(best); 0 when the recommendation is the best, 1 when nothing was
  recommended there (or it serves nothing).

Simplifications, each said where it is made: a level whose running requests the KV cache bounds is taken at the
requests the cache holds in the engine's steady state (each its prompt and half its answer: an estimate, marked
`kv_bound`; a larger memory pool of the same configuration holds the level whole, so such a level is never the
space's best where that one launches); a host group is judged on rank 0's node (its faults); faults that strike
once or a few times (server_crash_at_start, crash_under_load with `times`, a node's fault mid-job) are run events,
not properties of a configuration, and leave its truth alone.
"""

from __future__ import annotations

import io
import math
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from optuna.trial import FixedTrial

from specops.agent.goal import Goal, parse_goal
from specops.agent.policies.playbook_configs import Candidate
from specops.agent.policies.playbook_goal import target_name_for
from specops.agent.policies.playbook_pipeline import Target, choose_layouts
from specops.agent.policies.playbook_settings import PlaybookSettings, is_playbook_spec, parse_playbook_spec
from specops.agent.policies.search_settings import is_search_spec, parse_search_spec
from specops.agent.policies.search_space import (
    CUDA_GRAPHS,
    DRAFT_TOKENS,
    LAYOUT,
    MAX_RUNNING,
    MEM_FRACTION,
    SPECULATIVE,
    STEPS,
    TOPK,
    SearchSpace,
    search_space,
)
from specops.agent.report.naming import base_name
from specops.agent.report.schema import Report
from specops.sglang_releases.facts import LATEST, for_version
from specops.sim.faults import CrashUnderLoad, CudaGraphDrafter, Fault, parse_fault
from specops.sim.host.build import build_host
from specops.sim.hub.fixtures import FixtureRepo, FixtureRevision, load_fixtures
from specops.sim.profiles.cluster import is_cluster_profile, load_cluster_profile
from specops.sim.profiles.schema import PromptKind
from specops.sim.serving.errors import LaunchError
from specops.sim.serving.launch import Launcher
from specops.sim.serving.multinode import check_devices
from specops.sim.serving.speculative import check_dflash_drafter, check_eagle_drafter
from specops.sim.serving.truth import closed_loop_tok_s
from specops.sim.world.cluster import parse_node_fault
from specops.tools.drafters import DrafterConfig
from specops.tools.facts import HostFacts
from specops.tools.models_on_host import ModelOnHost, ModelsOnHost
from specops.tools.sglang.command import launch_flags
from specops.tools.sglang.config import EAGLE_FAMILY, ServerConfig
from specops.tools.sglang.handle import RunningServer
from specops.tools.sglang.multinode import node_flags
from specops.transcripts import ToolPair, pair_tool_calls, read_transcript
from specops.transcripts.events import RunStartEvent

from .evidence import REPORT, TRANSCRIPT
from .sim_host import host_profile

# Random token ids, the benchmark's prompts, read as chat to the simulator (sim/serving/prompt_kind.py).
BENCHMARK_PROMPT_KIND: PromptKind = "chat"
# Where rank 0 of a server across nodes is met; the launch preparation only checks that it is given.
DIST_INIT_ADDR = "127.0.0.1:5000"


class OracleUnavailable(ValueError):
    """The run recorded too little to rebuild its space (no host facts, no target): the message says what."""


def describe(config: ServerConfig) -> str:
    """A configuration's report name with the two settings a name leaves out: `tp8+dflash-b8 mem0.9 run256`."""
    mem = f" mem{config.mem_fraction_static:g}" if config.mem_fraction_static is not None else ""
    running = f" run{config.max_running_requests}" if config.max_running_requests is not None else ""
    return base_name(config) + mem + running


def config_key(config: ServerConfig) -> tuple[tuple[str, Any], ...]:
    """What the simulator launches from a configuration: its fields but where the drafter lies and the port."""
    dumped = config.model_dump(mode="json", exclude={"drafter_path", "port", "host", "served_model_name"})
    return tuple(sorted(dumped.items()))


# -- what the run recorded ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunInputs:
    """What a run's configuration space and its truth are built from, as its tools recorded it."""

    goal: Goal
    settings: PlaybookSettings  # how each level was measured: the levels, the benchmark's prompt and answer lengths
    facts: HostFacts
    target: Target
    drafter: DrafterConfig | None  # as read against the target (None: the run never read one)
    drafter_repo: str | None  # the Hub repo the drafter was downloaded from (None: no draft model to download)
    drafter_revision: str | None
    drafter_path: str | None  # where the drafter lay on the host


@dataclass(frozen=True)
class RunRecord:
    """A finished run: its inputs, each launched configuration by the report's name, and the report."""

    inputs: RunInputs
    launched: Mapping[str, ServerConfig]
    report: Report | None

    def recommended(self, level: int) -> tuple[str, ServerConfig] | None:
        """The configuration the report recommends at `level` (its band there), with its name; None: none."""
        if self.report is None:
            return None
        for band in self.report.recommendation.bands:
            if band.min_concurrency <= level <= band.max_concurrency and band.config in self.launched:
                return band.config, self.launched[band.config]
        return None

    @property
    def host_s(self) -> float | None:
        """The host seconds the run held its host (the report's host time)."""
        return self.report.timing.host.host_s if self.report is not None else None


def _measurement(start: RunStartEvent, report: Report | None) -> PlaybookSettings:
    """How the run measured: a scripted policy's settings; another policy's levels are the report's compared ones."""
    spec = str(start.policy.settings.get("spec", start.policy.name))
    if is_playbook_spec(spec):
        return parse_playbook_spec(spec)
    if is_search_spec(spec):
        return parse_search_spec(spec).measurement
    levels = sorted({c.concurrency for c in report.comparison}) if report is not None else []
    added = set(report.crossover.added_levels) if report is not None else set()
    kept = tuple(c for c in levels if c not in added)
    return PlaybookSettings(levels=kept) if kept else PlaybookSettings()


def _first(steps: Sequence[ToolPair], tool: str, model: type[Any], *, with_target: bool = False) -> Any:
    """The first successful result of `tool` as `model`; `with_target`: only of calls that passed a target."""
    for step in steps:
        if step.tool == tool and step.ok and (not with_target or "target" in step.call.args):
            return step.result_as(model)
    return None


def _target(models: ModelsOnHost | None, goal: Goal, launched: Sequence[ServerConfig]) -> Target:
    """The target the run served: the model its launches loaded, else the one its goal names."""
    found: list[ModelOnHost] = list(models.models) if models is not None else []
    paths = [c.model_path for c in launched]
    by_path = next((m for m in found if m.path in paths), None)
    if by_path is not None:
        return Target.found(by_path)
    wanted = (goal.target or "").split("/")[-1] or (target_name_for(goal.repo_id) if goal.repo_id else None)
    named = next((m for m in found if wanted and m.name.lower() == wanted.lower()), None)
    if named is not None:
        return Target.found(named)
    if paths:  # a running server's model the run used: not among the models found
        return Target(paths[0].rstrip("/").split("/")[-1], paths[0], moe=False)
    raise OracleUnavailable("the run recorded no target model: neither a launch nor a model its goal names")


def _launched(steps: Sequence[ToolPair], report: Report | None) -> dict[str, ServerConfig]:
    """Each configuration the report names, as it was launched (the launch result's, else the call's config)."""
    by_seq: dict[int, ServerConfig] = {}
    for step in steps:
        if step.tool != "launch_server" or step.result is None:
            continue
        server = step.result_as(RunningServer)
        if server is not None:
            by_seq[step.result.seq] = server.config
        elif isinstance(step.call.args.get("config"), dict):
            by_seq[step.result.seq] = ServerConfig.model_validate(step.call.args["config"])
    configs = report.configs if report is not None else []
    return {c.name: by_seq[c.seq] for c in configs if c.seq in by_seq}


def read_run(run_dir: Path) -> RunRecord:
    """A finished run's record, from its transcript and report.json (OracleUnavailable when the host was never read)."""
    events = read_transcript(run_dir / TRANSCRIPT).events
    report_file = run_dir / REPORT
    report = Report.model_validate_json(report_file.read_text(encoding="utf-8")) if report_file.exists() else None
    start = next((e for e in events if isinstance(e, RunStartEvent)), None)
    if start is None:
        raise OracleUnavailable(f"{run_dir}: the transcript has no run_start")
    steps = pair_tool_calls(events)
    facts: HostFacts | None = _first(steps, "host_facts", HostFacts)
    if facts is None:
        raise OracleUnavailable(f"{run_dir}: the run never read the host's facts")
    goal = parse_goal(start.goal)
    launched = _launched(steps, report)
    # The space is built from the config the playbook read against the target before its first measurement
    # (Pipeline._prepare); a read before it, to find the target a drafter is for, passes no target.
    drafter: DrafterConfig | None = _first(steps, "read_drafter_config", DrafterConfig, with_target=True)
    section = report.drafter if report is not None else None
    path = next((c.drafter_path for c in launched.values() if c.drafter_path), None)
    return RunRecord(
        inputs=RunInputs(
            goal=goal,
            settings=_measurement(start, report),
            facts=facts,
            target=_target(_first(steps, "find_models", ModelsOnHost), goal, list(launched.values())),
            drafter=drafter,
            drafter_repo=(section.repo_id if section is not None else None) or goal.repo_id,
            drafter_revision=section.sha if section is not None else None,
            drafter_path=path or (section.path if section is not None else None),
        ),
        launched=launched,
        report=report,
    )


# -- the space ----------------------------------------------------------------------------------------------


def space_of(inputs: RunInputs) -> SearchSpace:
    """The space SearchPipeline builds for this run: the playbook's layouts, the drafter's settings, the levels."""
    # The playbook's own choice of layouts (one server across a group's nodes, replicas where the model fits one node).
    layouts, _ = choose_layouts(inputs.facts, inputs.target)
    return search_space(layouts, inputs.drafter, inputs.facts.speculative, inputs.settings.levels)


def _draws(space: SearchSpace) -> Iterator[dict[str, Any]]:
    """Every combination of the space's choices, as the parameters a trial draws (define-by-run: only those that
    apply), so that `propose` makes each configuration exactly as a search would."""
    for layout, graphs, mem, running in product(
        space.layout_names, space.cuda_graphs, space.mem_fractions, space.max_running
    ):
        common = {LAYOUT: layout, CUDA_GRAPHS: graphs, MEM_FRACTION: mem, MAX_RUNNING: running}
        if not space.allows_speculation(space.layout(layout)):
            yield common
            continue
        yield {**common, SPECULATIVE: False}
        if space.algorithm in EAGLE_FAMILY and space.steps and space.topk and space.draft_tokens:
            for steps, topk, tokens in product(space.steps, space.topk, space.draft_tokens):
                yield {**common, SPECULATIVE: True, STEPS: steps, TOPK: topk, DRAFT_TOKENS: tokens}
        elif space.draft_tokens:
            for tokens in space.draft_tokens:
                yield {**common, SPECULATIVE: True, DRAFT_TOKENS: tokens}
        else:
            yield {**common, SPECULATIVE: True}


def space_configs(space: SearchSpace, drafter_path: str | None) -> list[ServerConfig]:
    """Every distinct configuration of the space, as launch_server takes it (the drafter at `drafter_path`, as
    SearchPipeline adds it to a speculative proposal)."""
    found: dict[tuple[tuple[str, Any], ...], ServerConfig] = {}
    for params in _draws(space):
        candidate: Candidate = space.propose(FixedTrial(params))
        if candidate.config.get("speculative_algorithm") and drafter_path:
            candidate = candidate.with_(drafter_path=drafter_path)
        config = ServerConfig.model_validate(candidate.config)
        found.setdefault(config_key(config), config)
    return list(found.values())


# -- a configuration's truth ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigTruth:
    """What one configuration serves on the simulated host at each level; nothing where it cannot launch."""

    config: ServerConfig
    tok_s: Mapping[int, float] = field(default_factory=dict)
    failure: str | None = None  # why it cannot launch (the error's last line)
    max_running: int | None = None  # per server, as the simulator runs it
    kv_tokens: int | None = None  # the KV cache's tokens per server
    kv_bound: frozenset[int] = frozenset()  # levels where the KV cache, not the cap, bounds the running requests
    crashes: frozenset[int] = frozenset()  # levels where the server dies under the load

    @property
    def launches(self) -> bool:
        return self.failure is None

    @property
    def label(self) -> str:
        return describe(self.config)


def replica_shares(level: int, replicas: int) -> list[int]:
    """The requests each replica runs of `level` kept in flight: as evenly as whole requests go (SGLang's gateway
    balances a closed loop), so below one request per replica some replicas idle."""
    return [level // replicas + (1 if i < level % replicas else 0) for i in range(replicas)]


def _last_line(error: LaunchError) -> str:
    lines = [line for line in error.text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "launch failed"


class SimLaunches:
    """The simulator's launch preparation for one host: its profile's tree and faults (rank 0's node of a cluster),
    the drafter laid down where the run had it. Use as a context manager: the tree is a temporary directory."""

    def __init__(
        self,
        profile: str,
        faults: Sequence[str],
        *,
        drafter_repo: str | None = None,
        drafter_revision: str | None = None,
        drafter_path: str | None = None,
    ) -> None:
        self.profile = host_profile(profile)
        self.faults = _rank_zero_faults(profile, faults)
        self._dir = Path(tempfile.mkdtemp(prefix="specops-oracle-"))
        self.root = self._dir / "host"
        try:
            self._build(drafter_repo, drafter_revision, drafter_path)
        except BaseException:
            self.close()
            raise
        self.drafter_path = drafter_path
        self.crash_under_load = next(
            (f for f in self.faults if isinstance(f, CrashUnderLoad) and f.times is None), None
        )

    def _build(self, drafter_repo: str | None, drafter_revision: str | None, drafter_path: str | None) -> None:
        """The host's tree as a world starts it (no Hub runs: the tree is only read, its URL never dialled), with
        the drafter where the run downloaded it, as the download left it (sim/host/models.py, at its revision)."""
        fixtures = load_fixtures()
        state = build_host(self.root, self.profile, faults=self.faults, hub_url="http://127.0.0.1:9", fixtures=fixtures)
        self.release = for_version(state.sglang_version or LATEST)
        self.flags = frozenset(name for flag in self.release.launch_flags for name in flag.names)
        if drafter_repo and drafter_path and drafter_repo in fixtures:
            home, path = state.layout.home, drafter_path
            where = home / path[2:] if path.startswith("~/") else state.layout.host_path(path)
            for file in _fixture_at(fixtures[drafter_repo], drafter_revision).files:
                file.write_to(where / file.path, self.profile.sim.byte_scale, sparse=True)

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> SimLaunches:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def argv(self, config: ServerConfig) -> list[str]:
        """launch_server's flags for one server of `config` (one replica), as the host's SGLang takes them; a
        server wider than a node gets rank 0's node flags."""
        one = config.model_copy(update={"replicas": 1})
        if one.drafter_path and self.drafter_path:
            one = one.model_copy(update={"drafter_path": self.drafter_path})
        words = launch_flags(one, self.flags)
        nnodes = math.ceil(one.gpus / self.profile.gpus.count)
        return words + (node_flags(nnodes, 0, DIST_INIT_ADDR) if nnodes > 1 else [])

    def truth(self, config: ServerConfig, levels: Sequence[int], *, input_len: int, output_len: int) -> ConfigTruth:
        """`config`'s tok/s at each level, or why it cannot launch (module doc)."""
        launcher = Launcher(self.argv(config), self.root, stream=io.StringIO())
        try:
            # The simulator's own preparation: parse, speculative rules, defaults, performance model, memory plan.
            prepared = launcher.prepare()
            if prepared.plan_error is not None:
                raise prepared.plan_error
            if launcher.load_hangs():
                return ConfigTruth(config, failure="the load hangs (load_hang)")
            graph_fault = prepared.graph_fault
            if isinstance(graph_fault, CudaGraphDrafter) and graph_fault.mode == "crash":
                return ConfigTruth(config, failure="CUDA-graph capture crashes with the drafter (cuda_graph_drafter)")
            check_devices(launcher.placement, self.profile.gpus.count)
            self._check_drafter_at_load(prepared)
        except LaunchError as error:
            return ConfigTruth(config, failure=_last_line(error))
        plan = prepared.plan
        assert plan is not None, "a plan without an error"
        max_running = launcher.max_running_requests(prepared)
        # The requests its KV cache holds in the engine's steady state: each holds its prompt and, on average, half
        # its answer, and one more is admitted while its prompt fits (engine.py `_admit`).
        held = max(int((plan.max_total_tokens - input_len) / (input_len + output_len / 2)), 1)
        speculative = prepared.spec is not None
        tok_s: dict[int, float] = {}
        kv_bound: set[int] = set()
        crashes: set[int] = set()
        for level in levels:
            total, died = 0.0, False
            for share in replica_shares(level, config.replicas):
                running = min(share, max_running)  # the rest wait in its queue
                if running > held:  # the engine admits no request its KV cache cannot hold
                    running = held
                    kv_bound.add(level)
                crash = self.crash_under_load
                if crash is not None and (speculative or not crash.speculative_only) and running >= crash.at_running:
                    died = True
                total += closed_loop_tok_s(
                    prepared.model,
                    running,
                    input_len=input_len,
                    output_len=output_len,
                    prompt_kind=BENCHMARK_PROMPT_KIND,
                )
            if died:  # a server of the deployment dies under this load: the level serves nothing
                crashes.add(level)
            tok_s[level] = 0.0 if died else total
        return ConfigTruth(
            config,
            tok_s=tok_s,
            max_running=max_running,
            kv_tokens=plan.max_total_tokens,
            kv_bound=frozenset(kv_bound),
            crashes=frozenset(crashes),
        )

    def _check_drafter_at_load(self, prepared: Any) -> None:
        """The draft model's checks against the target at load time (launch.py `_load_drafter`, the KV phase)."""
        spec, drafter, target = prepared.spec, prepared.drafter, prepared.target
        if spec is None:
            return
        if drafter is None:
            if spec.algorithm == "DFLASH":  # the draft model's directory was not there to read
                raise LaunchError(f"no draft model at {prepared.args.speculative_draft_model_path}")
            return
        if spec.algorithm == "DFLASH":
            check_dflash_drafter(drafter, target, self.release)
        else:
            check_eagle_drafter(spec, drafter, target, self.release)


def _rank_zero_faults(profile: str, faults: Sequence[str]) -> list[Fault]:
    """The scenario's faults on the host a launch lands on: a cluster's rank 0 node (`node=I` faults elsewhere are
    left out), else every one."""
    if not is_cluster_profile(profile):
        return [parse_fault(spec) for spec in faults]
    nodes = len(load_cluster_profile(profile).nodes)
    found = []
    for spec in faults:
        on, fault = parse_node_fault(spec, nodes)
        if 0 in on:
            found.append(fault)
    return found


def _fixture_at(repo: FixtureRepo, revision: str | None) -> FixtureRevision:
    """The fixture revision the run downloaded (its pinned commit), else the main branch's."""
    try:
        return repo.revision(revision) if revision else repo.revision()
    except KeyError:
        return repo.revision()


# -- the oracle ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelRegret:
    level: int
    best: ConfigTruth | None  # None: nothing in the space launches
    recommended: ConfigTruth | None  # None: the run recommended nothing at this level
    recommended_name: str | None  # as the report names it

    @property
    def best_tok_s(self) -> float:
        return self.best.tok_s[self.level] if self.best is not None else 0.0

    @property
    def recommended_tok_s(self) -> float:
        return self.recommended.tok_s.get(self.level, 0.0) if self.recommended is not None else 0.0

    @property
    def regret(self) -> float:
        """1 - truth(recommended) / truth(best): 0 at the best, 1 with no recommendation or nothing served."""
        if self.best_tok_s <= 0:
            return 0.0
        return 1.0 - self.recommended_tok_s / self.best_tok_s


@dataclass
class Oracle:
    """The truth of every configuration in a run's space, and of any other configuration asked about."""

    launches: SimLaunches
    space: SearchSpace
    levels: tuple[int, ...]
    input_len: int
    output_len: int
    configs: list[ConfigTruth] = field(default_factory=list)
    _known: dict[tuple[tuple[str, Any], ...], ConfigTruth] = field(default_factory=dict)

    def truth(self, config: ServerConfig) -> ConfigTruth:
        key = config_key(config)
        if key not in self._known:
            self._known[key] = self.launches.truth(
                config, self.levels, input_len=self.input_len, output_len=self.output_len
            )
        return self._known[key]

    def best(self, level: int) -> ConfigTruth | None:
        """The space's fastest configuration at `level` (the first of equals, in the space's order)."""
        launched = [c for c in self.configs if c.launches]
        return max(launched, key=lambda c: c.tok_s[level], default=None)

    def regret(self, level: int, recommended: tuple[str, ServerConfig] | None) -> LevelRegret:
        name, config = recommended if recommended is not None else (None, None)
        truth = self.truth(config) if config is not None else None
        return LevelRegret(level, self.best(level), truth, name)

    def regrets(self, record: RunRecord) -> list[LevelRegret]:
        """A run's regret at each of this oracle's levels."""
        return [self.regret(level, record.recommended(level)) for level in self.levels]


@contextmanager
def open_oracle(record: RunRecord, profile: str, faults: Sequence[str]) -> Iterator[Oracle]:
    """The oracle of a run's space on the sim `profile` with the scenario's `faults`; every configuration's truth
    computed on entry."""
    inputs = record.inputs
    with SimLaunches(
        profile,
        faults,
        drafter_repo=inputs.drafter_repo,
        drafter_revision=inputs.drafter_revision,
        drafter_path=inputs.drafter_path,
    ) as launches:
        space = space_of(inputs)
        oracle = Oracle(
            launches,
            space,
            tuple(inputs.settings.levels),
            inputs.settings.bench_input_len,
            inputs.settings.bench_output_len,
        )
        oracle.configs = [oracle.truth(c) for c in space_configs(space, inputs.drafter_path)]
        yield oracle
