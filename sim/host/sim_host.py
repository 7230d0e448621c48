"""A running simulated world as a Host: local commands with the world's environment and home.

A sim host is a directory tree on this machine (specops.sim.world.layout):
commands run here like on `local`, with `{**inherited_environment(), **state.env}`
(its PATH puts the simulated nvidia-smi, hf, python first) and the world's home as
the working directory; relative paths are relative to that home. Paths are the
host's (`/root/models/x`): what goes in is translated to the real paths under the
world's root and what comes out has the root taken out (host_paths.py says why
this way). This machine's Hub token
is not inherited (HUB_TOKEN_VARIABLES): as on a real host, a command has it only
when the caller passes it in the command's env (ToolContext.command_env). Host
ports are virtual: forward() looks the port up in the world's port registry and
hands back the real loopback port that serves it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from specops.tools.hosts import (
    CommandResult,
    ConnectionDropped,
    HostNotRunning,
    HostUnreachable,
    LocalHost,
    PortNotListening,
    RemoteFileNotFound,
    check_argv,
    check_env,
)

from ..world import hardware
from ..world.clock import WorldClock
from ..world.layout import WorldLayout, world_spec
from ..world.ports import PortNotListening as SimPortNotListening
from ..world.ports import resolve_port
from ..world.state import WorldState, WorldStateDamaged
from .host_paths import HostPaths

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
                host=world_spec(root),
            ) from None
        except WorldStateDamaged as exc:
            raise HostNotRunning(
                f"the simulated world at {root} cannot be used: {exc}; start a new one with `specops sim up PROFILE`",
                host=world_spec(root),
            ) from None
        super().__init__(spec=world_spec(self.state.root))
        self.paths = world_paths(self.state)

    @property
    def layout(self) -> WorldLayout:
        return self.state.layout

    @property
    def home(self) -> Path:
        return self.state.layout.home

    def _environment(self, env: Mapping[str, str] | None) -> dict[str, str]:
        return {**inherited_environment(), **self.state.env, **check_env(env)}

    def _path(self, path: str) -> Path:
        if path == "~" or path.startswith("~/"):
            path = self.paths.home + path[1:]
        p = Path(self.paths.real(path))
        return p if p.is_absolute() else self.home / p

    def _cwd(self, cwd: str | None) -> str:
        return str(self._path(cwd) if cwd is not None else self.home)

    # -- what crosses into the host and back: host paths outside, real ones inside ---------------------

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        idempotent: bool = False,
    ) -> CommandResult:
        words = check_argv(argv)
        self._answering()
        done = super().run(
            [self.paths.inward(w) for w in words],
            timeout=timeout,
            cwd=cwd,
            env=self.paths.inward_env(env),
            stdin=None if stdin is None else self.paths.inward(stdin),
            idempotent=idempotent,
        )
        done = done.model_copy(
            update={"argv": words, "stdout": self.paths.outward(done.stdout), "stderr": self.paths.outward(done.stderr)}
        )
        if hardware.is_down(self.state.layout):
            # The node lost power while the command ran (its processes were killed with it): over SSH the
            # connection drops under the command and no new one is answered.
            raise ConnectionDropped(
                f"the connection to {self.spec} dropped while `{' '.join(words)}` ran and could not be "
                "re-established: no route to host (the simulated node is powered off)",
                host=self.spec,
                may_have_run=True,
                partial=done,
            )
        return done

    def _answering(self) -> None:
        """A node that is powered off (world/hardware.py) answers nothing, as a machine without power does: what the
        SSH route raises when no connection can be set up (HostUnreachable)."""
        if hardware.is_down(self.state.layout):
            raise HostUnreachable(
                f"{self.spec} does not answer: no route to host (the simulated node is powered off)", host=self.spec
            )

    def exists(self, path: str) -> bool:
        self._answering()
        return super().exists(path)

    def read_file(self, path: str) -> bytes:
        self._answering()
        try:
            return self.paths.outward_bytes(super().read_file(path))
        except RemoteFileNotFound:
            raise RemoteFileNotFound(f"{path} does not exist on {self.spec}", host=self.spec, path=path) from None

    def write_file(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        self._answering()
        super().write_file(path, self.paths.inward_bytes(data), mode=mode)

    def clock(self) -> float:
        self._answering()
        return WorldClock(self.state.layout.sim_dir).now()  # what the host's `date` prints, without a process

    def sleep(self, seconds: float) -> None:
        # What the host's `sleep` does (commands/sleep.py), without starting a process for it: the world's clock
        # does not pass the end of this wait before this process has seen it.
        self._answering()
        clock = WorldClock(self.state.layout.sim_dir)
        clock.wait_until(clock.now() + max(seconds, 0.0))

    def port_on_host(self, port: int) -> int:
        return self._listening_port(port)

    def _listening_port(self, port: int) -> int:
        self._answering()
        try:
            return resolve_port(self.state.layout, port)
        except SimPortNotListening:
            raise PortNotListening(
                f"nothing listens on port {port} of {self.spec}: is the server up? check its log",
                host=self.spec,
                port=port,
            ) from None


def world_paths(state: WorldState) -> HostPaths:
    """The translation of host paths for the world `state` describes (host_paths.py)."""
    return HostPaths.of_world(state.layout.root, state.layout.host_home, [m.mount_point for m in state.mounts])
