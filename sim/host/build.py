"""Build a simulated host: its directory tree, models, faults, executables and world.json.

`build_host(root, profile, faults=..., hub_url=..., fixtures=...)` lays the host out
under `root` (see specops.sim.world.layout) and returns the saved WorldState that
every command on the host reads.
"""

from __future__ import annotations

import os
import shlex
import sys
import sysconfig
import uuid
from datetime import UTC, datetime
from pathlib import Path

from specops.tools.hosts.port_map import PORT_MAP_VARIABLE

from ..fault_names import FaultName
from ..faults import Fault, FullDisk, NvidiaSmiOffPath, OutOfMemory, PortInUse, find_fault
from ..hub.fixtures import FixtureRepo
from ..profiles.schema import MountSpec, Profile
from ..world import hardware
from ..world.gpu_registry import GpuHolding, register
from ..world.hardware import BOOT_ID
from ..world.layout import WorldLayout
from ..world.ports import PortEntry, write_entry
from ..world.state import MountState, WorldState
from .disk.usage import apparent_bytes
from .memory import shm_size_bytes
from .models import lay_down_models
from .sglang_stub import write_sglang_stub
from .wrappers import write_wrappers

GIB = 1024**3
SHM_MOUNT = "/dev/shm"


class BuildError(ValueError):
    pass


def real_hf_executable() -> str:
    """The real huggingface_hub `hf` of this interpreter: beside it (a venv, pipx), else where its scheme puts
    scripts (`pip install --user`: ~/.local/bin)."""
    places = [Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))]
    if user_scripts := sysconfig.get_path("scripts", f"{os.name}_user"):
        places.append(Path(user_scripts))
    for place in places:
        if (place / "hf").is_file():
            return str(place / "hf")
    looked = ", ".join(dict.fromkeys(str(p) for p in places))
    raise BuildError(f"no real `hf` of {sys.executable} (looked in {looked}): install huggingface_hub for it")


def _mount_dirs(layout: WorldLayout, profile: Profile, mount_backing: dict[str, Path]) -> dict[str, str]:
    """Create one directory per mount; a backed mount is a symlink to its real filesystem."""
    unknown = set(mount_backing) - {m.mount_point for m in profile.mounts}
    if unknown:
        raise BuildError(f"mount_backing names mounts the profile lacks: {sorted(unknown)}")
    paths: dict[str, str] = {}
    for mount in profile.mounts:
        directory = layout.mount_dir(mount.mount_point) if mount.mount_point != "/" else layout.root
        if mount.mount_point in mount_backing:
            if mount.mount_point == "/":
                raise BuildError("/ is the root directory itself and cannot be backed")
            backing = Path(mount_backing[mount.mount_point]).resolve()
            if not backing.is_dir():
                raise BuildError(f"mount {mount.mount_point}: backing {backing} is not a directory")
            directory.parent.mkdir(parents=True, exist_ok=True)
            directory.symlink_to(backing, target_is_directory=True)
        else:
            directory.mkdir(parents=True, exist_ok=True)
        paths[mount.mount_point] = str(directory)
    shm = layout.mount_dir(SHM_MOUNT)
    shm.mkdir(parents=True, exist_ok=True)
    paths[SHM_MOUNT] = str(shm)
    return paths


def _used_at_start(spec: MountSpec, faults: list[Fault]) -> int:
    used = int(spec.used_gib * GIB)
    size = int(spec.size_gib * GIB)
    for fault in faults:
        if isinstance(fault, FullDisk) and fault.mount_point == spec.mount_point:
            used = max(used, size - int(fault.free_gib * GIB))
    return min(used, size)


