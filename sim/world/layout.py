"""Where a simulated host keeps things inside its root directory.

A sim host is a directory tree standing for the host's filesystem. The host's
`/` is the root directory itself and every other mount is a directory below it
(`/data` is `<root>/data`). Commands on a sim host run on this machine with
real paths, so the paths the host reports (its home, its mounts in `df`) are
real paths inside the root: nothing the agent does there can touch the
machine's own `/root` or `/data`. The simulator's own bookkeeping lives in
`<root>/.sim/`, which no accounting of the host's disks counts.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# How a host spec names a simulated host: sim:NAME or sim:/path/to/root (a running world), sim:PROFILE (one a run
# starts).
SIM_HOST_PREFIX = "sim:"
# A world started without a root of its own lives in the temporary directory as specops-sim-NAME; it is `sim:NAME`.
WORLD_DIR_PREFIX = "specops-sim-"
# In the environment of every process of a world (its commands, its programs, its servers): the world's root.
ROOT_VARIABLE = "SPECOPS_SIM_ROOT"


def world_spec(root: str | Path) -> str:
    """The host spec of the running world at `root`: `sim:NAME` for one in the temporary directory, as a host's name
    reads (never this machine's scratch path in what a tool says); `sim:/ROOT` for a root the user chose."""
    root = Path(root)
    if root.parent == Path(tempfile.gettempdir()) and root.name.startswith(WORLD_DIR_PREFIX):
        return f"{SIM_HOST_PREFIX}{root.name[len(WORLD_DIR_PREFIX) :]}"
    return f"{SIM_HOST_PREFIX}{root}"


def world_root(spec: str) -> Path:
    """The root a running world's spec names (world_spec's inverse): `sim:/ROOT`, or `sim:NAME` in the temporary
    directory. Whether a world runs there is the caller's question."""
    rest = spec[len(SIM_HOST_PREFIX) :]
    return Path(rest) if rest.startswith("/") else Path(tempfile.gettempdir(), f"{WORLD_DIR_PREFIX}{rest}")


def world_runs_at(root: str | Path) -> bool:
    """Whether a world's tree is at `root` (its state file is there)."""
    return WorldLayout(Path(root)).state_file.is_file()


@dataclass(frozen=True)
class WorldLayout:
    root: Path

    @property
    def sim_dir(self) -> Path:
        return self.root / ".sim"

    @property
    def state_file(self) -> Path:
        """world.json: the WorldState every sim executable reads."""
        return self.sim_dir / "world.json"

    @property
    def bin_dir(self) -> Path:
        """Executables first on the host's PATH: nvidia-smi, df, hf, python, ..."""
        return self.sim_dir / "bin"

    @property
    def site_dir(self) -> Path:
        """On the host's PYTHONPATH: the `sglang` package the host 'has installed'."""
        return self.sim_dir / "site"

    @property
    def gpu_dir(self) -> Path:
        """One JSON file per process holding GPU memory; nvidia-smi lists the live ones."""
        return self.sim_dir / "gpu"

    @property
    def ports_dir(self) -> Path:
        """One JSON file per host port in use: which real loopback port serves it, and who owns it."""
        return self.sim_dir / "ports"

    @property
    def hub_state_dir(self) -> Path:
        """Counters the Hub emulator keeps for faults (throttled requests, cuts done)."""
        return self.sim_dir / "hub"

    @property
    def counters_dir(self) -> Path:
        """Per-fault counters shared by processes (launches crashed so far, ...)."""
        return self.sim_dir / "counters"

    @property
    def home(self) -> Path:
        return self.root / "root"

    @property
    def host_home(self) -> str:
        """The home directory as the host names it."""
        return "/" + self.home.relative_to(self.root).as_posix()

    def host_path(self, path: str | PurePosixPath) -> Path:
        """The real path of a host path: absolute ones are under the root, relative ones under home.

        A path already inside the root is returned as it is.
        """
        p = PurePosixPath(path)
        if str(p).startswith(str(self.root)):
            return Path(p)
        if p.is_absolute():
            return self.root.joinpath(*p.parts[1:])
        return self.home.joinpath(*p.parts)

    def mount_dir(self, mount_point: str) -> Path:
        return self.host_path(mount_point)
