"""world.json: the simulated host's state, written once when the world is built.

Every sim executable (nvidia-smi, df, hf, the serving simulator) is a separate
process; they all learn the profile, the injected faults and the Hub's address
from this file. The ones that run many times a run read it untyped
(state_view.py), with the same properties.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..faults import Fault
from ..profiles.schema import Profile
from .clock import WorldClock
from .layout import WorldLayout
from .state_view import DerivedFromState

STATE_SCHEMA_VERSION = 1


class WorldStateDamaged(ValueError):
    """A world's state file that cannot be read back (truncated, edited, not JSON); the message says which and why."""


class MountState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mount_point: str
    path: str = Field(description="Real directory standing for the mount")
    kind: Literal["virtual", "real"] = Field(
        description="virtual: df reports the profile's size and counts stored bytes times byte_scale; "
        "real: the directory is a real filesystem (tmpfs, loop) and df reports its own figures"
    )
    device: str
    fstype: str
    size_bytes: int
    used_bytes_at_start: int = Field(description="Modelled bytes used when the world was built")
    stored_bytes_at_start: int = Field(description="Apparent bytes stored under path at build time")


class WorldState(DerivedFromState, BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = STATE_SCHEMA_VERSION
    root: str
    profile: Profile
    faults: list[Fault] = []
    hub_url: str
    python: str = Field(description="The real interpreter behind the host's `python`")
    real_hf: str = Field(description="The real huggingface_hub `hf` executable behind the host's `hf`")
    created_at: datetime
    mounts: list[MountState]
    env: dict[str, str] = Field(description="Environment every command on the host runs with")

    def save(self) -> None:
        path = self.layout.state_file
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.model_dump_json(indent=2))
        tmp.replace(path)
        clock = WorldClock(self.layout.sim_dir)
        if not clock.exists():  # the host's clock, from the world's first save: modelled time at its time_scale
            WorldClock.create(self.layout.sim_dir, rate=self.time_scale)

    @classmethod
    def load(cls, root: str | Path) -> WorldState:
        path = WorldLayout(Path(root)).state_file
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise FileNotFoundError(f"{root} is not a simulated host: {path} is missing") from None
        except json.JSONDecodeError as exc:
            raise WorldStateDamaged(f"{path} is damaged: not JSON ({exc.msg} at line {exc.lineno})") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise WorldStateDamaged(f"cannot read {path}: {' '.join(str(exc).split())}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problem = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in problem["loc"]) or "(state)"
            raise WorldStateDamaged(
                f"{path} is damaged: {where}: {problem['msg']} ({exc.error_count()} problem(s))"
            ) from None
