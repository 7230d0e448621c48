"""`ps`: the host's processes only, not this machine's.

The processes of a sim host are real processes here (its servers, downloads, shells),
so the real `ps` answers, and its rows are then kept only for the world's own
processes: those started with the world's environment (SPECOPS_SIM_ROOT is this
world's root, as every command run on the host has it) and those the world records
as holding a port or GPU memory (a fault's squatter). Headers stay. The pid column
is found by the header, or by the `-o` format when headers are off; a listing with
neither is refused rather than shown unfiltered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ...world.layout import WorldLayout
from . import ROOT_VARIABLE

SYSTEM_PS = "/usr/bin/ps" if Path("/usr/bin/ps").exists() else "/bin/ps"


def world_pids(layout: WorldLayout) -> set[int]:
    """Live processes that belong to the world: its environment, or its port and GPU records."""
    marker = f"{ROOT_VARIABLE}={layout.root}".encode()
    pids: set[int] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                pids.add(int(proc.name))
        except OSError:  # gone, or another user's
            continue
    for folder in (layout.ports_dir, layout.gpu_dir):
        for record in folder.glob("*.json") if folder.is_dir() else []:
            try:
                pid = int(json.loads(record.read_text()).get("pid", -1))
            except (OSError, ValueError):
                continue
            if Path(f"/proc/{pid}").exists():
                pids.add(pid)
    pids.discard(os.getpid())  # this filter itself is not a host process
    return pids


def _format_columns(argv: list[str]) -> list[str] | None:
    """The column names of `-o`/`-eo`/`--format` (`pid=,args=` -> [pid, args]); None if no format is given."""
    columns: list[str] = []
    for i, arg in enumerate(argv):
        value = None
        if arg in ("-o", "--format", "-eo", "-Ao") or (arg.startswith("-") and arg.endswith("o") and not arg.startswith("--")):
            value = argv[i + 1] if i + 1 < len(argv) else None
        elif arg.startswith("--format="):
            value = arg.split("=", 1)[1]
        if value:
            columns += [c.split("=")[0].strip().lower() for c in value.replace(" ", ",").split(",") if c.strip()]
    return columns or None


def run(argv: list[str]) -> int:
    layout = WorldLayout(Path(os.environ[ROOT_VARIABLE]))
    done = subprocess.run([SYSTEM_PS, *argv], capture_output=True, text=True, timeout=30)
    if done.returncode != 0 and not done.stdout:
        sys.stderr.write(done.stderr)
        return done.returncode
    lines = done.stdout.splitlines()
    columns = _format_columns(argv)
    header = lines[0].split() if lines else []
    if "PID" in header:
        at, body, out = header.index("PID"), lines[1:], [lines[0]]
    elif columns and "pid" in columns:
        at, body, out = columns.index("pid"), lines, []
    else:
        print(f"ps: this simulated host shows its processes with a PID column; not: ps {' '.join(argv)}", file=sys.stderr)
        return 1
    mine = world_pids(layout)
    for line in body:
        fields = line.split()
        if len(fields) > at and fields[at].isdigit() and int(fields[at]) in mine:
            out.append(line)
    if out:
        print("\n".join(out))
    # ps exits 1 when a selection (-p, -g) matched nothing; kept as the real one decided.
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
