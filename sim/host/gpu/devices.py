"""The GPUs of a sim host, one record per device, as NVML would report them now.

Static facts come from the profile (model, memory, driver, PCIe); memory in use
comes from the live entries of `layout.gpu_dir` (specops.sim.world.gpu_registry). Identifiers that a real host
has but a profile does not state (UUIDs, PCI bus numbers) are derived from the
hostname and index, so they are stable across calls and worlds.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: these run in every sim command, which must start fast
    from ...profiles.schema import Profile
    from ...world.gpu_registry import GpuHolding
    from ...world.state_view import Record


@dataclass(frozen=True)
class SimGpu:
    index: int
    name: str
    architecture: str
    uuid: str
    pci_bus: int
    numa_node: int
    memory_total_mib: int
    memory_reserved_mib: int
    memory_used_mib: int
    temperature_c: int
    power_draw_w: float
    power_limit_w: float
    pcie_gen: int
    pcie_width: int
    vbios_version: str
    board_part_number: str
    driver_version: str
    cuda_version: str
    processes: tuple[tuple[GpuHolding, int], ...]  # (process, MiB it holds on this GPU)

    @property
    def bus_id(self) -> str:
        """As nvidia-smi prints it: domain:bus:device.function."""
        return f"00000000:{self.pci_bus:02X}:00.0"

    @property
    def memory_free_mib(self) -> int:
        # nvidia-smi rounds each figure from bytes on its own; the driver's reservation sits just
        # under the MiB it displays, so free reads one MiB above total - reserved - used
        # (143771 - 616 - 0 -> 143156 in shared/captures/h200-1gpu).
        return max(0, self.memory_total_mib - self.memory_reserved_mib - self.memory_used_mib + 1)

    @property
    def utilization_pct(self) -> int:
        return 0


def numa_node_of(index: int, profile: Profile | Record) -> int:
    """GPUs split evenly over the NUMA nodes, the first half on node 0."""
    return index * profile.gpus.numa_nodes // profile.gpus.count


def cpu_affinity(node: int, profile: Profile | Record) -> str:
    """The logical CPUs local to a NUMA node, as a range list (`0-63`)."""
    per_node = max(1, profile.cpu.cores // profile.gpus.numa_nodes)
    first = node * per_node
    return f"{first}-{first + per_node - 1}" if per_node > 1 else str(first)


def _pci_bus(index: int, profile: Profile | Record) -> int:
    # Root ports of each NUMA node sit in their own half of the bus range, as on a 2-socket board.
    nodes = profile.gpus.numa_nodes
    per_node = -(-profile.gpus.count // nodes)
    node = numa_node_of(index, profile)
    position = index - node * per_node
    half = 0x100 // nodes
    return 0x18 + node * half + position * ((half - 0x18) // per_node)


def gpu_uuid(index: int, profile: Profile | Record) -> str:
    return "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{profile.hostname}.gpu{index}"))


def host_gpus(profile: Profile | Record, processes: list[GpuHolding]) -> list[SimGpu]:
    spec = profile.gpus
    gpus = []
    for index in range(spec.count):
        held = tuple((p, p.gpu_mib.get(str(index), 0)) for p in processes if p.gpu_mib.get(str(index), 0) > 0)
        gpus.append(
            SimGpu(
                index=index,
                name=spec.model,
                architecture=spec.architecture,
                uuid=gpu_uuid(index, profile),
                pci_bus=_pci_bus(index, profile),
                numa_node=numa_node_of(index, profile),
                memory_total_mib=spec.memory_mib,
                memory_reserved_mib=spec.reserved_mib,
                memory_used_mib=min(spec.memory_mib - spec.reserved_mib, sum(mib for _, mib in held)),
                temperature_c=spec.idle_temp_c,
                power_draw_w=spec.idle_power_w,
                power_limit_w=spec.power_limit_w,
                pcie_gen=spec.pcie_gen,
                pcie_width=spec.pcie_width,
                vbios_version=spec.vbios_version,
                board_part_number=spec.board_part_number,
                driver_version=spec.driver_version,
                cuda_version=spec.cuda_version,
                processes=held,
            )
        )
    return gpus
