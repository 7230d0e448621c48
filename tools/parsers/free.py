"""`free -b`: the Mem: and Swap: rows in bytes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class MemoryInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    total_bytes: int
    used_bytes: int
    available_bytes: int
    swap_total_bytes: int


def parse_free(text: str) -> MemoryInfo:
    header: list[str] = []
    mem: dict[str, int] = {}
    swap_total = 0
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "total":
            header = words
        elif words[0] == "Mem:":
            mem = dict(zip(header, (int(w) for w in words[1:]), strict=False))
        elif words[0] == "Swap:":
            swap_total = int(words[1])
    if "total" not in mem:
        raise ValueError("no Mem: row in `free -b` output")
    return MemoryInfo(
        total_bytes=mem["total"],
        used_bytes=mem.get("used", 0),
        # procps before 3.3.10 has no `available` column: free is the closest figure.
        available_bytes=mem.get("available", mem.get("free", 0)),
        swap_total_bytes=swap_total,
    )
