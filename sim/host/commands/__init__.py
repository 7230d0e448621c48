"""One module per executable on a sim host's PATH; each runs as `python -m` from a tiny shell wrapper.

The wrapper holds the world's clock before the interpreter starts (world/clock.py); a command gives the hold back
when it exits (here, for all of them) or when it hands over to a real program (exec), so the host's time runs on
between commands from the moment each one ends.
"""

import atexit
import os
from pathlib import Path

from ...world.layout import ROOT_VARIABLE  # set by every wrapper script: the world the executable belongs to

__all__ = ["ROOT_VARIABLE"]


def _release_clock() -> None:
    root = os.environ.get(ROOT_VARIABLE)
    if root:
        from ...world.clock import WorldClock
        from ...world.layout import WorldLayout

        WorldClock(WorldLayout(Path(root)).sim_dir).release()


atexit.register(_release_clock)