def _mount_states(
    profile: Profile, faults: list[Fault], paths: dict[str, str], backed: set[str], sim_dir: Path
) -> list[MountState]:
    """/ first, then /dev/shm, then the other mounts, as df lists them."""
    ordered = sorted(profile.mounts, key=lambda m: m.mount_point != "/")
    every_dir = {Path(p) for p in paths.values()}
    states = []

    def stored(point: str) -> int:
        own = Path(paths[point])
        nested = {d for d in every_dir if d != own and d.is_relative_to(own)}
        return apparent_bytes(own, nested | {sim_dir})[0]

    for spec in ordered:
        point = spec.mount_point
        if point in backed:
            st = os.statvfs(paths[point])
            size, used = st.f_blocks * st.f_frsize, (st.f_blocks - st.f_bfree) * st.f_frsize
            kind = "real"
        else:
            size, used, kind = int(spec.size_gib * GIB), _used_at_start(spec, faults), "virtual"
        states.append(
            MountState(
                mount_point=point,
                path=paths[point],
                kind=kind,
                device=spec.device,
                fstype=spec.fstype,
                size_bytes=size,
                used_bytes_at_start=used,
                stored_bytes_at_start=stored(point),
            )
        )
        if point == "/":
            states.append(
                MountState(
                    mount_point=SHM_MOUNT,
                    path=paths[SHM_MOUNT],
                    kind="virtual",
                    device="tmpfs",
                    fstype="tmpfs",
                    size_bytes=shm_size_bytes(profile),
                    used_bytes_at_start=0,
                    stored_bytes_at_start=stored(SHM_MOUNT),
                )
            )
    return states


def _apply_process_faults(layout: WorldLayout, profile: Profile, faults: list[Fault]) -> None:
    """Foreign processes the faults put on the host; they live as long as the world's own process."""
    for fault in faults:
        if isinstance(fault, PortInUse):
            write_entry(
                layout,
                fault.port,
                PortEntry(
                    pid=os.getpid(),
                    real_port=None,
                    owner="foreign",
                    command=f"python3 -m http.server {fault.port}",
                ),
            )
        elif isinstance(fault, OutOfMemory) and fault.foreign_mib_per_gpu > 0:
            register(
                layout,
                GpuHolding(
                    pid=os.getpid(),
                    process_name="python3",
                    gpu_mib={str(i): fault.foreign_mib_per_gpu for i in range(profile.gpus.count)},
                ),
            )


# Where the faulted host's proxy points: the discard port on loopback, where nothing listens (connection refused).
DEAD_PROXY = "http://127.0.0.1:9"


def _nvidia_smi_off_path(layout: WorldLayout, profile: Profile, fault: NvidiaSmiOffPath) -> None:
    """The driver's traces the host's `/proc` and `/dev` show, and the simulated nvidia-smi moved off PATH (to
    `fault.at` inside the root, or gone)."""
    wrapper = layout.bin_dir / "nvidia-smi"
    if fault.at:
        place = layout.host_path(fault.at)
        place.mkdir(parents=True, exist_ok=True)
        wrapper.replace(place / "nvidia-smi")
    else:
        wrapper.unlink()
    module = layout.host_path("/proc/driver/nvidia/version")
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(
        f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {profile.gpus.driver_version}  Release Build\n"
        "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
    )
    boot_id = layout.host_path(BOOT_ID)  # a reboot draws another (world/hardware.py)
    boot_id.parent.mkdir(parents=True, exist_ok=True)
    boot_id.write_text(f"{uuid.uuid4()}\n")
    devices = layout.host_path("/dev")
    devices.mkdir(parents=True, exist_ok=True)
    for name in ["nvidiactl", *(f"nvidia{i}" for i in range(profile.gpus.count))]:
        (devices / name).touch()


# What of this machine's /dev a host's processes use: the host's own /dev (host_paths.py) links to these.
_SHARED_DEVICES = ("null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts", "fd", "stdin", "stdout", "stderr")


def _system_files(layout: WorldLayout, profile: Profile) -> None:
    """What the modelled machine's OS says of itself where a real host's tools read it: /etc/os-release,
    /proc/cpuinfo, its boot id, `uname`; and its /dev, with this machine's null, zero, random... linked in."""
    software = profile.software
    os_release = layout.host_path("/etc/os-release")
    os_release.parent.mkdir(parents=True, exist_ok=True)
    name, _, version = software.os.partition(" ")
    os_release.write_text(f'PRETTY_NAME="{software.os}"\nNAME="{name}"\nVERSION="{version}"\n')
    cpuinfo = layout.host_path("/proc/cpuinfo")
    cpuinfo.parent.mkdir(parents=True, exist_ok=True)
    cpuinfo.write_text(
        "".join(f"processor\t: {i}\nmodel name\t: {profile.cpu.model}\n\n" for i in range(profile.cpu.cores))
    )
    hardware.first_boot(layout)  # its boot id; a reboot draws a new one
    devices = layout.host_path("/dev")
    devices.mkdir(parents=True, exist_ok=True)
    for name in _SHARED_DEVICES:
        if not (devices / name).exists() and Path("/dev", name).exists():
            (devices / name).symlink_to(Path("/dev", name))
    uname = layout.bin_dir / "uname"
    uname.write_text(
        "#!/bin/sh\n# The modelled host's kernel; anything else as this machine's uname says it.\n"
        f'case "$1" in -r|--kernel-release) echo {shlex.quote(software.kernel)} ;; *) exec /bin/uname "$@" ;; esac\n'
    )
    uname.chmod(0o755)


