"""What one SGLang release is, as far as specops depends on it: the typed record and its loader.

Each modelled release has a JSON file in `data/`, written by `extract.py` from the
release's own wheel; nothing here is typed in by hand. The simulator builds its
argparse and its HTTP API from these records, and the tools render launch lines
and recognise failure messages with them.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

Version = tuple[int, ...]

FlagKind = Literal["value", "store_true", "store_false", "store_const", "append", "deprecated_store_true", "custom"]


class LaunchFlag(BaseModel):
    """One `launch_server` option as that release's argparse registers it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    names: tuple[str, ...] = Field(description="Option strings, the canonical one first")
    dest: str
    kind: FlagKind = "value"
    type: str | None = Field(default=None, description="int, float, str, or the name of SGLang's own type callable")
    choices: tuple[Any, ...] | None = Field(
        default=None, description="None: any value (or choices computed at run time)"
    )
    choices_dynamic: bool = Field(default=False, description="choices exist but are computed when SGLang runs")
    default: Any = None
    nargs: str | int | None = None
    required: bool = False
    deprecated: bool = False
    action: str | None = Field(default=None, description="a custom argparse action class, by name")
    replacement: str | None = Field(default=None, description="what a deprecated flag's warning says to use instead")


class LaunchRule(BaseModel):
    """A start-up check SGLang applies to its arguments, with the exact message it raises."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="specops' name for the rule (dflash_pp, dflash_dp_attention, ...)")
    algorithm: str
    condition: str = Field(description="the source of the check, for people")
    message: str = Field(description="the exception's text; {expression} where SGLang formats a value in")
    source: str
    exception: Literal["ValueError", "AssertionError"] = Field(
        default="ValueError", description="what SGLang raises: a ValueError, or a bare assert's AssertionError"
    )


class LaunchWarning(BaseModel):
    """A warning SGLang logs while it settles a launch's arguments, with its exact text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="specops' name for it (dflash_block_size_default, ...)")
    algorithm: str
    message: str = Field(description="the logger format string: %s, %d, %r where SGLang passes values")
    source: str


SpeculativeParams = tuple[int, int, int]
"""(speculative_num_steps, speculative_eagle_topk, speculative_num_draft_tokens)."""


class SpeculativeAutoParams(BaseModel):
    """What `_auto_choose_speculative_params` returns when none of the three is given (EAGLE, EAGLE3, NEXTN,
    STANDALONE): one triple for STANDALONE, else by the target's architecture, else the default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    standalone: SpeculativeParams | None = Field(
        default=None, description="(steps, topk, draft_tokens) for STANDALONE, whatever the target"
    )
    by_architecture: dict[str, SpeculativeParams] = Field(
        default_factory=dict, description="target architecture (hf_config.architectures[0]) -> its triple"
    )
    default: SpeculativeParams | None = Field(default=None, description="the triple for any other architecture")

    def auto_params(self, algorithm: str, target_architecture: str) -> SpeculativeParams:
        """(speculative_num_steps, speculative_eagle_topk, speculative_num_draft_tokens) SGLang picks.

        Raises LookupError where the release has no such choice (not extracted: an empty record).
        """
        if algorithm.upper() == "STANDALONE" and self.standalone is not None:
            return self.standalone
        found = self.by_architecture.get(target_architecture, self.default)
        if found is None:
            raise LookupError(f"no automatic speculative parameters for {algorithm} on {target_architecture}")
        return found


class NgramDefaults(BaseModel):
    """What `_handle_ngram` sets for NGRAM when the flags leave it open; None: the release sets nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_draft_tokens: int | None = Field(
        default=None, description="speculative_num_draft_tokens when --speculative-num-draft-tokens is not given"
    )
    eagle_topk_flag: str | None = Field(
        default=None,
        description="the flag speculative_eagle_topk is always set from (--speculative-ngram-max-bfs-breadth)",
    )
    eagle_topk: int | None = Field(default=None, description="that flag's default")
    num_steps: int | None = Field(
        default=None, description="speculative_num_steps when not given, computed from the defaults; None: not set"
    )
    num_steps_source: str | None = Field(default=None, description="the expression SGLang computes it with")


class LogLines(BaseModel):
    """Lines in the server log that the tools read, as the release writes them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ready: str
    out_of_memory: str
    cuda_graph_capture_failed: str
    decode_batch: tuple[str, ...] = Field(description="the parts of a decode log line, in order")
    port_in_use: str | None = None


class BenchServing(BaseModel):
    """SGLang's serving benchmark: where it lives, its flags and what its JSON line holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    module: str
    flags: tuple[LaunchFlag, ...]
    dataset_names: tuple[str, ...]
    result_fields: tuple[str, ...]


