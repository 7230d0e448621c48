"""What a simulated host says about itself: its clock and its bytes.

A sim host (reached as sim: or over SSH) runs `time_scale` times faster than
the host it models and stores one byte per `byte_scale` bytes it reports.
Measuring tools convert what they see into the modelled host's terms (a
benchmark's tok/s and latencies), so a report on a sim host reads like one on
the real machine, and says so. On a real host both scales are 1.
"""

from __future__ import annotations

import json
import posixpath
import weakref

from pydantic import BaseModel, ConfigDict, Field

from .hosts import Host, RemoteFileNotFound


class SimulatedScales(BaseModel):
    """What tools must know about a simulated host, read once from its world.json: its root, how much faster its
    clock runs, how many bytes it reports per byte stored, and which of its mounts store at that scale."""

    model_config = ConfigDict(frozen=True)

    sim_root: str | None = None
    time_scale: float = 1.0
    load_time_scale: float = Field(default=1.0, description="Like time_scale, for a server's start-up (loading)")
    byte_scale: int = 1
    mounts: list[str] = Field(default_factory=list, description="Real paths of every mount of the world")
    virtual_mounts: dict[str, str] = Field(
        default_factory=dict, description="Real path -> the mount point the host reports, for mounts stored scaled"
    )
    unreadable: bool = Field(default=False, description="A sim host whose world.json could not be read")
    # What the profile says of the modelled machine where this one's uname, os-release and cpuinfo would answer.
    os: str | None = None
    kernel: str | None = None
    cpu_model: str | None = None

    @property
    def simulated(self) -> bool:
        return self.sim_root is not None

    def for_path(self, path: str) -> StorageScale:
        """How df counts what is stored under `path`: byte_scale on a mount stored scaled, else 1."""
        if self.unreadable:
            return StorageScale(
                factor=1, note=f"simulated host at {self.sim_root} without a readable world.json: sizes unscaled"
            )
        if self.sim_root is None or self.byte_scale == 1:
            return StorageScale(factor=1)
        inside = [m for m in self.mounts if path == m or path.startswith(m.rstrip("/") + "/")]
        top = max(inside, key=len, default=None)
        if top is None or top not in self.virtual_mounts:
            return StorageScale(factor=1)
        return StorageScale(
            factor=self.byte_scale,
            note=f"{SCALE_NOTE_START} {self.virtual_mounts[top]} are stored at 1/{self.byte_scale} of their "
            f"size, and df counts each stored byte {self.byte_scale} times; sizes here are what df counts",
        )


class StorageScale(BaseModel):
    model_config = ConfigDict(frozen=True)

    factor: int = Field(description="Bytes df counts per byte stored under the path: 1 on a real host")
    note: str | None = None


SCALE_NOTE_START = "simulated host: files under"  # host_facts tells a model this once; other views leave it out


_cache: weakref.WeakKeyDictionary[Host, SimulatedScales] = weakref.WeakKeyDictionary()


def simulated_scales(host: Host) -> SimulatedScales:
    """The host's simulated world, read once per Host object (a world's scales and mounts do not change)."""
    cached = _cache.get(host)
    if cached is not None:
        return cached
    root = host.sim_root()
    scales = SimulatedScales()
    if root:
        try:
            world = json.loads(host.read_file(posixpath.join(root, ".sim", "world.json")))
        except (RemoteFileNotFound, ValueError):
            scales = SimulatedScales(sim_root=root, unreadable=True)
        else:
            profile = world.get("profile", {})
            sim, software = profile.get("sim", {}), profile.get("software", {})
            mounts = world.get("mounts", [])
            scales = SimulatedScales(
                sim_root=root,
                time_scale=float(sim.get("time_scale", 1.0)),
                load_time_scale=float(sim.get("load_time_scale") or sim.get("time_scale", 1.0)),
                byte_scale=int(sim.get("byte_scale", 1)),
                mounts=[m["path"].rstrip("/") or "/" for m in mounts],
                virtual_mounts={
                    m["path"].rstrip("/") or "/": m["mount_point"] for m in mounts if m.get("kind") == "virtual"
                },
                os=software.get("os"),
                kernel=software.get("kernel"),
                cpu_model=(profile.get("cpu") or {}).get("model"),
            )
    _cache[host] = scales
    return scales


def time_scale_note(time_scale: float) -> str:
    """The sentence a measurement's method ends with on a simulated host ('' on a real one)."""
    if time_scale == 1.0:
        return ""
    return (
        f" Simulated host running {time_scale:g}x faster than the host it models: measured times were multiplied "
        f"and rates divided by {time_scale:g}, so the figures are the modelled host's."
    )
