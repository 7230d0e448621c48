"""The world a sim executable belongs to: the root its wrapper baked in, and its world.json."""

from __future__ import annotations

import os

from ...world.state import WorldState
from . import ROOT_VARIABLE


def current_world() -> WorldState:
    root = os.environ.get(ROOT_VARIABLE)
    if not root:
        raise SystemExit(f"{ROOT_VARIABLE} is not set: this executable belongs to a simulated host")
    return WorldState.load(root)
