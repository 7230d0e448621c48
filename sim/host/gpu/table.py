"""`nvidia-smi` with no arguments: the summary table, laid out as driver 580 prints it."""

from __future__ import annotations

from datetime import datetime

from .devices import SimGpu

_RULE = "+-----------------------------------------+------------------------+----------------------+"
_WIDE_RULE = "+" + "-" * 89 + "+"
_NAME_WIDTH = 27  # longer product names are cut to 24 characters and "..."


def _name(name: str) -> str:
    return name if len(name) <= _NAME_WIDTH else name[: _NAME_WIDTH - 3] + "..."


def _wide(text: str) -> str:
    return f"| {text:<87} |"


def timestamp(now: datetime) -> str:
    """`Wed Dec  2 10:36:48 2026`: ctime's layout, day padded with a space."""
    return now.strftime("%a %b ") + f"{now.day:>2}" + now.strftime(" %H:%M:%S %Y")


def _gpu_rows(gpu: SimGpu) -> list[str]:
    first = f" {gpu.index:>3}  {_name(gpu.name):<31}{'On':<3} "
    bus = f"   {gpu.bus_id} {'Off':>3} "
    ecc = f"{'0':>21} "
    power = f"{round(gpu.power_draw_w)}W"
    cap = f"{round(gpu.power_limit_w)}W"
    second = f" {'N/A':<4} {gpu.temperature_c:>3}C    {'P0':<4}{power:>14} / {cap:>5} "
    memory = f"{str(gpu.memory_used_mib) + 'MiB':>11} / {str(gpu.memory_total_mib) + 'MiB':>9} "
    util = f"{str(gpu.utilization_pct) + '%':>8}{'Default':>13} "
    third = " " * 41
    mig = f"{'Disabled':>21} "
    return [
        f"|{first}|{bus}|{ecc}|",
        f"|{second}|{memory}|{util}|",
        f"|{third}|{' ' * 24}|{mig}|",
        _RULE,
    ]


def _process_rows(gpus: list[SimGpu]) -> list[str]:
    rows = []
    for gpu in gpus:
        for process, mib in gpu.processes:
            name = process.process_name
            if len(name) > 32:  # nvidia-smi keeps the end of a long path
                name = "..." + name[-29:]
            rows.append(
                f"|{gpu.index:>5}   {'N/A':>3}  {'N/A':>3}{process.pid:>16}{'C':>7}   {name:<32}{str(mib) + 'MiB':>14} |"
            )
    return rows or [f"|  {'No running processes found':<86} |"]


def render_table(gpus: list[SimGpu], *, driver_version: str, cuda_version: str, now: datetime) -> str:
    header = f"NVIDIA-SMI {driver_version:<22} Driver Version: {driver_version:<14} CUDA Version: {cuda_version:<8}"
    lines = [
        f"{timestamp(now)}       ",
        _WIDE_RULE,
        f"| {header:<87} |",
        _RULE,
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for gpu in gpus:
        lines.extend(_gpu_rows(gpu))
    lines += [
        "",
        _WIDE_RULE,
        _wide("Processes:"),
        "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|" + "=" * 89 + "|",
        *_process_rows(gpus),
        _WIDE_RULE,
    ]
    return "\n".join(lines) + "\n"
