"""`free` (procps-ng 4): the host's memory in bytes, KiB (default), MiB, GiB, or human-readable."""

from __future__ import annotations

import sys
from collections.abc import Callable

from ..memory import MemoryFigures, host_memory
from ._world import current_world

HEADER = "               total        used        free      shared  buff/cache   available"
_UNITS = {
    "-b": 1,
    "--bytes": 1,
    "-k": 1024,
    "--kibi": 1024,
    "-m": 1024**2,
    "--mebi": 1024**2,
    "-g": 1024**3,
    "--gibi": 1024**3,
    "--tebi": 1024**4,
    "--pebi": 1024**5,
    "--kilo": 1000,
    "--mega": 1000**2,
    "--giga": 1000**3,
    "--tera": 1000**4,
    "--peta": 1000**5,
}


def human(n: int, base: int = 1024) -> str:
    """procps' scaling: one decimal below 10, whole (truncated) units above, `B` for bytes."""
    suffixes = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] if base == 1024 else ["K", "M", "G", "T", "P", "E"]
    if n < base:
        return f"{n}B"
    for power, suffix in enumerate(suffixes, start=1):
        scaled = n / base**power
        if scaled < base or power == len(suffixes):
            return f"{scaled:.1f}{suffix}" if scaled < 10 else f"{int(scaled)}{suffix}"
    raise AssertionError("unreachable")


def render(m: MemoryFigures, cell: Callable[[int], str], total_row: bool) -> str:
    lines = [
        HEADER,
        f"{'Mem:':<9}{cell(m.total):>11} {cell(m.used):>11} {cell(m.free):>11} {cell(m.shared):>11} "
        f"{cell(m.buff_cache):>11} {cell(m.available):>11}",
        f"{'Swap:':<9}{cell(m.swap_total):>11} {cell(m.swap_used):>11} {cell(m.swap_free):>11}",
    ]
    if total_row:
        lines.append(
            f"{'Total:':<9}{cell(m.total + m.swap_total):>11} {cell(m.used + m.swap_used):>11} "
            f"{cell(m.free + m.swap_free):>11}"
        )
    return "\n".join(lines) + "\n"


def run(argv: list[str]) -> int:
    unit, human_base, total = 1024, None, False
    si = "--si" in argv
    for arg in argv:
        if arg in _UNITS:
            unit = _UNITS[arg]
        elif arg in ("-h", "--human"):
            human_base = 1024
        elif arg in ("-t", "--total"):
            total = True
        elif arg == "--si":
            continue
        else:
            text = (
                f"free: unrecognized option '{arg}'"
                if arg.startswith("--")
                else f"free: invalid option -- '{arg[1:2]}'"
            )
            print(f"{text}\n\nUsage:\n free [options]", file=sys.stderr)
            return 1
    if si:
        human_base = 1000 if human_base else None
        unit = {1024: 1000, 1024**2: 1000**2, 1024**3: 1000**3}.get(unit, unit)
    figures = host_memory(current_world().profile)
    cell = (lambda n: human(n, human_base)) if human_base else (lambda n: str(n // unit))
    sys.stdout.write(render(figures, cell, total))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