class ReleaseFacts(BaseModel):
    """One SGLang release, read from its wheel."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    wheel: str = Field(description="the wheel's file name")
    launch_flags: tuple[LaunchFlag, ...]
    speculative_algorithms: tuple[str, ...] = Field(description="names --speculative-algorithm accepts (upper case)")
    speculative_algorithm_aliases: dict[str, str] = Field(default_factory=dict)
    speculative_algorithm_argparse_choices: bool = Field(
        description="True: argparse refuses other names ('invalid choice'); False: a free string checked at start-up"
    )
    launch_rules: tuple[LaunchRule, ...]
    launch_warnings: tuple[LaunchWarning, ...] = Field(
        default=(), description="DFLASH's start-up warnings, in the order SGLang logs them"
    )
    dflash_architectures: tuple[str, ...] = Field(
        description="drafter architectures DFLASH serves; empty before DFLASH"
    )
    speculative_auto_params: SpeculativeAutoParams = Field(
        default_factory=SpeculativeAutoParams,
        description="(steps, topk, draft_tokens) the EAGLE family gets when none is given",
    )
    ngram_defaults: NgramDefaults = Field(default_factory=NgramDefaults, description="NGRAM's start-up defaults")
    speculative_max_running_requests_default: dict[str, int] = Field(
        default_factory=dict,
        description="algorithm -> max_running_requests its start-up sets when --max-running-requests is not given",
    )
    mtp_in_target_architectures: tuple[str, ...] = Field(
        default=(),
        description="targets whose checkpoint is its own EAGLE/NEXTN draft when --speculative-draft-model-path is unset",
    )
    draft_architectures: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="EAGLE3 / EAGLE / NEXTN -> the draft model classes (EntryClass) of the release's model files",
    )
    meta_info_speculative_keys: tuple[str, ...] = Field(
        description="/generate meta_info keys of a finished speculative request"
    )
    server_info_internal_state_keys: tuple[str, ...] = Field(
        default=(), description="keys of an internal_states[] entry of /server_info (one per DP rank)"
    )
    endpoints: tuple[str, ...]
    metrics: tuple[str, ...] = Field(description="Prometheus metric names")
    log_lines: LogLines
    bench_serving: BenchServing
    _by_name: dict[str, LaunchFlag] = PrivateAttr(default_factory=dict)  # option string -> flag, built on first use

    @property
    def version_tuple(self) -> Version:
        return version_tuple(self.version)

    def flag(self, name: str) -> LaunchFlag | None:
        """The flag registered under this exact option string."""
        if not self._by_name:
            self._by_name.update({option: flag for flag in self.launch_flags for option in flag.names})
        return self._by_name.get(name)

    def has_flag(self, name: str) -> bool:
        return self.flag(name) is not None

    @property
    def accepted_algorithms(self) -> tuple[str, ...]:
        """Every name --speculative-algorithm takes: the algorithms and their aliases."""
        return (*self.speculative_algorithms, *self.speculative_algorithm_aliases)

    def offers(self, algorithm: str) -> bool:
        return algorithm.upper() in self.accepted_algorithms

    def rule(self, rule_id: str) -> LaunchRule | None:
        return next((r for r in self.launch_rules if r.id == rule_id), None)

    def warning(self, warning_id: str) -> LaunchWarning | None:
        return next((w for w in self.launch_warnings if w.id == warning_id), None)

    def canonical_algorithm(self, algorithm: str) -> str:
        """The algorithm a name stands for: an alias resolved (0.5.23: NEXTN -> EAGLE), upper case."""
        name = algorithm.upper()
        return self.speculative_algorithm_aliases.get(name, name)

    def auto_params(self, algorithm: str, target_architecture: str) -> SpeculativeParams:
        """(speculative_num_steps, speculative_eagle_topk, speculative_num_draft_tokens) SGLang picks for the EAGLE
        family when none is given (see `SpeculativeAutoParams.auto_params`)."""
        return self.speculative_auto_params.auto_params(self.canonical_algorithm(algorithm), target_architecture)

    def max_running_requests_default(self, algorithm: str) -> int | None:
        """max_running_requests the algorithm's start-up sets when the flag is not given; None: it sets none."""
        name = algorithm.upper()
        found = self.speculative_max_running_requests_default.get(name)
        return (
            found
            if found is not None
            else self.speculative_max_running_requests_default.get(self.canonical_algorithm(name))
        )


def version_tuple(version: str) -> Version:
    """`0.5.10.post1` -> (0, 5, 10, 1); `0.5.23` -> (0, 5, 23, 0): a post release sorts after its base."""
    match = re.match(r"(\d+)\.(\d+)\.(\d+)(?:\.post(\d+))?", version.strip())
    if match is None:
        raise ValueError(f"{version!r} is not an SGLang version (expected e.g. 0.5.23 or 0.5.10.post1)")
    return tuple(int(part or 0) for part in match.groups())


@functools.cache
def modelled_versions() -> tuple[str, ...]:
    """The releases with a facts file, oldest first."""
    names = [
        p.name[: -len(".json")]
        for p in resources.files(__package__).joinpath("data").iterdir()
        if p.name.endswith(".json") and p.name[0].isdigit()
    ]
    return tuple(sorted(names, key=version_tuple))


@functools.cache
def load(version: str) -> ReleaseFacts:
    """The facts of this exact modelled release."""
    text = resources.files(__package__).joinpath("data", f"{version}.json").read_text(encoding="utf-8")
    return ReleaseFacts.model_validate_json(text)


def for_version(version: str) -> ReleaseFacts:
    """The newest modelled release not newer than `version` (an unmodelled 0.5.15 behaves as 0.5.11).

    A version older than every modelled release gets the oldest one.
    """
    wanted = version_tuple(version)
    candidates = [v for v in modelled_versions() if version_tuple(v) <= wanted]
    return load(candidates[-1] if candidates else modelled_versions()[0])


@functools.cache
def algorithm_history() -> dict[str, Any]:
    """`data/algorithm_history.json`: the releases scanned and the first of them taking each algorithm."""
    text = resources.files(__package__).joinpath("data", "algorithm_history.json").read_text(encoding="utf-8")
    history: dict[str, Any] = json.loads(text)
    return history


def first_release_with(algorithm: str) -> str | None:
    """The first release that takes `--speculative-algorithm algorithm` (DFLASH: 0.5.11), None if none scanned does.

    The scan starts at 0.5.10; an algorithm already there may be older (see `algorithm_history()["scanned"]`).
    """
    first: str | None = algorithm_history()["first_release_with"].get(algorithm.upper())
    return first


LATEST = "0.5.23"
"""The newest release modelled, and the simulated profiles' default."""
