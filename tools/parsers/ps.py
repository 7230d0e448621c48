"""`ps -eo pid,args`: one process per line, its pid and its command line (words split on spaces)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

PS_ARGS = ("ps", "-eo", "pid=,args=")


class PsRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    pid: int
    args: str

    @property
    def words(self) -> list[str]:
        """ps joins argv with spaces, so a word with a space in it is split: /proc/PID/cmdline is exact."""
        return self.args.split()


def parse_ps(text: str) -> list[PsRow]:
    rows = []
    for line in text.splitlines():
        parts = line.strip().split(None, 1)
        if not parts or not parts[0].isdigit():
            continue  # a header line (without `pid=`), or blank
        rows.append(PsRow(pid=int(parts[0]), args=parts[1] if len(parts) > 1 else ""))
    return rows
