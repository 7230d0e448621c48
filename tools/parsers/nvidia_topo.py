"""`nvidia-smi topo -m`: the GPU-to-GPU link matrix, summarised for a planner.

The header row names the columns (GPU0..GPUn, NICs, then CPU/NUMA affinity) and
is wrapped in ANSI underline escapes on a terminal-less run too; each GPU row
gives one link code per column: `X` (self), `NV#` (# bonded NVLinks), or a PCIe
path (PIX, PXB, PHB, NODE, SYS). The legend after the matrix is ignored.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NVLINK = re.compile(r"NV(\d+)")
_GPU_LABEL = re.compile(r"GPU\d+")
PCIE_CODES = ("PIX", "PXB", "PHB", "NODE", "SYS")


class GpuTopology(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpus: list[str] = Field(description="GPU labels in matrix order, GPU0..")
    links: dict[str, dict[str, str]] = Field(description="links[a][b]: the code between GPU a and GPU b")
    cpu_affinity: dict[str, str] = {}
    numa_affinity: dict[str, str] = {}
    interconnect: Literal["nvlink", "pcie", "mixed", "single"] = Field(
        description="nvlink: every GPU pair over NVLink; pcie: none; mixed: some; single: one GPU"
    )
    min_nvlinks: int | None = Field(default=None, description="Fewest bonded NVLinks between any NVLink pair")
    link_counts: dict[str, int] = Field(default_factory=dict, description="How many GPU pairs use each code")
    summary: str


def _clean(line: str) -> str:
    return _ANSI.sub("", line).rstrip("\n")


def parse_topology(text: str) -> GpuTopology:
    lines = [_clean(line) for line in text.splitlines()]
    # The header is the line whose first cell is empty (the row-label column) and that names GPU0.
    header_at = next((i for i, line in enumerate(lines) if line.startswith("\t") and "GPU0" in line), None)
    if header_at is None:
        raise ValueError("no GPU0 column in `nvidia-smi topo -m` output")
    columns = [c.strip() for c in lines[header_at].split("\t")][1:]
    gpus: list[str] = []
    links: dict[str, dict[str, str]] = {}
    cpu: dict[str, str] = {}
    numa: dict[str, str] = {}
    for line in lines[header_at + 1 :]:
        if not line.strip() or line.startswith("Legend"):
            break
        cells = [c.strip() for c in line.split("\t")]
        label, values = cells[0], cells[1:]
        if not _GPU_LABEL.fullmatch(label):
            continue  # NIC rows
        gpus.append(label)
        row = dict(zip(columns, values, strict=False))
        links[label] = {c: v for c, v in row.items() if _GPU_LABEL.fullmatch(c)}
        cpu[label] = row.get("CPU Affinity", "")
        numa[label] = row.get("NUMA Affinity", "")
    if not gpus:
        raise ValueError("no GPU rows in `nvidia-smi topo -m` output")

    pair_codes = [links[a][b] for i, a in enumerate(gpus) for b in gpus[i + 1 :] if b in links[a]]
    counts = Counter(pair_codes)
    nvlinks = [int(m.group(1)) for code in pair_codes if (m := _NVLINK.fullmatch(code))]
    if len(gpus) == 1:
        interconnect, summary = "single", "one GPU: no GPU-to-GPU links"
    elif nvlinks and len(nvlinks) == len(pair_codes):
        interconnect = "nvlink"
        summary = f"all {len(pair_codes)} GPU pairs over NVLink (at least NV{min(nvlinks)})"
    elif nvlinks:
        interconnect = "mixed"
        summary = f"{len(nvlinks)} of {len(pair_codes)} GPU pairs over NVLink, the rest over PCIe ({_codes(counts)})"
    else:
        interconnect = "pcie"
        summary = f"PCIe only, no NVLink: {_codes(counts)} across {len(pair_codes)} GPU pairs"
    return GpuTopology(
        gpus=gpus,
        links=links,
        cpu_affinity=cpu,
        numa_affinity=numa,
        interconnect=interconnect,
        min_nvlinks=min(nvlinks) if nvlinks else None,
        link_counts=dict(counts),
        summary=summary,
    )


def _codes(counts: Counter[str]) -> str:
    return ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
