"""Offering the built-in simulated hosts: `sim:` specs.

The tools reach no simulator by import: this module, above both, registers the `sim:` host kind and its
provisioner (sim/hosting.py). Every entry point that opens `sim:` hosts (the CLI, the golden recorder, the eval
runner, the tests) offers them through here.
"""

from __future__ import annotations

from ..sim.hosting import register


def offer_simulated_hosts() -> None:
    """Make `sim:` hosts open and provision (idempotent)."""
    register()
