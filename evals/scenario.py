"""A scenario: one YAML file under evals/scenarios/, loaded as a pydantic-evals Case.

A scenario states the goal, the host (a sim profile, its faults and scales, or a
host that does not answer), the policy settings, the run options, and what must
hold afterwards (the expectation). `why` is the scenario's reason to exist: the
failure it makes sure the agent survives.

    name: seed-full-disk-broken-cli
    why: the seed's own run ...
    goal: deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long
    host: {profile: seed-ct200, faults: [full_disk, broken_cli]}
    policy: {levels: [1, 64]}
    expect: {status: completed, findings: [dflash_wins_low_load]}
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_evals import Case, Dataset

from specops.agent.durations import parse_duration
from specops.agent.policies.playbook_settings import PlaybookSettings

SCENARIO_DIR = Path(__file__).with_name("scenarios")
UNREACHABLE_HOST = "ssh://nobody@127.0.0.1:9"  # the discard port: nothing listens, the connection is refused

FinalStatus = Literal["completed", "partial", "failed", "cannot_do"]
RunStatus = Literal["completed", "partial", "failed", "budget_exceeded", "cancelled"]
Finding = Literal["dflash_wins_low_load", "dflash_loses_peak", "crossover_stated"]


class ScenarioError(ValueError):
    """A scenario file that does not load; the message names the file and the field."""


class HostSetup(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    profile: str | None = Field(default="seed-ct200", description="sim profile; None with `unreachable`")
    faults: list[str] = Field(
        default_factory=list, description="`specops sim faults` specs: name or name:key=value,..."
    )
    time_scale: float | None = Field(default=None, gt=0, description="Default: the profile's quick-run scale")
    load_time_scale: float | None = Field(default=None, gt=0)
    download_mb_s: float | None = Field(
        default=None,
        gt=0,
        description="The Hub's modelled download bandwidth (default: the profile's). A scenario "
        "that is not about the download's pace sets a fast one, so it does not wait for the drafter for nothing",
    )
    over_ssh: bool = Field(default=False, description="Reach the sim host over real SSH (for ssh_drop)")
    unreachable: bool = Field(default=False, description="Name a host that does not answer; no world is started")

    @model_validator(mode="after")
    def _one_kind(self) -> HostSetup:
        if self.unreachable and (self.faults or self.over_ssh):
            raise ValueError("an unreachable host has no faults and no SSH gateway")
        if not self.unreachable and not self.profile:
            raise ValueError("a reachable host needs a sim profile")
        return self


class RunSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    allow_delete: list[str] = Field(default_factory=list)
    max_repeats: int = Field(default=2, ge=1, description="The loop guard's bound on identical failing calls")
    max_requests: int = Field(default=80, ge=1)
    max_tool_calls: int = Field(default=300, ge=1)
    max_wall_s: float = Field(
        default=1200.0,
        gt=0,
        description="A hang guard in this machine's seconds, not a measure of the run: a simulated host's clock "
        "stands while its programs wait for this machine, so on a busy machine (six scenarios at once on two cores) "
        "a run takes several times its idle wall time and must still end as it does idle",
    )
    hub_token: bool = Field(default=False, description="Give the run a Hub token (HF_TOKEN)")
    budget: str | None = Field(
        default=None,
        description="The job's host-time budget as --budget takes it (2h, 90min): the modelled host's time",
    )

    @field_validator("budget")
    @classmethod
    def _a_duration(cls, value: str | None) -> str | None:
        if value is not None:
            parse_duration(value)  # a ValueError names what is wrong
        return value

    @property
    def max_host_s(self) -> float | None:
        return parse_duration(self.budget) if self.budget is not None else None


def _completed() -> list[RunStatus]:
    return ["completed"]


class Expectation(BaseModel):
    """What must hold after the run. Each field is read by the grader named beside it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: list[RunStatus] = Field(default_factory=_completed, description="outcome: the run's status")
    final_status: list[FinalStatus] | None = Field(default=None, description="outcome: the policy's own status")
    explains: list[str] = Field(
        default_factory=list, description="outcome: words the final answer must contain (any case)"
    )
    findings: list[Finding] = Field(default_factory=list, description="outcome: what the comparison must find")
    allowed_deletions: list[str] = Field(
        default_factory=lambda: ["@safe"],
        description="nothing_unallowed_deleted: globs of host paths (~ is the home) that may go; @safe: items "
        "list_freeable classed safe; @none: nothing at all",
    )
    downloads: bool | None = Field(
        default=None, description="disk_checked_before_download: must (True) / must not (False) download"
    )
    max_repeats: int = Field(default=2, ge=1, description="no_repeated_failure: identical failing calls allowed")
    throughput_tolerance: float = Field(default=0.20, gt=0, description="numbers_match_truth: relative")
    acceptance_tolerance: float = Field(default=0.15, gt=0, description="numbers_match_truth: absolute")
    measures: bool | None = Field(default=None, description="numbers_match_truth: benchmarks must (True) exist")
    benchmarked: list[str] = Field(
        default_factory=list,
        description="outcome: globs of configuration names (the report's benchmark rows) that must have been measured, "
        "e.g. 'tp8-ep8-dp8-dpattn+dflash' where DFlash must run on DP attention",
    )
    not_launched: list[str] = Field(
        default_factory=list,
        description="outcome: words that no launch_server call's argv may contain (e.g. '--speculative-algorithm')",
    )
    algorithm: str | None = Field(
        default=None,
        description="algorithm_chosen: the --speculative-algorithm every speculative launch and the report name "
        "(EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH)",
    )
    drafter: str | None = Field(
        default=None,
        description="drafter_chosen: the drafter repo the report must name and the only one downloaded (for goals "
        "that name none, the one a careful search finds)",
    )
    compared: list[str] = Field(
        default_factory=list,
        description="drafters_compared: the drafters (repo ids) a comparison goal names, each with its own section, "
        "its own card beside its acceptance, and a head-to-head verdict at every level both were benchmarked at",
    )
    settings_tried: int | None = Field(
        default=None,
        ge=1,
        description="settings_tried: at least this many speculative settings benchmarked, SGLang's defaults among "
        "them, with the report saying what tuning gained",
    )


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    why: str = Field(min_length=10, description="The scenario's reason to exist")
    goal: str
    host: HostSetup = HostSetup()
    policy: PlaybookSettings = PlaybookSettings()
    model: str | None = Field(default=None, description="A policy spec instead of the playbook (e.g. openai-chat:NAME)")
    run: RunSettings = RunSettings()
    expect: Expectation = Expectation()

    def policy_spec(self, model: str | None = None) -> str:
        """The policy the run uses: --model when given, else the scenario's model, else its playbook settings."""
        return model or self.model or self.policy.spec()

    def deletion_allowed(self, path: str, home: str, safe_paths: set[str]) -> bool:
        for pattern in self.expect.allowed_deletions:
            if pattern == "@none":
                continue
            if pattern == "@safe":
                if any(path == p or path.startswith(p.rstrip("/") + "/") for p in safe_paths):
                    return True
                continue
            full = home.rstrip("/") + pattern[1:] if pattern.startswith("~") else pattern
            if fnmatch.fnmatch(path, full) or path.startswith(full.rstrip("/") + "/"):
                return True
        return False


