"""Paths as a simulated host shows them: its `/root`, its `/data`, never the directory on this machine behind them.

A simulated host's filesystem is a directory tree on this machine (its root, R: layout.py). Whatever reaches the
host (a command line, its environment, its stdin, a file's path or text) names host paths, which are translated to
real ones under R on the way in; whatever comes back (output, a file read) has R taken out again, so a tool sees
`/root/models/Kimi-K2.6` as it would on a real host, and a path it read back reaches the same file when it passes
it on.

Why translation below the Host interface rather than a mount namespace per host or an SSH endpoint per host: a
namespace needs privileges a CI machine may lack, and binding a world's tree over this machine's `/root` would hide
anything of this machine that lives there (a checkout, a virtual environment, the real `hf`); an SSH endpoint per
host would still leave the local route (`sim:`) to translate. The same translation serves both routes: SimHost for
`sim:` and the session wrapper of a simulated host's sshd (ssh_session.py, sftp_server.py).

What the host owns, and so what is translated: its home and its mounts (whole trees), its `/dev` (the world's
device files beside links to this machine's null, zero, random, fd...), the simulator's own `/.sim`, and each file
the world placed in a system directory of its own (`/etc/os-release`, `/proc/cpuinfo`, a driver's
`/proc/driver/nvidia/version`, an nvidia-smi off the PATH). Everything else (`/usr/bin`, `/proc/<pid>`, `/tmp`) is
this machine's, as a container's host shares them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

# Whole trees a world may own beside its home and mounts.
_OWNED_TREES = ("/dev", "/.sim")
# System directories whose files the world may place one by one (the rest of each stays this machine's).
_SYSTEM_DIRS = ("etc", "proc", "usr", "opt", "lib", "var", "sys")
# What may come right before a host path in a line (start, blank, quote, `=`, `:`, a redirection...) and right after.
_BEFORE = r"(?<![\w.~/$-])"
_AFTER = r"(?=[/\s'\"`;:|&<>()=,\]}]|$)"


def as_host_shows(root: str, text: str) -> str:
    """`text` with the world's root taken out of every real path in it (what a program of the host tells the world
    outside it: its output, a server's JSON)."""
    if not root or root not in text:
        return text
    return re.sub(re.escape(root) + r"(?![\w.-])", "/", text.replace(root + "/", "/"))


class HostPaths:
    """The translation for the world whose tree is `root`, owning `trees` and `files` (host paths)."""

    def __init__(self, root: str | Path, home: str, trees: Iterable[str], files: Iterable[str] = ()) -> None:
        self.root = os.path.normpath(str(root))
        self.home = home  # the host's home directory, as the host names it
        trees = [home, *trees]
        owned = sorted({*trees, *files}, key=len, reverse=True)
        self._owned = [p.rstrip("/") for p in owned if p.rstrip("/")]
        self._inward = re.compile(_BEFORE + "(" + "|".join(map(re.escape, self._owned)) + ")" + _AFTER)

    @classmethod
    def of_world(cls, root: str | Path, home: str, mount_points: Iterable[str]) -> HostPaths:
        """The translation of a built world: its home and mounts, its owned trees, and its files in system dirs."""
        root = Path(root)
        files = []
        for top in _SYSTEM_DIRS:
            for folder, _, names in os.walk(root / top):
                files += ["/" + os.path.relpath(os.path.join(folder, n), root) for n in names]
        # A tree the world did not make stays this machine's (a /dev without the device links is no /dev).
        trees = [*(m for m in mount_points if m != "/"), *(t for t in _OWNED_TREES if (root / t[1:]).exists())]
        return cls(root, home, trees, files)

    # -- into the host ------------------------------------------------------------------------------------

    def real(self, path: str) -> str:
        """The real path of host path `path` (an absolute path the host does not own is this machine's own)."""
        if not path.startswith("/") or self.is_real(path):
            return path
        return self._inward.sub(lambda m: self.root + m.group(1), path, count=1) if self._inward.match(path) else path

    def is_real(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root + "/")

    def inward(self, text: str) -> str:
        """`text` (a command line, a script, an env value, stdin) with every host path it names made real."""
        return self._inward.sub(lambda m: self.root + m.group(1), text)

    def inward_env(self, env: Mapping[str, str] | None) -> dict[str, str] | None:
        return None if env is None else {name: self.inward(value) for name, value in env.items()}

    # -- out of the host ----------------------------------------------------------------------------------

    def outward(self, text: str) -> str:
        """`text` as the host shows it: the root taken out of every real path in it."""
        return as_host_shows(self.root, text)

    def outward_bytes(self, data: bytes) -> bytes:
        """A file's bytes as the host shows them: text translated, anything else untouched."""
        root = self.root.encode()
        if root not in data:
            return data
        try:
            return self.outward(data.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            return data

    def inward_bytes(self, data: bytes) -> bytes:
        """A file's bytes as written to the host: host paths in text made real, anything else untouched."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        made = self.inward(text)
        return data if made == text else made.encode("utf-8")
