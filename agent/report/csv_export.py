"""benchmarks.csv: the report's benchmark rows as a table a spreadsheet or pandas reads, one row per configuration
and level; an interval is two columns (low, high), a list of seqs one space-separated cell."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .schema import BenchmarkRow

# The fields that hold an interval (low, high): two columns each.
_INTERVALS = frozenset(name for name, f in BenchmarkRow.model_fields.items() if "tuple" in str(f.annotation))


def _columns() -> list[str]:
    columns = []
    for name in BenchmarkRow.model_fields:
        columns += [f"{name}_low", f"{name}_high"] if name in _INTERVALS else [name]
    return columns


def _cells(row: BenchmarkRow) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for name, value in row.model_dump(mode="python").items():
        if name in _INTERVALS:
            cells[f"{name}_low"], cells[f"{name}_high"] = value if value is not None else ("", "")
        elif name == "seqs":
            cells[name] = " ".join(map(str, value))
        else:
            cells[name] = "" if value is None else value
    return cells


def write_benchmarks_csv(rows: Sequence[BenchmarkRow], path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=_columns(), restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow(_cells(row))
    return path
