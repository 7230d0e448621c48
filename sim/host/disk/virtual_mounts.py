"""Which of a sim host's virtual mounts holds a path: what the disk guard and the allocation view both ask.

Loaded lazily: these run inside every program a sim host's python starts, which must start fast, and most
programs never touch a virtual mount.
"""

from __future__ import annotations

import os
from typing import Any


class VirtualMounts:
    """The world's mounts, loaded on the first question about a path inside the world."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._state: Any = None

    def holding(self, path: str) -> tuple[Any, Any] | None:
        """(world state, mount) when `path` lies on a virtual mount of this world; None otherwise."""
        real = os.path.realpath(path)
        if not real.startswith(self.root + os.sep):
            return None
        from pathlib import Path

        from ...world.layout import WorldLayout

        if real.startswith(f"{WorldLayout(Path(self.root)).sim_dir}{os.sep}"):
            return None  # the simulator's own bookkeeping: not on any disk the host reports
        from ...world.state_view import load_state_view
        from .usage import mount_of

        if self._state is None:
            self._state = load_state_view(self.root)
        mount = mount_of(self._state, real)
        return (self._state, mount) if mount.kind == "virtual" else None
