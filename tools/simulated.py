"""What a simulated host says about itself that its files do not: how many bytes it counts per byte it stores.

A sim host (reached as sim: or over SSH) stores one byte per `byte_scale` bytes
its df counts on its virtual mounts, so sizes measured from files (du, find,
stat) are multiplied by it. It states this in `/.sim/world.json`, which a real
host does not have (scale 1). This is the one thing tools still learn from a
simulated host's own description (docs/world-contract.md says why it remains).
"""

from __future__ import annotations

import json
import weakref

from pydantic import BaseModel, ConfigDict, Field

from .hosts import Host, RemoteFileNotFound


class SimulatedScales(BaseModel):
    """What tools must know about a simulated host, read once from its world.json: how many bytes it reports per
    byte stored, and which of its mounts store at that scale."""

    model_config = ConfigDict(frozen=True)

    simulated: bool = False
    byte_scale: int = 1
    mounts: list[str] = Field(default_factory=list, description="Every mount point of the world")
    virtual_mounts: list[str] = Field(default_factory=list, description="The mount points stored scaled")
    unreadable: bool = Field(default=False, description="A sim host whose world.json could not be read")

    def for_path(self, path: str) -> StorageScale:
        """How df counts what is stored under `path`: byte_scale on a mount stored scaled, else 1."""
        if self.unreadable:
            return StorageScale(factor=1, note=f"simulated host without a readable {WORLD_FILE}: sizes unscaled")
        if not self.simulated or self.byte_scale == 1:
            return StorageScale(factor=1)
        inside = [m for m in self.mounts if path == m or path.startswith(m.rstrip("/") + "/")]
        top = max(inside, key=len, default=None)
        if top is None or top not in self.virtual_mounts:
            return StorageScale(factor=1)
        return StorageScale(
            factor=self.byte_scale,
            note=f"{SCALE_NOTE_START} {top} are stored at 1/{self.byte_scale} of their "
            f"size, and df counts each stored byte {self.byte_scale} times; sizes here are what df counts",
        )


class StorageScale(BaseModel):
    model_config = ConfigDict(frozen=True)

    factor: int = Field(description="Bytes df counts per byte stored under the path: 1 on a real host")
    note: str | None = None


SCALE_NOTE_START = "simulated host: files under"  # check_disk tells a model this; other views leave it out
WORLD_FILE = "/.sim/world.json"  # where a simulated host describes itself


_cache: weakref.WeakKeyDictionary[Host, SimulatedScales] = weakref.WeakKeyDictionary()


def simulated_scales(host: Host) -> SimulatedScales:
    """The host's simulated world, read once per Host object (a world's scales and mounts do not change)."""
    cached = _cache.get(host)
    if cached is not None:
        return cached
    try:
        world = json.loads(host.read_file(WORLD_FILE))
    except RemoteFileNotFound:
        scales = SimulatedScales()
    except ValueError:
        scales = SimulatedScales(simulated=True, unreadable=True)
    else:
        sim = world.get("profile", {}).get("sim", {})
        mounts = world.get("mounts", [])
        scales = SimulatedScales(
            simulated=True,
            byte_scale=int(sim.get("byte_scale", 1)),
            mounts=[m["mount_point"].rstrip("/") or "/" for m in mounts],
            virtual_mounts=[m["mount_point"].rstrip("/") or "/" for m in mounts if m.get("kind") == "virtual"],
        )
    _cache[host] = scales
    return scales
