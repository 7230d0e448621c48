"""What happens to a simulated node as a machine: it loses power (for good, or until it has rebooted), its kernel
logs what the hardware did (dmesg), a GPU falls off the bus (Xid 79).

A real node that loses power drops every SSH connection and answers no new one; when it reboots, the kernel draws
a new `/proc/sys/kernel/random/boot_id` and logs from 0 seconds since boot again; a GPU that fell off the bus stays
gone until the node is reset (NVRM logs "Xid (PCI:...): 79, ... GPU has fallen off the bus." and nvidia-smi can no longer
reach it). Here that is a few files under the world's .sim directory, written by the serving simulator when a node
fault fires (serving/node_faults.py) and read by what a tool meets: the sshd session wrapper and SimHost (a node
that is down), `dmesg` (the kernel log), `nvidia-smi` and the launch (a lost GPU). The node's own processes and its
sshd are killed by the fault itself (serving/node_faults.py); the world that owns the sshd starts it again once a
rebooted node is back (world/world.py).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .clock import WorldClock
from .layout import WorldLayout

BOOT_ID = "/proc/sys/kernel/random/boot_id"  # as the host names it
# How long a node has been up when its world starts: a machine in service, not one just booted (any figure would
# do; a reboot starts it again from 0).
UP_AT_START_S = 9 * 86400 + 4 * 3600 + 17 * 60
_POWER = "power.json"  # {"down_until": modelled epoch seconds, or null: down for good}
_KERNEL_LOG = "kernel.log"  # one line per kernel message, "[uptime] text"
_LOST_GPUS = "lost_gpus.json"  # [GPU index, ...]
_FIRED = "fired_faults.json"  # [fault name, ...]: the node faults that have struck (each strikes once)


def new_boot(layout: WorldLayout, *, at: float | None = None) -> None:
    """A boot at `at` (modelled epoch seconds; default now): a new boot id and an empty kernel log (what a tool
    reads after a reboot)."""
    path = layout.host_path(BOOT_ID)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{uuid.uuid4()}\n")
    (layout.sim_dir / _KERNEL_LOG).write_text("")
    _write(layout, "boot.json", {"at": WorldClock(layout.sim_dir).now() if at is None else at})


def first_boot(layout: WorldLayout) -> None:
    """The boot a new world's node has been up since (UP_AT_START_S before its clock starts, which is now)."""
    now = time.time()  # the world's clock starts at this machine's time (clock.py), once the world is saved
    new_boot(layout, at=now - UP_AT_START_S)


def power_off(layout: WorldLayout, *, back_after_s: float | None = None) -> None:
    """The node goes down; it is up again `back_after_s` of its seconds later (rebooted), or never (None)."""
    until = None if back_after_s is None else WorldClock(layout.sim_dir).now() + back_after_s
    _write(layout, _POWER, {"down_until": until})
    if until is not None:
        new_boot(layout, at=until)  # the boot the node shows once it answers again
        (layout.sim_dir / _LOST_GPUS).unlink(missing_ok=True)  # a GPU off the bus is back after a power cycle


def was_powered_off(layout: WorldLayout) -> bool:
    """Whether the node has lost power at some point (it may be back)."""
    return (layout.sim_dir / _POWER).is_file()


def is_down(layout: WorldLayout) -> bool:
    """Whether the node is powered off (or still rebooting) now, on its own clock."""
    power = _read(layout, _POWER, None)
    if not isinstance(power, dict):
        return False
    until = power.get("down_until")
    return until is None or WorldClock(layout.sim_dir).now() < float(until)


def kernel_message(layout: WorldLayout, text: str) -> None:
    """Append a kernel message, stamped with the seconds since the node booted (as dmesg shows them)."""
    booted = _read(layout, "boot.json", {}).get("at")
    now = WorldClock(layout.sim_dir).now()
    uptime = now - float(booted) if booted is not None else 0.0
    with open(layout.sim_dir / _KERNEL_LOG, "a") as log:
        log.write(f"[{uptime:12.6f}] {text}\n")


def kernel_log(layout: WorldLayout) -> list[tuple[float, str]]:
    """The kernel's messages since boot: (seconds since boot, text)."""
    try:
        lines = (layout.sim_dir / _KERNEL_LOG).read_text().splitlines()
    except FileNotFoundError:
        return []
    messages = []
    for line in lines:
        stamp, _, text = line.partition("] ")
        try:
            messages.append((float(stamp.lstrip("[ ")), text))
        except ValueError:
            continue
    return messages


def boot_time(layout: WorldLayout) -> float:
    """When the node last booted, on its clock (the world's start when it never rebooted)."""
    at = _read(layout, "boot.json", {}).get("at")
    return float(at) if at is not None else -math.inf


def lose_gpu(layout: WorldLayout, index: int) -> None:
    lost = set(lost_gpus(layout)) | {index}
    _write(layout, _LOST_GPUS, sorted(lost))


def lost_gpus(layout: WorldLayout) -> list[int]:
    found = _read(layout, _LOST_GPUS, [])
    return [int(i) for i in found] if isinstance(found, list) else []


def fired(layout: WorldLayout, name: str) -> bool:
    found = _read(layout, _FIRED, [])
    return isinstance(found, list) and name in found


def mark_fired(layout: WorldLayout, name: str) -> None:
    found = _read(layout, _FIRED, [])
    _write(layout, _FIRED, sorted({*found, name}) if isinstance(found, list) else [name])


def _read(layout: WorldLayout, name: str, default: Any) -> Any:
    try:
        return json.loads((layout.sim_dir / name).read_text())
    except (FileNotFoundError, ValueError):
        return default


def _write(layout: WorldLayout, name: str, value: object) -> None:
    path: Path = layout.sim_dir / name
    _replace(path, json.dumps(value))


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` whole: through a temporary file of this writer's own (a node's processes may write
    side by side), renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
