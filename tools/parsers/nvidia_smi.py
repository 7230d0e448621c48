"""`nvidia-smi`: the `--query-gpu` / `--query-compute-apps` CSV, and the CUDA version in the summary header.

The CSV comes with or without units (`143771 MiB` under `memory.total [MiB]`, or
`143771` with `nounits`) and with or without a header; a figure the device does
not report is `[N/A]` or `N/A`. Callers pass the fields they asked for, so a
headerless CSV is read the same way.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

# The fields host_facts asks for, in this order.
GPU_FIELDS = ("index", "name", "uuid", "memory.total", "memory.used", "driver_version", "pcie.link.gen.current")
APP_FIELDS = ("pid", "process_name", "used_memory", "gpu_uuid")

_CUDA_VERSION = re.compile(r"CUDA Version:\s*([0-9][0-9.]*)")
_NA = {"N/A", "[N/A]", "[Not Supported]", "Not Supported", ""}


class GpuRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    name: str
    uuid: str
    memory_total_mib: int
    memory_used_mib: int | None
    driver_version: str
    pcie_gen: int | None


class ComputeApp(BaseModel):
    model_config = ConfigDict(frozen=True)

    pid: int
    process_name: str
    used_memory_mib: int | None
    gpu_uuid: str


def _number(cell: str) -> int | None:
    """`143771 MiB` or `143771` -> 143771; N/A -> None."""
    cell = cell.strip()
    if cell in _NA:
        return None
    return int(float(cell.split()[0]))


def _rows(text: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if cells[0].split(" [")[0] == fields[0]:
            continue  # the header line
        if len(cells) != len(fields):
            # A name with a comma in it: the extra cells belong to the name column.
            if "name" in fields or "process_name" in fields:
                name_at = fields.index("name") if "name" in fields else fields.index("process_name")
                extra = len(cells) - len(fields)
                if extra > 0:
                    cells = [
                        *cells[:name_at],
                        ", ".join(cells[name_at : name_at + extra + 1]),
                        *cells[name_at + extra + 1 :],
                    ]
            if len(cells) != len(fields):
                raise ValueError(f"nvidia-smi CSV line has {len(cells)} cells, expected {len(fields)}: {line!r}")
        rows.append(dict(zip(fields, cells, strict=False)))
    return rows


def parse_gpu_query(text: str, fields: tuple[str, ...] = GPU_FIELDS) -> list[GpuRow]:
    """Rows of `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`."""
    gpus = []
    for row in _rows(text, fields):
        total = _number(row["memory.total"])
        if total is None:
            raise ValueError(f"nvidia-smi reports no memory.total for GPU {row['index']}")
        gpus.append(
            GpuRow(
                index=int(row["index"]),
                name=row["name"],
                uuid=row.get("uuid", ""),
                memory_total_mib=total,
                memory_used_mib=_number(row.get("memory.used", "N/A")),
                driver_version=row.get("driver_version", ""),
                pcie_gen=_number(row.get("pcie.link.gen.current", "N/A")),
            )
        )
    return gpus


def parse_compute_apps(text: str, fields: tuple[str, ...] = APP_FIELDS) -> list[ComputeApp]:
    """Rows of `nvidia-smi --query-compute-apps=<fields> --format=csv,...`: one per process per GPU."""
    if "No running processes found" in text:
        return []
    return [
        ComputeApp(
            pid=int(row["pid"]),
            process_name=row["process_name"],
            used_memory_mib=_number(row["used_memory"]),
            gpu_uuid=row["gpu_uuid"],
        )
        for row in _rows(text, fields)
    ]


def parse_cuda_version(summary: str) -> str | None:
    """The `CUDA Version: 13.0` of the plain `nvidia-smi` header: the highest CUDA the driver supports."""
    match = _CUDA_VERSION.search(summary)
    return match.group(1) if match else None
