"""`python`, `python3`, `python3.X`: the host's interpreter.

`--version` answers with the profile's Python; everything else runs the real
interpreter with the host's site directory (its `sglang`) and the disk-full
guard (disk/write_guard.py) on PYTHONPATH. This
runs before every `python -c` and `python -m sglang.launch_server`, so it reads
world.json with `json` alone instead of loading the typed WorldState.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ...world.clock import WorldClock
from ...world.layout import WorldLayout
from ..disk.write_guard import first_on_pythonpath, guarded_environment
from . import ROOT_VARIABLE


def run(argv: list[str]) -> int:
    layout = WorldLayout(Path(os.environ[ROOT_VARIABLE]))
    state = json.loads(layout.state_file.read_text())
    if argv and argv[0] in ("--version", "-V"):
        print(f"Python {state['profile']['software']['python']}")
        return 0
    env = guarded_environment(dict(os.environ))  # writes into a full virtual mount fail with ENOSPC
    if (layout.site_dir / "sglang").is_dir():
        env = first_on_pythonpath(env, str(layout.site_dir))
    if argv[:2] != ["-m", "sglang.launch_server"]:
        # Only a server's start-up keeps the clock held (its launcher turns the hold into its loading schedule);
        # anything else runs on the host's time like any program.
        WorldClock(layout.sim_dir).release()
    interpreter = state["python"]
    os.execve(interpreter, [interpreter, *argv], env)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
