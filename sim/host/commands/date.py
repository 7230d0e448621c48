"""`date`: the host's clock, which on a sim host is the world's modelled clock (world/clock.py).

Printing runs the real `date` on the modelled time (`date -d @SECONDS ...`), so
every format GNU date knows comes out as GNU date writes it. Setting the clock
(`-s`, `--set`) is refused as an unprivileged GNU date refuses it; a date given
with `-d`/`--date`/`-r` is not the clock and goes to the real `date` unchanged.
"""

from __future__ import annotations

import os
import sys

from . import real_program, world_clock

REAL_DATE = real_program("date")


def _names_a_date(argv: list[str]) -> bool:
    return any(
        a in ("-d", "-r", "-f") or a.startswith(("--date", "--reference", "--file", "-d", "-r", "-f")) for a in argv
    )


def run(argv: list[str]) -> int:
    if REAL_DATE is None:
        print("date: not found", file=sys.stderr)
        return 127
    if any(a in ("-s",) or a.startswith(("--set", "-s")) for a in argv):
        print("date: cannot set date: Operation not permitted", file=sys.stderr)
        return 1
    if _names_a_date(argv) or any(a in ("--help", "--version") for a in argv):
        os.execv(REAL_DATE, [REAL_DATE, *argv])
    clock = world_clock()
    now = clock.now()
    clock.release()  # read: the host's time runs on while the real date prints it
    os.execv(REAL_DATE, [REAL_DATE, "-d", f"@{now:.9f}", *argv])


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
