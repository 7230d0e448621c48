"""One module per executable on a sim host's PATH; each runs as `python -m` from a tiny shell wrapper.

The wrapper holds the world's clock before the interpreter starts (world/clock.py); a command gives the hold back
when it exits (here, for all of them) or when it hands over to a real program (exec), so the host's time runs on
between commands from the moment each one ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ...world.layout import ROOT_VARIABLE, WorldLayout  # ROOT_VARIABLE: set by every wrapper script

if TYPE_CHECKING:
    from ...world.clock import WorldClock

__all__ = ["ROOT_VARIABLE", "real_program", "world_clock"]


def world_clock() -> WorldClock:
    """The clock of the world this executable belongs to (the root its wrapper baked in)."""
    from ...world.clock import WorldClock  # here: most commands only release it at exit, if at all

    return WorldClock(WorldLayout(Path(os.environ[ROOT_VARIABLE])).sim_dir)


def real_program(name: str) -> str | None:
    """This machine's own `name` (coreutils), which a command hands over to: never the world's wrapper on PATH."""
    return next((p for p in (f"/usr/bin/{name}", f"/bin/{name}") if Path(p).is_file()), None) or shutil.which(name)


def _release_clock() -> None:
    if os.environ.get(ROOT_VARIABLE):
        world_clock().release()


atexit.register(_release_clock)
