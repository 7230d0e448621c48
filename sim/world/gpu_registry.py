"""The host's GPU memory registry: which process holds how much memory on which GPU.

`layout.gpu_dir/<pid>.json` = {"pid", "process_name", "gpu_mib": {"0": mib, ...}};
nvidia-smi lists the live ones, and a launching server counts what others hold.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .layout import WorldLayout
from .processes import pid_alive


@dataclass(frozen=True)
class GpuHolding:
    """One process's GPU memory; a plain dataclass, as nvidia-smi reads these on every call."""

    pid: int
    process_name: str
    gpu_mib: dict[str, int]  # GPU index (as in JSON) -> MiB

    @classmethod
    def from_json(cls, text: str) -> GpuHolding:
        data = json.loads(text)
        return cls(
            pid=int(data["pid"]),
            process_name=str(data["process_name"]),
            gpu_mib={str(gpu): int(mib) for gpu, mib in data["gpu_mib"].items()},
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def holding_path(layout: WorldLayout, pid: int) -> Path:
    return layout.gpu_dir / f"{pid}.json"


def live_holdings(layout: WorldLayout, exclude_pid: int | None = None) -> list[GpuHolding]:
    holdings: list[GpuHolding] = []
    if not layout.gpu_dir.is_dir():
        return holdings
    for path in sorted(layout.gpu_dir.glob("*.json")):
        try:
            holding = GpuHolding.from_json(path.read_text())
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # half-written or foreign: not a holding
            continue
        if holding.pid != exclude_pid and pid_alive(holding.pid):
            holdings.append(holding)
    return holdings


def foreign_mib(layout: WorldLayout, gpu: int, exclude_pid: int | None = None) -> int:
    """Memory other live processes hold on one GPU."""
    return sum(h.gpu_mib.get(str(gpu), 0) for h in live_holdings(layout, exclude_pid))


def register(layout: WorldLayout, holding: GpuHolding) -> None:
    path = holding_path(layout, holding.pid)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(holding.to_json())
    tmp.replace(path)


def unregister(layout: WorldLayout, pid: int) -> None:
    try:
        holding_path(layout, pid).unlink()
    except FileNotFoundError:
        pass


def own_pid() -> int:
    return os.getpid()
