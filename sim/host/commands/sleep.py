"""`sleep`: waits on the host's clock, which on a sim host is the world's modelled clock (world/clock.py).

GNU sleep's operands (NUMBER[smhd], several summed, `infinity`) and its messages. The wait names its end as the
clock's horizon, so the host's time stands at that end until this sleep has returned: whoever waits for it (a tool
polling a server's start-up) runs its next command at the host time it asked for, however busy this machine is.
"""

from __future__ import annotations

import math
import os
import sys

from . import real_program, world_clock

REAL_SLEEP = real_program("sleep")
UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds_of(operand: str) -> float | None:
    """One operand in seconds (GNU sleep's syntax), None when it is not one."""
    number, unit = (operand[:-1], UNITS[operand[-1]]) if operand[-1:] in UNITS else (operand, 1.0)
    try:
        value = float(number)
    except ValueError:
        return None
    if math.isnan(value) or value < 0 or number.strip() != number or not number:
        return None
    return value * unit


def _usage_error(message: str) -> int:
    print(f"sleep: {message}\nTry 'sleep --help' for more information.", file=sys.stderr)
    return 1


def run(argv: list[str]) -> int:
    if argv and argv[0] in ("--help", "--version") and REAL_SLEEP is not None:
        os.execv(REAL_SLEEP, [REAL_SLEEP, *argv])
    operands = argv[1:] if argv[:1] == ["--"] else argv
    if not operands:
        return _usage_error("missing operand")
    total = 0.0
    for operand in operands:
        seconds = seconds_of(operand)
        if seconds is None:
            return _usage_error(f"invalid time interval '{operand}'")
        total += seconds
    clock = world_clock()
    clock.wait_until(clock.now() + total)
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
