"""GNU `df -B1 --output=source,fstype,size,used,avail,pcent,target`: one row per mount, sizes in bytes.

The header is `Filesystem Type 1B-blocks Used Avail Use% Mounted on`. Mount
points may hold spaces, so the target is everything after the sixth column.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# The argv words that make df print what parse_df reads.
DF_ARGS = ("df", "-B1", "--output=source,fstype,size,used,avail,pcent,target")
# Filesystems that never hold models: df lists them, planners skip them.
PSEUDO_FSTYPES = frozenset(
    {"tmpfs", "devtmpfs", "overlay", "squashfs", "proc", "sysfs", "cgroup", "cgroup2", "efivarfs"}
)


class DfRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str
    fstype: str
    size_bytes: int
    used_bytes: int
    avail_bytes: int = Field(description="What a non-root user may still write: df's Avail")
    use_percent: int | None
    mount_point: str


def parse_df(text: str) -> list[DfRow]:
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("Filesystem"):
            continue
        parts = line.split(None, 6)
        if len(parts) < 7:
            raise ValueError(f"df line has {len(parts)} columns, expected 7: {line!r}")
        source, fstype, size, used, avail, pcent, target = parts
        rows.append(
            DfRow(
                source=source,
                fstype=fstype,
                size_bytes=int(size),
                used_bytes=int(used),
                avail_bytes=int(avail),
                use_percent=int(pcent.rstrip("%")) if pcent.rstrip("%").isdigit() else None,
                mount_point=target,
            )
        )
    return rows
