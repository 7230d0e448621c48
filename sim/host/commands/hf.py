"""`hf`: the real huggingface_hub CLI, pointed at the world's Hub emulator.

With the BrokenCli fault it does what the seed's CLI did: print the real
`hf --help` and exit 0, downloading nothing.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ...fault_names import FaultName
from ...world.clock import WorldClock
from ..disk.write_guard import guarded_environment
from ._world import current_world

if TYPE_CHECKING:  # annotations only: these run in every sim command, which must start fast
    from ...world.state_view import WorldStateView


def hf_env(world: WorldStateView) -> dict[str, str]:
    env = guarded_environment(dict(os.environ))  # a download into a full virtual mount fails with ENOSPC
    env["HF_ENDPOINT"] = world.hub_url  # the host reaches no other Hub
    env["HF_HUB_DISABLE_TELEMETRY"] = "1"
    env["HF_HUB_DISABLE_UPDATE_CHECK"] = "1"
    env.setdefault("HF_HOME", world.env["HF_HOME"])
    return env


def exec_real_hf(world: WorldStateView, argv: list[str]) -> None:
    WorldClock(world.layout.sim_dir).release()  # a download takes the host's time; only starting was held
    os.execve(world.real_hf, [world.real_hf, *argv], hf_env(world))


def run(argv: list[str]) -> int:
    world = current_world()
    if world.fault(FaultName.BROKEN_CLI) is not None:
        exec_real_hf(world, ["--help"])
    exec_real_hf(world, argv)
    return 0  # not reached: exec replaces this process


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
