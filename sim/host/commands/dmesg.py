"""`dmesg`: the host's kernel messages since it booted (world/hardware.py), as util-linux prints them.

Plain: `[    901.512345] text`; `-T`/`--ctime`: `[Sat Dec  5 13:02:11 2026] text`, the boot time plus the stamp on the
host's clock. A healthy simulated node's kernel log holds nothing the tools look for; a GPU that fell off the bus
leaves NVRM's Xid 79 lines there.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ...world import hardware
from ...world.clock import WorldClock
from ...world.layout import WorldLayout
from . import ROOT_VARIABLE


def run(argv: list[str]) -> int:
    human = False
    for arg in argv:
        if arg in ("-T", "--ctime"):
            human = True
        elif arg in ("-x", "--decode", "-L", "--color=never", "--nopager", "-P"):
            continue
        else:
            print(f"dmesg: unrecognized option '{arg}'\nTry 'dmesg --help' for more information.", file=sys.stderr)
            return 1
    layout = WorldLayout(Path(os.environ[ROOT_VARIABLE]))
    booted = hardware.boot_time(layout)
    if booted == -float("inf"):
        booted = WorldClock(layout.sim_dir).now()
    for uptime, text in hardware.kernel_log(layout):
        stamp = time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(booted + uptime)) if human else f"{uptime:12.6f}"
        print(f"[{stamp}] {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
