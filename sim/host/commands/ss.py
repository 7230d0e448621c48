"""`ss`: the host's listening TCP sockets, from the world's port registry.

The host's ports are virtual (sim/world/ports.py): this machine's own sockets are
never shown. `ss -ltnp` and its spellings (-l -t -n -p -H in any grouping, an
optional `sport = :PORT` filter) print what iproute2's ss prints for those ports,
the process that holds each included; other uses are refused, not passed through.
"""

from __future__ import annotations

import re
import shlex
import sys

from ...world.ports import read_entry
from ._world import current_world

_FLAGS = set("ltnpH")
_HEADER = "State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess"


def _options(argv: list[str]) -> tuple[set[str], int | None] | None:
    """The short flags and an optional port filter; None when the command asks for something not modelled."""
    flags: set[str] = set()
    rest: list[str] = []
    for arg in argv:
        if re.fullmatch(r"-[a-zA-Z]+", arg):
            flags.update(arg[1:])
        else:
            rest.append(arg)
    if not flags <= _FLAGS or "l" not in flags or "t" not in flags:
        return None
    if not rest:
        return flags, None
    match = re.fullmatch(r"(?:sport|src)\s*=\s*:(\d+)", " ".join(rest).strip("( )"))
    return (flags, int(match.group(1))) if match else None


def run(argv: list[str]) -> int:
    parsed = _options(argv)
    if parsed is None:
        print(
            f"ss: only listening TCP sockets are modelled on this simulated host (ss -ltnp); "
            f"not: ss {shlex.join(argv)}",
            file=sys.stderr,
        )
        return 1
    flags, only = parsed
    layout = current_world().layout
    lines = [] if "H" in flags else [_HEADER]
    ports = (
        sorted(int(p.stem) for p in layout.ports_dir.glob("*.json") if p.stem.isdigit())
        if layout.ports_dir.is_dir()
        else []
    )
    for port in ports:
        entry = read_entry(layout, port)
        if entry is None or (only is not None and port != only):
            continue
        where = f"127.0.0.1:{port}" if "n" in flags else f"localhost:{port}"
        program = (entry.command.split() or ["python3"])[0].rsplit("/", 1)[-1]
        process = f' users:(("{program}",pid={entry.pid},fd=3))' if "p" in flags else ""
        lines.append(f"LISTEN 0      2048   {where:<18} 0.0.0.0:*{process}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
