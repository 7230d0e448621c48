"""`nvidia-smi --query-gpu=... / --query-compute-apps=... --format=csv[,noheader][,nounits]`.

A field renders as `value unit` with the unit in its header (`memory.total [MiB]`);
`nounits` drops both. A figure the device does not report is `[N/A]` (`N/A` without units).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .devices import SimGpu


class UnknownFieldError(ValueError):
    def __init__(self, field: str) -> None:
        super().__init__(f'Field "{field}" is not a valid field to query.')
        self.field = field


@dataclass(frozen=True)
class CsvFormat:
    header: bool = True
    units: bool = True

    @classmethod
    def parse(cls, spec: str) -> CsvFormat:
        parts = [p.strip() for p in spec.split(",") if p.strip()]
        if not parts or parts[0] != "csv" or any(p not in ("csv", "noheader", "nounits") for p in parts):
            raise ValueError(spec)
        return cls(header="noheader" not in parts, units="nounits" not in parts)


@dataclass(frozen=True)
class _Field:
    unit: str | None
    value: Callable[[SimGpu], str | int | float | None]


def _compute_capability(gpu: SimGpu) -> str:
    if gpu.architecture == "Blackwell":
        return "12.0" if "RTX" in gpu.name else "10.0"
    return {"Hopper": "9.0", "Ada Lovelace": "8.9", "Ampere": "8.0"}.get(gpu.architecture, "N/A")


def _watts(value: float) -> str:
    return f"{value:.2f}"


_GPU_FIELDS: dict[str, _Field] = {
    "index": _Field(None, lambda g: g.index),
    "name": _Field(None, lambda g: g.name),
    "uuid": _Field(None, lambda g: g.uuid),
    "serial": _Field(None, lambda g: f"{1650000000000 + g.index:013d}"),
    "driver_version": _Field(None, lambda g: g.driver_version),
    "vbios_version": _Field(None, lambda g: g.vbios_version),
    "pci.bus_id": _Field(None, lambda g: g.bus_id),
    "pci.domain": _Field(None, lambda g: "0x0000"),
    "pci.bus": _Field(None, lambda g: f"0x{g.pci_bus:02X}"),
    "pci.device": _Field(None, lambda g: "0x00"),
    "persistence_mode": _Field(None, lambda g: "Enabled"),
    "pstate": _Field(None, lambda g: "P0"),
    "compute_mode": _Field(None, lambda g: "Default"),
    "compute_cap": _Field(None, _compute_capability),
    "display_mode": _Field(None, lambda g: "Requested functionality has been deprecated"),
    "display_active": _Field(None, lambda g: "Disabled"),
    "mig.mode.current": _Field(None, lambda g: "Disabled"),
    "ecc.mode.current": _Field(None, lambda g: "Enabled"),
    "count": _Field(None, lambda g: None),  # filled in by render_gpu_query: it needs all GPUs
    "memory.total": _Field("MiB", lambda g: g.memory_total_mib),
    "memory.reserved": _Field("MiB", lambda g: g.memory_reserved_mib),
    "memory.used": _Field("MiB", lambda g: g.memory_used_mib),
    "memory.free": _Field("MiB", lambda g: g.memory_free_mib),
    "utilization.gpu": _Field("%", lambda g: g.utilization_pct),
    "utilization.memory": _Field("%", lambda g: 0),
    "temperature.gpu": _Field(None, lambda g: g.temperature_c),
    "temperature.memory": _Field(None, lambda g: g.temperature_c + 4),
    "fan.speed": _Field("%", lambda g: None),
    "power.draw": _Field("W", lambda g: _watts(g.power_draw_w)),
    "power.draw.instant": _Field("W", lambda g: _watts(g.power_draw_w)),
    "power.draw.average": _Field("W", lambda g: _watts(g.power_draw_w)),
    "power.limit": _Field("W", lambda g: _watts(g.power_limit_w)),
    "enforced.power.limit": _Field("W", lambda g: _watts(g.power_limit_w)),
    "power.default_limit": _Field("W", lambda g: _watts(g.power_limit_w)),
    "power.max_limit": _Field("W", lambda g: _watts(g.power_limit_w)),
    "pcie.link.gen.current": _Field(None, lambda g: g.pcie_gen),
    "pcie.link.gen.max": _Field(None, lambda g: g.pcie_gen),
    "pcie.link.width.current": _Field(None, lambda g: g.pcie_width),
    "pcie.link.width.max": _Field(None, lambda g: g.pcie_width),
    "clocks.sm": _Field("MHz", lambda g: 345),
    "clocks.mem": _Field("MHz", lambda g: 3201),
    "clocks.max.sm": _Field("MHz", lambda g: 1980),
    "clocks.max.mem": _Field("MHz", lambda g: 3201),
}

_GPU_ALIASES = {
    "gpu_name": "name",
    "gpu_uuid": "uuid",
    "gpu_serial": "serial",
    "gpu_bus_id": "pci.bus_id",
    "temperature.gpu.current": "temperature.gpu",
}


def _cell(value: str | int | float | None, unit: str | None, fmt: CsvFormat) -> str:
    if value is None:
        return "[N/A]" if fmt.units else "N/A"
    return f"{value} {unit}" if unit and fmt.units else str(value)


def _header(name: str, unit: str | None, fmt: CsvFormat) -> str:
    return f"{name} [{unit}]" if unit and fmt.units else name


def _join(rows: list[list[str]]) -> str:
    return "".join(", ".join(row) + "\n" for row in rows)


def parse_fields(spec: str) -> list[str]:
    return [f.strip() for f in spec.split(",") if f.strip()]


def render_gpu_query(gpus: list[SimGpu], fields: list[str], fmt: CsvFormat, *, all_count: int) -> str:
    resolved = []
    for name in fields:
        key = _GPU_ALIASES.get(name, name)
        if key not in _GPU_FIELDS:
            raise UnknownFieldError(name)
        resolved.append((name, _GPU_FIELDS[key]))
    rows = [[_header(name, f.unit, fmt) for name, f in resolved]] if fmt.header else []
    for gpu in gpus:
        rows.append([_cell(all_count if name == "count" else f.value(gpu), f.unit, fmt) for name, f in resolved])
    return _join(rows)


_APP_FIELDS: dict[str, tuple[str | None, Callable[[SimGpu, int, str, int], str | int]]] = {
    "pid": (None, lambda g, pid, name, mib: pid),
    "process_name": (None, lambda g, pid, name, mib: name),
    "used_gpu_memory": ("MiB", lambda g, pid, name, mib: mib),
    "gpu_uuid": (None, lambda g, pid, name, mib: g.uuid),
    "gpu_bus_id": (None, lambda g, pid, name, mib: g.bus_id),
    "gpu_name": (None, lambda g, pid, name, mib: g.name),
    "gpu_serial": (None, lambda g, pid, name, mib: f"{1650000000000 + g.index:013d}"),
}
_APP_ALIASES = {"name": "process_name", "used_memory": "used_gpu_memory"}


def render_apps_query(gpus: list[SimGpu], fields: list[str], fmt: CsvFormat) -> str:
    resolved = []
    for name in fields:
        key = _APP_ALIASES.get(name, name)
        if key not in _APP_FIELDS:
            raise UnknownFieldError(name)
        resolved.append((name, *_APP_FIELDS[key]))
    rows = [[_header(name, unit, fmt) for name, unit, _ in resolved]] if fmt.header else []
    for gpu in gpus:
        for process, mib in gpu.processes:
            rows.append(
                [_cell(value(gpu, process.pid, process.process_name, mib), unit, fmt) for _, unit, value in resolved]
            )
    return _join(rows)
