"""`nvidia-smi -q`: the per-GPU attribute report, in the layout and order of driver 580.

Keys are padded to column 55 and nested by four spaces, as in
shared/captures/h200-1gpu/nvidia-smi-q.txt. Sections the sim has no figures for
(encoder stats, fabric health, ...) are left out rather than invented.
"""

from __future__ import annotations

from datetime import datetime

from .devices import SimGpu
from .table import timestamp

_KEY_COLUMN = 55

# (depth, key, value): value None opens a section.
Line = tuple[int, str, str | None]


def _gpu_lines(gpu: SimGpu) -> list[Line]:
    def mib(n: int) -> str:
        return f"{n} MiB"

    def watts(w: float) -> str:
        return f"{w:.2f} W"

    lines: list[Line] = [
        (1, "Product Name", gpu.name),
        (1, "Product Brand", "NVIDIA"),
        (1, "Product Architecture", gpu.architecture),
        (1, "Display Mode", "Requested functionality has been deprecated"),
        (1, "Display Active", "Disabled"),
        (1, "Persistence Mode", "Enabled"),
        (1, "Addressing Mode", "None"),
        (1, "MIG Mode", None),
        (2, "Current", "Disabled"),
        (2, "Pending", "Disabled"),
        (1, "Accounting Mode", "Disabled"),
        (1, "Accounting Mode Buffer Size", "4000"),
        (1, "Serial Number", f"{1650000000000 + gpu.index:013d}"),
        (1, "GPU UUID", gpu.uuid),
        (1, "Minor Number", str(gpu.index)),
        (1, "VBIOS Version", gpu.vbios_version),
        (1, "MultiGPU Board", "No"),
        (1, "Board Part Number", gpu.board_part_number),
        (1, "GPU Virtualization Mode", None),
        (2, "Virtualization Mode", "None"),
        (1, "GSP Firmware Version", gpu.driver_version),
        (1, "PCI", None),
        (2, "Bus", f"0x{gpu.pci_bus:02X}"),
        (2, "Device", "0x00"),
        (2, "Domain", "0x0000"),
        (2, "Bus Id", gpu.bus_id),
        (2, "GPU Link Info", None),
        (3, "PCIe Generation", None),
        (4, "Max", str(gpu.pcie_gen)),
        (4, "Current", str(gpu.pcie_gen)),
        (4, "Device Current", str(gpu.pcie_gen)),
        (4, "Device Max", str(gpu.pcie_gen)),
        (4, "Host Max", str(gpu.pcie_gen)),
        (3, "Link Width", None),
        (4, "Max", f"{gpu.pcie_width}x"),
        (4, "Current", f"{gpu.pcie_width}x"),
        (2, "Replays Since Reset", "0"),
        (2, "Replay Number Rollovers", "0"),
        (1, "Fan Speed", "N/A"),
        (1, "Performance State", "P0"),
        (1, "Clocks Event Reasons", None),
        (2, "Idle", "Active" if not gpu.processes else "Not Active"),
        (2, "Applications Clocks Setting", "Not Active"),
        (2, "SW Power Cap", "Not Active"),
        (2, "HW Slowdown", "Not Active"),
        (2, "SW Thermal Slowdown", "Not Active"),
        (1, "Sparse Operation Mode", "Disabled"),
        (1, "FB Memory Usage", None),
        (2, "Total", mib(gpu.memory_total_mib)),
        (2, "Reserved", mib(gpu.memory_reserved_mib)),
        (2, "Used", mib(gpu.memory_used_mib)),
        (2, "Free", mib(gpu.memory_free_mib)),
        (1, "Compute Mode", "Default"),
        (1, "Utilization", None),
        (2, "GPU", f"{gpu.utilization_pct} %"),
        (2, "Memory", "0 %"),
        (2, "Encoder", "0 %"),
        (2, "Decoder", "0 %"),
        (1, "ECC Mode", None),
        (2, "Current", "Enabled"),
        (2, "Pending", "Enabled"),
        (1, "Temperature", None),
        (2, "GPU Current Temp", f"{gpu.temperature_c} C"),
        (2, "GPU Target Temperature", "N/A"),
        (2, "Memory Current Temp", f"{gpu.temperature_c + 4} C"),
        (1, "GPU Power Readings", None),
        (2, "Average Power Draw", watts(gpu.power_draw_w)),
        (2, "Instantaneous Power Draw", watts(gpu.power_draw_w)),
        (2, "Current Power Limit", watts(gpu.power_limit_w)),
        (2, "Requested Power Limit", watts(gpu.power_limit_w)),
        (2, "Default Power Limit", watts(gpu.power_limit_w)),
        (2, "Max Power Limit", watts(gpu.power_limit_w)),
    ]
    if not gpu.processes:
        lines.append((1, "Processes", "None"))
    else:
        lines.append((1, "Processes", None))
        for process, held in gpu.processes:
            lines += [
                (2, "GPU instance ID", "N/A"),
                (2, "Compute instance ID", "N/A"),
                (2, "Process ID", str(process.pid)),
                (3, "Type", "C"),
                (3, "Name", process.process_name),
                (3, "Used GPU Memory", mib(held)),
            ]
    return lines


def _format(depth: int, key: str, value: str | None) -> str:
    text = "    " * depth + key
    return text if value is None else f"{text:<{_KEY_COLUMN}}: {value}"


def render_details(gpus: list[SimGpu], *, driver_version: str, cuda_version: str, attached: int, now: datetime) -> str:
    out = [
        "",
        "==============NVSMI LOG==============",
        "",
        _format(0, "Timestamp", timestamp(now)),
        _format(0, "Driver Version", driver_version),
        _format(0, "CUDA Version", cuda_version),
        "",
        _format(0, "Attached GPUs", str(attached)),
    ]
    for gpu in gpus:
        out.append(f"GPU {gpu.bus_id}")
        out += [_format(*line) for line in _gpu_lines(gpu)]
        out.append("")
    return "\n".join(out) + "\n"