def _without_nvidia_smi(path: str) -> str:
    """PATH less the directories holding an nvidia-smi (this machine's own, where it has one)."""
    return ":".join(d for d in path.split(":") if d and not (Path(d) / "nvidia-smi").exists())


def fault_env(faults: list[Fault]) -> dict[str, str]:
    """What faults change in the host's environment (over host_env's)."""
    env: dict[str, str] = {}
    if find_fault(faults, FaultName.HUB_OFFLINE) is not None:
        # Both spellings: curl reads the lower case only, Python and httpx either. An empty no_proxy overrides one
        # this machine may have (loopback, where the Hub emulator listens, would then bypass the proxy).
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env[name] = DEAD_PROXY
        env.update(no_proxy="", NO_PROXY="")
    return env


def host_env(layout: WorldLayout, profile: Profile, hub_url: str, sglang_installed: bool) -> dict[str, str]:
    env = {
        "PATH": f"{layout.bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(layout.home),
        "USER": profile.user,
        "HOSTNAME": profile.hostname,
        "HF_HOME": str(layout.home / ".cache" / "huggingface"),
        "HF_ENDPOINT": hub_url,
        "HF_HUB_DISABLE_TELEMETRY": "1",
        # The host cannot reach PyPI; `hf` would otherwise try once a day.
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
        "SPECOPS_SIM_ROOT": str(layout.root),
        PORT_MAP_VARIABLE: str(layout.ports_dir),  # its ports are virtual: where each one is served
    }
    if sglang_installed:
        env["PYTHONPATH"] = str(layout.site_dir)
    return env


def build_host(
    root: Path,
    profile: Profile,
    *,
    faults: list[Fault],
    hub_url: str,
    fixtures: dict[str, FixtureRepo],
    mount_backing: dict[str, Path] | None = None,
) -> WorldState:
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    layout = WorldLayout(root)
    if layout.state_file.exists():
        raise BuildError(f"{root} already holds a simulated host")
    for directory in (
        layout.sim_dir,
        layout.bin_dir,
        layout.gpu_dir,
        layout.ports_dir,
        layout.hub_state_dir,
        layout.counters_dir,
        layout.home,
        layout.home / ".cache" / "huggingface",
    ):
        directory.mkdir(parents=True, exist_ok=True)
    backing = dict(mount_backing or {})
    paths = _mount_dirs(layout, profile, backing)
    lay_down_models(layout, profile.models, fixtures, profile.sim.byte_scale)

    state = WorldState(
        root=str(root),
        profile=profile,
        faults=list(faults),
        hub_url=hub_url,
        python=sys.executable,
        real_hf=real_hf_executable(),
        created_at=datetime.now(UTC),
        mounts=[],
        env={},
    )
    version = state.sglang_version
    if version is not None:
        write_sglang_stub(layout.site_dir, root, version)
    _apply_process_faults(layout, profile, state.faults)
    write_wrappers(layout.bin_dir, root, sys.executable, profile)
    _system_files(layout, profile)
    off_path = find_fault(state.faults, FaultName.NVIDIA_SMI_OFF_PATH)
    if isinstance(off_path, NvidiaSmiOffPath):
        _nvidia_smi_off_path(layout, profile, off_path)
    state.mounts = _mount_states(profile, state.faults, paths, set(backing), layout.sim_dir)
    state.env = {**host_env(layout, profile, hub_url, version is not None), **fault_env(state.faults)}
    if off_path is not None:
        state.env["PATH"] = _without_nvidia_smi(state.env["PATH"])
    state.save()
    return state
