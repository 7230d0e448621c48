"""Kinds of host beyond this machine and SSH, registered by whoever provides them.

The tools open every host with open_host and act on it through the Host interface alone; they never ask what kind
of host it is. A provider registers two things here, named by a spec prefix:

- a HostKind: a running host of its kind, opened from a spec (`sim:seed-ct200-ab12cd34`, a world already up);
- a Provisioner: a host a run brings up for itself and takes down after it (`sim:seed-ct200`, started with the
  options the request carries), handed to the run as the spec to open.

The program's entry points (the CLI, the eval runner) import the providers they offer; a spec of a kind nobody
registered is refused like any unknown spec.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .base import Host


class ProvisionFailed(RuntimeError):
    """A host could not be brought up for a run (a bad option, an unknown profile): one line in the user's words;
    nothing was started. `option`: what of the request is wrong ("spec", or the name of one of its options)."""

    def __init__(self, message: str, *, option: str = "spec") -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class HostKind:
    prefix: str  # how its specs start: "sim:"
    chars: re.Pattern[str]  # every character of a spec of this kind after its prefix
    chars_hint: str  # what such a spec is made of, for a refusal ("a sim: root is a plain path")
    check: Callable[[str], None]  # refuses a spec that cannot name a running host (InvalidHostSpec); connects nothing
    open: Callable[[str], Host]


@dataclass(frozen=True)
class Provisioned:
    """What a provisioner brought up for a run: the spec to open, and what the run records of it."""

    open_spec: str  # a host spec (or a group spec, with `group`) open_host takes
    group: bool = False
    inventory: Path | None = None  # the inventory the group's names are in
    facts: Mapping[str, Any] = field(default_factory=dict)  # recorded in the run's host_opened event


@dataclass(frozen=True)
class HostRequest:
    """A host as the user asked for it, parsed once: the spec, and the options that only some kinds take."""

    spec: str
    # What only the provider of the spec's kind understands (the CLI's host flags, by name): handed to its
    # provisioner as given, recorded with the run so replay and resume ask for the same host again.
    options: Mapping[str, Any] = field(default_factory=dict)


class Provisioner(Protocol):
    prefix: str

    def provides(self, spec: str) -> bool:
        """Whether this provisioner brings up the host `spec` names."""

    def check(self, request: HostRequest) -> None:
        """Refuse a request that cannot be brought up (ValueError, one line in the user's words); starts nothing."""

    def provision(self, request: HostRequest) -> AbstractContextManager[Provisioned]:
        """Bring the host up for the run, and down again when the context ends."""

    def reprovision(self, facts: Mapping[str, Any]) -> AbstractContextManager[Provisioned] | None:
        """Bring back, from what a killed run recorded (Provisioned.facts), the host it had brought up; None when
        that host did not outlive the run. Raises ValueError (one line) when it cannot."""


_KINDS: dict[str, HostKind] = {}
_PROVISIONERS: dict[str, Provisioner] = {}


def register_host_kind(kind: HostKind) -> None:
    _KINDS[kind.prefix] = kind


def register_provisioner(provisioner: Provisioner) -> None:
    _PROVISIONERS[provisioner.prefix] = provisioner


def host_kind(spec: str) -> HostKind | None:
    """The registered kind whose prefix `spec` starts with."""
    return next((k for prefix, k in _KINDS.items() if spec.startswith(prefix)), None)


def provisioner_for(spec: str) -> Provisioner | None:
    """The registered provisioner that brings up the host `spec` names."""
    return next((p for p in _PROVISIONERS.values() if p.provides(spec)), None)
