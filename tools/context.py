"""What every tool call gets: the host, where it may write, and the secrets it may use.

A ToolContext is made once per run. `allowed_roots` bounds what tools may
create or delete on the host (a download directory, a freed cache): anything
outside is refused before a command runs. Secrets (the Hub token) live here as
SecretStr and reach commands only through their environment, never their argv,
so they never appear in a command line, a transcript or a log.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import SecretStr

from .errors import PathOutsideAllowedRoots
from .handles import RunHandles
from .hosts import Host

# Pseudo and system filesystems: never a place for models.
_SYSTEM_MOUNTS = ("/boot", "/dev", "/proc", "/sys", "/run", "/snap", "/efi")


@dataclass
class ToolContext:
    host: Host
    home: str
    allowed_roots: tuple[str, ...]
    hub_token: SecretStr | None = None
    command_timeout_s: float = 120.0
    # The user's --launch-wait: the most a server start-up that shows progress is waited for (modelled seconds).
    launch_wait_s: float = 7200.0
    # The user's --stall-wait: how long a start-up's log may stay silent before it is stuck (the host's seconds).
    # SGLang logs every shard loaded and every CUDA graph batch size captured; a 1T-parameter MoE loads in 5-10
    # minutes, slower from a network filesystem, but no step of it is silent for 10.
    stall_wait_s: float = 600.0
    shell_may_change: bool = False  # the shell tool runs only read-only commands unless the policy allows more
    notes: list[str] = field(default_factory=list)
    handles: RunHandles = field(default_factory=RunHandles)  # the servers and downloads this run started, by id
    # The other nodes of the run's host group, rank 1 on (this context is rank 0's); empty on one host.
    peers: tuple[ToolContext, ...] = ()
    group_shared_root: str | None = None  # a root every node shares (host_facts finds it): one download serves all

    @property
    def nodes(self) -> tuple[ToolContext, ...]:
        """Every node of the run, rank 0 (this one) first."""
        return (self, *self.peers)

    @classmethod
    def for_host(
        cls,
        host: Host,
        *,
        allowed_roots: tuple[str, ...] | None = None,
        hub_token: SecretStr | None = None,
    ) -> ToolContext:
        """A context for `host`; by default the run may write under its home and its data mounts.

        Data mounts are those other than the one `/` lies on and system ones
        (/dev, /proc, /run, ...): on a real host `/data` or `/models`.
        """
        home = host.run(["sh", "-c", 'printf %s "$HOME"'], timeout=30).check().stdout.strip() or "/root"
        if allowed_roots is None:
            allowed_roots = (home, *_data_mounts(host))
        return cls(host=host, home=home, allowed_roots=tuple(dict.fromkeys(allowed_roots)), hub_token=hub_token)

    def allow(self, roots: Sequence[str]) -> None:
        """Let the run write under `roots` too (the user's --allow-root), resolved as host paths."""
        self.allowed_roots = tuple(dict.fromkeys([*self.allowed_roots, *(self.resolve(r) for r in roots)]))

    def resolve(self, path: str) -> str:
        """The absolute host path of `path` (relative paths and ~ are under the home)."""
        if path == "~":
            return self.home
        if path.startswith("~/"):
            path = path[2:]
        return posixpath.normpath(path if path.startswith("/") else posixpath.join(self.home, path))

    def writable(self, path: str) -> str:
        """`path` resolved, if it lies under an allowed root; else PathOutsideAllowedRoots."""
        resolved = self.resolve(path)
        for root in self.allowed_roots:
            if resolved == root or resolved.startswith(root.rstrip("/") + "/"):
                return resolved
        raise PathOutsideAllowedRoots(
            f"{resolved} is outside the places this run may write or delete in ({', '.join(self.allowed_roots)})",
            remedy="choose a path under one of them, or allow the directory explicitly (--allow-root)",
            details={"path": resolved, "allowed_roots": list(self.allowed_roots)},
        )

    def command_env(self) -> dict[str, str]:
        """Environment for commands that talk to the Hub: the token, when one is set, and only here."""
        return {"HF_TOKEN": self.hub_token.get_secret_value()} if self.hub_token is not None else {}


def _data_mounts(host: Host) -> list[str]:
    def targets(*paths: str) -> list[str]:
        done = host.run(["df", "-P", *paths], timeout=30)
        return [line.split()[-1] for line in done.stdout.splitlines()[1:] if line.split()] if done.ok else []

    root = targets("/")
    return [
        p
        for p in targets()
        if p not in root and not p.startswith(_SYSTEM_MOUNTS) and not p.rstrip("/").endswith(("/dev/shm", "/tmp"))
    ]
