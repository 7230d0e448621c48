"""GNU df's output: fields, headers, column widths and rounding (coreutils 9).

Numbers are rounded up, as df does: sizes in blocks (`-B1M` prints 5 for 4.004 MiB),
human-readable sizes to one decimal below 10 and to a whole number above (`-h`
prints 1000G, 4.1M), and percentages (`Use%` is ceil(used*100 / (used+avail))).
Columns are as wide as their widest cell with df's own minimum widths, numbers
right-aligned, text left-aligned, and the last column never padded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .usage import MountUsage

FIELDS = ("source", "fstype", "itotal", "iused", "iavail", "ipcent", "size", "used", "avail", "pcent", "file", "target")
_MIN_WIDTH = {
    "source": 14,
    "fstype": 4,
    "itotal": 5,
    "iused": 5,
    "iavail": 5,
    "ipcent": 4,
    "size": 5,
    "used": 5,
    "avail": 5,
    "pcent": 4,
    "file": 4,
    "target": 0,
}
_LEFT = {"source", "fstype", "file", "target"}
_POWERS = "KMGTPEZY"


class InvalidBlockSize(ValueError):
    pass


@dataclass(frozen=True)
class Units:
    """How sizes print: `human` (-h: 1024, -H: 1000) or blocks of `block_size` bytes with an optional suffix."""

    human: Literal[1024, 1000] | None = None
    block_size: int = 1024
    suffix: str = ""  # `-BM` prints "5M"; `-B1M` prints "5"

    @classmethod
    def parse_block_size(cls, spec: str) -> Units:
        match = re.fullmatch(r"(\d*)([KkMGTPEZY](?:iB|B)?|B)?", spec)
        if not spec or match is None:
            raise InvalidBlockSize(spec)
        number, unit = match.group(1), match.group(2) or ""
        scale = 1
        if unit and unit != "B":
            base = 1000 if unit.endswith("B") and not unit.endswith("iB") else 1024
            scale = base ** (_POWERS.index(unit[0].upper()) + 1)
        size = (int(number) if number else 1) * scale
        if size == 0:
            raise InvalidBlockSize(spec)
        suffix = "" if number else (unit[0].upper() + unit[1:] if unit[0] == "k" else unit)
        return cls(block_size=size, suffix=suffix)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def human_size(n: int, base: int) -> str:
    """df -h / -H: 0, 512, 4.1M, 29G, 1000G (always rounded up)."""
    letters = _POWERS if base == 1024 else "k" + _POWERS[1:]
    exponent = 0
    while n >= base ** (exponent + 1) and exponent < len(letters):
        exponent += 1
    if exponent == 0:
        return str(n)
    unit = base**exponent
    tenths = _ceil_div(n * 10, unit)
    if tenths < 100:
        return f"{tenths // 10}.{tenths % 10}{letters[exponent - 1]}"
    whole = _ceil_div(n, unit)
    if whole >= base and exponent < len(letters):  # 1023.2K rounds up into the next power
        return f"1.0{letters[exponent]}"
    return f"{whole}{letters[exponent - 1]}"


def block_label(block_size: int) -> str:
    """The `1K` of `1K-blocks`: in the base that states the block size exactly (1K, 1M, 1kB, 1.5kB, 1B)."""
    q1024 = q1000 = block_size
    while True:
        by1024, by1000 = q1024 % 1024 == 0, q1000 % 1000 == 0
        if not (by1024 and by1000):
            break
        q1024, q1000 = q1024 // 1024, q1000 // 1000
    base = 1024 if by1024 else 1000
    letters = _POWERS if base == 1024 else "k" + _POWERS[1:]
    exponent = 0
    while block_size >= base ** (exponent + 1) and exponent < len(letters):
        exponent += 1
    unit = base**exponent
    whole, rest = divmod(block_size, unit)
    number = str(whole) if rest == 0 else f"{block_size / unit:.1f}".rstrip("0").rstrip(".")
    prefix = letters[exponent - 1] if exponent else ""
    return number + prefix + ("" if base == 1024 and prefix else "B")


def _percent(used: int, avail: int) -> str:
    total = used + avail
    if total == 0:
        return "-"
    return f"{_ceil_div(used * 100, total)}%"


@dataclass(frozen=True)
class DfRow:
    usage: MountUsage
    file: str  # the argument it was asked about, "-" when listing all
    target: str  # what "Mounted on" shows


@dataclass(frozen=True)
class DfOptions:
    fields: tuple[str, ...]
    units: Units = Units()
    posix: bool = False
    output_mode: bool = False  # --output: its own header names


def headers(options: DfOptions) -> dict[str, str]:
    units = options.units
    if units.human:
        size = "Size"
    elif options.posix:
        size = f"{units.block_size}-blocks"
    else:
        size = f"{block_label(units.block_size)}-blocks"
    avail = "Avail" if options.output_mode or units.human else "Available"
    return {
        "source": "Filesystem",
        "fstype": "Type",
        "itotal": "Inodes",
        "iused": "IUsed",
        "iavail": "IFree",
        "ipcent": "IUse%",
        "size": size,
        "used": "Used",
        "avail": avail,
        "pcent": "Capacity" if options.posix and not options.output_mode else "Use%",
        "file": "File",
        "target": "Mounted on",
    }


def _size(n: int, units: Units) -> str:
    if units.human:
        return human_size(n, units.human)
    return f"{_ceil_div(n, units.block_size)}{units.suffix}"


def _count(n: int, units: Units) -> str:
    return human_size(n, units.human) if units.human else str(n)


def cells(row: DfRow, options: DfOptions) -> dict[str, str]:
    u, units = row.usage, options.units
    return {
        "source": u.mount.device,
        "fstype": u.mount.fstype,
        "itotal": _count(u.inodes_total, units),
        "iused": _count(u.inodes_used, units),
        "iavail": _count(u.inodes_free, units),
        "ipcent": _percent(u.inodes_used, u.inodes_free),
        "size": _size(u.size_bytes, units),
        "used": _size(u.used_bytes, units),
        "avail": _size(u.avail_bytes, units),
        "pcent": _percent(u.used_bytes, u.avail_bytes),
        "file": row.file,
        "target": row.target,
    }


def total_cells(rows: list[DfRow], options: DfOptions) -> dict[str, str]:
    """`--total`: the sum of every listed mount."""
    units = options.units
    size = sum(r.usage.size_bytes for r in rows)
    used = sum(r.usage.used_bytes for r in rows)
    avail = sum(r.usage.avail_bytes for r in rows)
    itotal = sum(r.usage.inodes_total for r in rows)
    iused = sum(r.usage.inodes_used for r in rows)
    return {
        "source": "total",
        "fstype": "-",
        "itotal": _count(itotal, units),
        "iused": _count(iused, units),
        "iavail": _count(itotal - iused, units),
        "ipcent": _percent(iused, itotal - iused),
        "size": _size(size, units),
        "used": _size(used, units),
        "avail": _size(avail, units),
        "pcent": _percent(used, avail),
        "file": "-",
        "target": "-",
    }


def render(table: list[dict[str, str]], options: DfOptions) -> str:
    names = headers(options)
    grid = [[names[f] for f in options.fields]] + [[row[f] for f in options.fields] for row in table]
    widths = [max(_MIN_WIDTH[f], *(len(line[i]) for line in grid)) for i, f in enumerate(options.fields)]
    out = []
    for line in grid:
        parts = []
        for i, (field, text) in enumerate(zip(options.fields, line, strict=False)):
            last = i == len(options.fields) - 1
            if field in _LEFT:
                parts.append(text if last else text.ljust(widths[i]))
            else:
                parts.append(text.rjust(widths[i]))
        out.append(" ".join(parts))
    return "\n".join(out) + "\n"
