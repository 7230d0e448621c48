"""The world a sim executable belongs to: the root its wrapper baked in, and its world.json (read untyped)."""

from __future__ import annotations

import os

from ...world.state_view import WorldStateView, load_state_view
from . import ROOT_VARIABLE


def current_world() -> WorldStateView:
    root = os.environ.get(ROOT_VARIABLE)
    if not root:
        raise SystemExit(f"{ROOT_VARIABLE} is not set: this executable belongs to a simulated host")
    return load_state_view(root)
