"""A running simulated world as a Host: local commands with the world's environment and home.

A sim host is a directory tree on this machine (specops.sim.world.layout):
commands run here like on `local`, with `{**inherited_environment(), **state.env}`
(its PATH puts the simulated nvidia-smi, hf, python first) and the world's home as
the working directory; relative paths are relative to that home, absolute ones are
real paths (the host reports real paths inside its root). This machine's Hub token
is not inherited (HUB_TOKEN_VARIABLES): as on a real host, a command has it only
when the caller passes it in the command's env (ToolContext.command_env). Host
ports are virtual: forward() looks the port up in the world's port registry and
hands back the real loopback port that serves it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from specops.tools.hosts import HostNotRunning, LocalHost, PortNotListening, check_env

from ..world.clock import WorldClock
from ..world.layout import SIM_HOST_PREFIX, WorldLayout
from ..world.ports import PortNotListening as SimPortNotListening
from ..world.ports import resolve_port
from ..world.state import WorldState, WorldStateDamaged

# This machine's Hub token, where its token file is, and its OIDC exchange (huggingface_hub's get_token reads all
# four): never handed to the simulated host's processes.
HUB_TOKEN_VARIABLES = frozenset({"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_OIDC_RESOURCE"})


def inherited_environment() -> dict[str, str]:
    """What a simulated host's processes take from this process's environment: all of it but the Hub token."""
    return {name: value for name, value in os.environ.items() if name not in HUB_TOKEN_VARIABLES}


class SimHost(LocalHost):
    def __init__(self, root: str | Path) -> None:
        root = Path(root)
        try:
            self.state = WorldState.load(root)
        except FileNotFoundError:
            raise HostNotRunning(
                f"no simulated world at {root} (no .sim/world.json): start one with `specops sim up PROFILE` "
                "and use the host it prints",
                host=f"{SIM_HOST_PREFIX}{root}",
            ) from None
        except WorldStateDamaged as exc:
            raise HostNotRunning(
                f"the simulated world at {root} cannot be used: {exc}; start a new one with `specops sim up PROFILE`",
                host=f"{SIM_HOST_PREFIX}{root}",
            ) from None
        super().__init__(spec=f"{SIM_HOST_PREFIX}{self.state.root}")

    @property
    def layout(self) -> WorldLayout:
        return self.state.layout

    @property
    def home(self) -> Path:
        return self.state.layout.home

    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return {**inherited_environment(), **self.state.env, **check_env(env)}

    def _path(self, path: str) -> Path:
        p = Path(path)
        if str(p).startswith("~"):
            p = Path(str(p).replace("~", str(self.home), 1))
        return p if p.is_absolute() else self.home / p

    def _cwd(self, cwd: str | None) -> str:
        return str(self._path(cwd) if cwd is not None else self.home)

    def clock(self) -> float:
        return WorldClock(self.state.layout.sim_dir).now()  # what the host's `date` prints, without a process

    def port_on_host(self, port: int) -> int:
        return self._listening_port(port)

    def _listening_port(self, port: int) -> int:
        try:
            return resolve_port(self.state.layout, port)
        except SimPortNotListening:
            raise PortNotListening(
                f"nothing listens on port {port} of {self.spec}: is the server up? check its log",
                host=self.spec,
                port=port,
            ) from None
