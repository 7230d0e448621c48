"""Which drafter is which: one identity per drafter, and the drafter each launched configuration serves.

A run comparing drafters reads each one's config (from the Hub, then perhaps
from the folder it was downloaded to), downloads it and launches servers with
`--speculative-draft-model-path` at that folder. The report has to say which
measurement belongs to which drafter, so each gets one identity:

- a repo id stays the repo id; a host path reads as the repo id of the download
  whose target_dir it is (the same drafter, read from the Hub and from its
  folder, is one), else as the path;
- no draft model: "MTP heads of TARGET" (NEXTN, the target's own heads), "n-gram".

A configuration serves the drafter at its drafter_path. When that path names
no drafter read (a folder this run did not download), it is the drafter read
whose repo name is the folder's name, else the one drafter read of its
algorithm; failing both it keeps its own identity, with no section.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from specops.tools.drafters import DrafterConfig
from specops.tools.sglang.config import ServerConfig, SpeculativeAlgorithm

from .evidence import Evidence, ToolExchange

DRAFTER_REFUSALS = ("not_a_drafter", "incompatible_drafter")
NGRAM = "n-gram"


def is_repo_id(text: str) -> bool:
    return "/" in text and not text.startswith(("/", "~", "."))


def mtp_heads(target: str) -> str:
    return f"MTP heads of {target}"


@dataclass(frozen=True)
class DrafterRead:
    """One read_drafter_config of a drafter: the config it answered, or the refusal."""

    seq: int
    identity: str
    algorithm: str | None  # None: a refusal that names none
    config: DrafterConfig | None = None
    refusal: ToolExchange | None = None


class Drafters:
    """The drafters this run read, by identity in the order first read, and the drafter each configuration serves."""

    def __init__(self, evidence: Evidence) -> None:
        # Later downloads to the same folder win: the folder holds the last one.
        self._repo_at = {_folder(h.value.target_dir): h.value.repo_id for h in evidence.download_handles}
        reads = [
            DrafterRead(p.seq, self._of_config(p.value), p.value.algorithm.value, config=p.value)
            for p in evidence.drafter_configs
        ]
        reads += [
            DrafterRead(x.seq, self._of_args(x.args), _requested(x.args), refusal=x)
            for x in evidence.exchanges
            if x.tool == "read_drafter_config" and not x.ok and x.error and x.error.kind in DRAFTER_REFUSALS
        ]
        self.reads = sorted(reads, key=lambda r: r.seq)
        self.identities = list(dict.fromkeys(r.identity for r in self.reads))

    def place(self, where: str) -> str:
        """A repo id (its revision dropped), or a host path as the repo downloaded there, else the path."""
        repo = where.partition("@")[0]
        if is_repo_id(repo):
            return repo
        folder = _folder(where)
        if folder in self._repo_at:
            return self._repo_at[folder]
        if folder.startswith("~/"):  # read as ~/x, downloaded to /home/u/x: the same folder
            tail = folder[1:]
            matches = {repo for path, repo in self._repo_at.items() if path.endswith(tail)}
            if len(matches) == 1:
                return matches.pop()
        return where

    def own(self, config: ServerConfig) -> str | None:
        """The identity of the drafter a configuration's flags name; None: not speculative."""
        algorithm = config.speculative_algorithm
        if algorithm is None:
            return None
        if config.drafter_path is not None:
            return self.place(config.drafter_path)
        return _without_draft_model(algorithm.value, self.place(config.model_path))

    def serves(self, config: ServerConfig) -> str | None:
        """The drafter a configuration serves, matched to the drafters read where its flags alone do not say."""
        own = self.own(config)
        if own is None or own in self.identities or not self.identities:
            return own
        assert config.speculative_algorithm is not None, "own() is None for autoregressive configurations"
        if config.drafter_path is not None:
            name = PurePosixPath(_folder(config.drafter_path)).name
            named = [i for i in self.identities if is_repo_id(i) and i.split("/")[-1] == name]
            if len(named) == 1:
                return named[0]
        algorithm = config.speculative_algorithm.value
        same = list(dict.fromkeys(r.identity for r in self.reads if r.algorithm == algorithm))
        return same[0] if len(same) == 1 else own

    def serving(self, configs: Mapping[str, ServerConfig]) -> dict[str, str]:
        """Configuration name -> the drafter it serves, for the speculative ones."""
        served = {name: self.serves(config) for name, config in configs.items()}
        return {name: drafter for name, drafter in served.items() if drafter is not None}

    def latest_config(self, identity: str) -> DrafterConfig | None:
        """The config the drafter's latest successful read answered."""
        return next((r.config for r in reversed(self.reads) if r.identity == identity and r.config), None)

    def _of_config(self, config: DrafterConfig) -> str:
        if config.drafter is not None:
            return self.place(config.drafter.source)
        target = self.place(config.target.source) if config.target else "the target"
        return _without_draft_model(config.algorithm.value, target)

    def _of_args(self, args: dict[str, Any]) -> str:
        source = args.get("drafter") or {}
        where = source.get("repo_id") or source.get("path")
        if where:
            return self.place(str(where))
        target = args.get("target") or {}
        named = target.get("repo_id") or target.get("path")
        return _without_draft_model(_requested(args) or "NEXTN", self.place(str(named)) if named else "the target")


def _folder(path: str) -> str:
    return path.rstrip("/") or "/"


def _requested(args: dict[str, Any]) -> str | None:
    algorithm = args.get("algorithm")
    return str(algorithm) if algorithm else None


def _without_draft_model(algorithm: str, target: str) -> str:
    if algorithm == SpeculativeAlgorithm.NGRAM.value:
        return NGRAM
    if algorithm == SpeculativeAlgorithm.NEXTN.value:
        return mtp_heads(target)
    return f"{algorithm} on {target}"
