"""`nvidia-smi topo -m`: the GPU-to-GPU connection matrix with CPU and NUMA affinity.

NVLink hosts show `NV<links>` between every pair (NVSwitch). PCIe hosts show how
far a peer-to-peer transfer travels: across the socket interconnect (SYS) between
NUMA nodes, between host bridges (NODE) within one, and through a single switch
(PIX) for the two GPUs that share one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .devices import SimGpu, cpu_affinity

if TYPE_CHECKING:  # annotations only: these run in every sim command, which must start fast
    from ...profiles.schema import Profile
    from ...world.state_view import Record

# The header row is underlined with ANSI escapes, as the real tool prints it to a terminal or a pipe.
_UNDERLINE_ON = "\x1b[4m"
_UNDERLINE_OFF = "\x1b[0m"

_LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""


def link(a: SimGpu, b: SimGpu, profile: Profile | Record) -> str:
    if a.index == b.index:
        return " X "
    if profile.gpus.interconnect == "nvlink":
        return f"NV{profile.gpus.nvlink_bonded_links}"
    if a.numa_node != b.numa_node:
        return "SYS"
    # PCIe switches carry two GPUs each: 0-1, 2-3, ...
    return "PIX" if a.index // 2 == b.index // 2 else "NODE"


def render_topology(gpus: list[SimGpu], profile: Profile | Record) -> str:
    names = [f"GPU{g.index}" for g in gpus]
    header = "\t" + _UNDERLINE_ON + "\t".join(names + ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]) + _UNDERLINE_OFF
    lines = [header]
    for a in gpus:
        cells = [link(a, b, profile) for b in gpus]
        lines.append(
            "\t".join([f"GPU{a.index}", *cells, cpu_affinity(a.numa_node, profile), str(a.numa_node), "", "N/A"])
        )
    return "\n".join(lines) + "\n" + _LEGEND
