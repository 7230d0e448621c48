"""world.json as plain data: what the sim host's short-lived executables read instead of WorldState.

nvidia-smi, df, free and nproc are fresh processes on every call, and an agent
calls them dozens of times a run. Validating world.json into the typed
WorldState builds pydantic's schemas for the whole profile first, about 150 ms
a call; world.json was validated when the world was built, so these commands
read it with `json` alone. Every JSON object becomes a `Record`: a dict whose
keys are also attributes, so `view.profile.gpus.count` reads as it does on
WorldState and a dict field (`view.env["HOME"]`) stays a dict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fault_names import FaultName
from .layout import WorldLayout

if TYPE_CHECKING:  # not imported at run time: the view's readers stay light
    from ..faults import Fault
    from ..profiles.schema import Profile


class Record(dict[str, Any]):
    """A JSON object whose keys read as attributes too."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class DerivedFromState:
    """What WorldState and WorldStateView both derive from world.json's fields `root`, `profile` and `faults`."""

    __slots__ = ()

    if TYPE_CHECKING:  # WorldState's fields; on the view, world.json's objects of the same shape
        root: str
        profile: Profile | Record
        faults: list[Fault] | list[Record]

    @property
    def layout(self) -> WorldLayout:
        return WorldLayout(Path(self.root))

    @property
    def time_scale(self) -> float:
        return self.profile.sim.time_scale

    @property
    def load_time_scale(self) -> float:
        return self.profile.sim.load_time_scale or self.profile.sim.time_scale

    @property
    def byte_scale(self) -> int:
        return self.profile.sim.byte_scale

    @property
    def sglang_version(self) -> str | None:
        if self.fault(FaultName.NO_SGLANG) is not None:
            return None
        old = self.fault(FaultName.OLD_SGLANG)
        return old.version if old is not None else self.profile.software.sglang

    def fault(self, name: FaultName) -> Any:
        """The first injected fault of that name, if any."""
        return next((f for f in self.faults if f.name == name), None)


class WorldStateView(DerivedFromState, Record):
    """world.json, unvalidated, with WorldState's derived properties."""

    __slots__ = ()


def load_state_view(root: str | Path) -> WorldStateView:
    path = WorldLayout(Path(root)).state_file
    try:
        return WorldStateView(json.loads(path.read_text(), object_hook=Record))
    except FileNotFoundError:
        raise FileNotFoundError(f"{root} is not a simulated host: {path} is missing") from None
