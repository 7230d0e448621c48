"""`python`, `python3`, `python3.X`: the host's interpreter.

`--version` answers with the profile's Python; everything else runs the real
interpreter with the host's site directory (its `sglang`) and host_site/ first
on PYTHONPATH: its sitecustomize installs the sim host's hooks (the disk-full
guard, disk/write_guard.py; the host's clock, host_time.py). Every program it
runs (a script, `-c` code, a module, the simulator's own server) reads and
waits on the world's clock (HOST_TIME_VARIABLE), so what it measures is in the
modelled host's seconds and its waits are the host's. This runs before every
`python -c` and `python -m sglang.launch_server`, so it reads world.json with
`json` alone instead of loading the typed WorldState.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from ...world.clock import WorldClock
from ...world.hardware import boot_time
from ...world.layout import WorldLayout
from ..disk.write_guard import first_on_pythonpath
from ..host_time import HOST_TIME_VARIABLE, variable_value
from ..router_start import ROUTER, start_watcher
from . import ROOT_VARIABLE

HOST_SITE = str(Path(__file__).resolve().parent.parent / "host_site")
SERVER = ["-m", "sglang.launch_server"]  # the simulator's server: its start-up keeps its wrapper's hold


def program_environment(
    env: dict[str, str], layout: WorldLayout, state: dict[str, Any], argv: list[str]
) -> dict[str, str]:
    """The environment the real interpreter runs `argv` with: the host's site directory and host_site/ first on
    PYTHONPATH, and the world's clock."""
    env = dict(env)
    if (layout.site_dir / "sglang").is_dir():
        env = first_on_pythonpath(env, str(layout.site_dir))
    env = first_on_pythonpath(env, HOST_SITE)
    if argv[:2] not in (SERVER, ROUTER):
        # Only a server's start-up keeps the clock held (its launcher turns the hold into its loading schedule), and
        # the gateway's (router_start.py gives the hold back); anything else runs on the host's time like any program.
        WorldClock(layout.sim_dir).release()
    boot = boot_time(layout)
    env[HOST_TIME_VARIABLE] = variable_value(str(layout.sim_dir), boot if math.isfinite(boot) else 0.0)
    return env


def run(argv: list[str]) -> int:
    layout = WorldLayout(Path(os.environ[ROOT_VARIABLE]))
    state = json.loads(layout.state_file.read_text())
    if argv and argv[0] in ("--version", "-V"):
        print(f"Python {state['profile']['software']['python']}")
        return 0
    env = program_environment(dict(os.environ), layout, state, argv)
    if argv[:2] == ROUTER:
        start_watcher(str(layout.sim_dir), os.getpid(), argv)
    interpreter = state["python"]
    os.execve(interpreter, [interpreter, *argv], env)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
