"""The executables on a sim host's PATH: tiny shell scripts that run one command module.

Each bakes in the world root and the real interpreter, so it works from any
environment (an agent's `env -i`, a login shell) as long as it is invoked. Each
holds the world's clock (world/clock.py) before the interpreter starts: Python
starting the simulator is this machine's work, never the modelled host's time. None runs on a program's host
clock (host_time.py): the sim's commands keep their own pacing, so each unsets the variable that carries it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..profiles.schema import Profile
from ..world.clock import hold_line
from ..world.layout import WorldLayout
from .host_time import HOST_TIME_VARIABLE

COMMANDS_PACKAGE = "specops.sim.host.commands"


def wrapper_script(root: Path, python: str, module: str) -> str:
    return (
        "#!/bin/sh\n"
        f"{hold_line(str(WorldLayout(root).sim_dir))}\n"
        f"unset {HOST_TIME_VARIABLE}\n"
        f"SPECOPS_SIM_ROOT={shlex.quote(str(root))} exec {shlex.quote(python)} "
        f'-m {COMMANDS_PACKAGE}.{module} "$@"\n'
    )


def host_executables(profile: Profile) -> dict[str, str]:
    """Executable name -> command module, for what this host has installed."""
    major_minor = ".".join(profile.software.python.split(".")[:2])
    names = {
        "nvidia-smi": "nvidia_smi",
        "df": "df",
        "du": "du",
        "free": "free",
        "nproc": "nproc",
        "dmesg": "dmesg",
        "date": "date",
        "sleep": "sleep",
        "ss": "ss",
        "python": "python",
        "python3": "python",
        f"python{major_minor}": "python",
    }
    clis = profile.software.clis
    if "hf" in clis:
        names["hf"] = "hf"
    if "huggingface-cli" in clis:
        names["huggingface-cli"] = "huggingface_cli"
    return names


def write_wrappers(bin_dir: Path, root: Path, python: str, profile: Profile) -> list[Path]:
    bin_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, module in host_executables(profile).items():
        path = bin_dir / name
        path.write_text(wrapper_script(root, python, module))
        path.chmod(0o755)
        written.append(path)
    return written