def load_scenario(path: Path) -> Scenario:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        scenario = Scenario.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{path}: cannot read the scenario: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ScenarioError(f"{path}: {where}: {first['msg']} (see evals/scenario.py)") from None
    if scenario.name != path.stem:
        raise ScenarioError(f"{path}: name {scenario.name!r} must match the file name {path.stem!r}")
    return scenario


def load_scenarios(pattern: str = "*", directory: Path = SCENARIO_DIR) -> list[Scenario]:
    """Every scenario whose name matches the glob `pattern` (comma-separated globs allowed), by name."""
    globs = [p.strip() for p in pattern.split(",") if p.strip()] or ["*"]
    files = sorted(directory.glob("*.yaml"))
    chosen = [f for f in files if any(fnmatch.fnmatch(f.stem, g) for g in globs)]
    if not chosen:
        raise ScenarioError(
            f"no scenario in {directory} matches {pattern!r}; there are: {', '.join(f.stem for f in files)}"
        )
    return [load_scenario(f) for f in chosen]


def as_dataset(scenarios: list[Scenario], evaluators: list[Any], name: str = "specops-agent") -> Dataset:
    """The scenarios as a pydantic-evals Dataset: inputs are the Scenario, metadata its reason."""
    cases = [Case(name=s.name, inputs=s, metadata={"why": s.why}) for s in scenarios]
    return Dataset(name=name, cases=cases, evaluators=evaluators)
