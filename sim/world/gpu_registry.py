"""The host's GPU memory registry: which process holds how much memory on which GPU.

`layout.gpu_dir/<pid>.json` = {"pid", "process_name", "gpu_mib": {"0": mib, ...}};
nvidia-smi lists the live ones, and a launching server counts what others hold.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .layout import WorldLayout
from .ports import pid_alive


class GpuHolding(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pid: int
    process_name: str
    gpu_mib: dict[str, int]


def holding_path(layout: WorldLayout, pid: int) -> Path:
    return layout.gpu_dir / f"{pid}.json"


def live_holdings(layout: WorldLayout, exclude_pid: int | None = None) -> list[GpuHolding]:
    holdings = []
    if not layout.gpu_dir.is_dir():
        return holdings
    for path in sorted(layout.gpu_dir.glob("*.json")):
        try:
            holding = GpuHolding.model_validate_json(path.read_text())
        except (OSError, ValueError):
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
    tmp.write_text(holding.model_dump_json())
    tmp.replace(path)


def unregister(layout: WorldLayout, pid: int) -> None:
    try:
        holding_path(layout, pid).unlink()
    except FileNotFoundError:
        pass


def own_pid() -> int:
    return os.getpid()
