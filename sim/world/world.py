"""A running simulated world: one sim host tree and the Hub emulator it downloads from.

The world process owns the Hub emulator (a thread) and the host's directory
tree. Servers the agent launches on the host are separate processes; closing
the world stops those that are still up, so nothing outlives it. A world
reached over SSH keeps its sshd in step with the node's power: a rebooted node
listens again once it is back (world/hardware.py).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..fault_names import FaultName
from ..faults import Fault
from ..host.build import build_host
from ..host.ssh_gateway import SshServer, kill_sshd, restart_sshd, start_sshd, stop_sshd
from ..hub.fixtures import load_fixtures
from ..hub.runner import HubEmulatorThread
from ..profiles import builtin_profiles, load_profile
from ..profiles.cluster import is_cluster_profile
from ..profiles.schema import Profile
from . import hardware
from .gpu_registry import live_holdings
from .layout import SIM_HOST_PREFIX, WORLD_DIR_PREFIX, WorldLayout, world_root, world_runs_at, world_spec
from .ports import read_entry
from .processes import pid_alive
from .state import WorldState

log = logging.getLogger(__name__)

POWER_FAULTS = (FaultName.NODE_DIES, FaultName.NODE_REBOOTS)  # the faults that power a node off
POWER_WATCH_S = 0.1  # how often a world with an sshd looks at its node's power (this machine's seconds)


class SimWorld:
    def __init__(self, state: WorldState, hub: HubEmulatorThread, *, owns_root: bool) -> None:
        self.state = state
        self.hub = hub
        self.ssh: SshServer | None = None
        self._owns_root = owns_root
        self._closed = False
        self._power_watch: threading.Thread | None = None
        self._stop_watch = threading.Event()
        self._ssh_lock = threading.Lock()  # the watch restarts the sshd; close stops it

    @classmethod
    def start_fast(cls, profile: Profile | str, **kwargs: Any) -> SimWorld:
        """A world at the quick-run scales, unless given: serving at the profile's fast_time_scale, loading at its
        fast_load_time_scale. The world's clock stands while its programs work, so this machine's speed does not
        change the figures."""
        if isinstance(profile, str):
            profile = load_profile(profile)
        if kwargs.get("time_scale") is None:
            kwargs["time_scale"] = profile.sim.fast_time_scale
        kwargs.setdefault("load_time_scale", profile.sim.fast_load_time_scale)
        return cls.start(profile, **kwargs)

    @classmethod
    def start(
        cls,
        profile: Profile | str,
        *,
        faults: list[Fault] | tuple[Fault, ...] = (),
        root: Path | None = None,
        time_scale: float | None = None,
        load_time_scale: float | None = None,
        mount_backing: dict[str, Path] | None = None,
    ) -> SimWorld:
        """Build a sim host for `profile` and start its Hub emulator.

        `root` defaults to a new temporary directory, removed again on close;
        a given root must be empty or absent and is kept.
        """
        if isinstance(profile, str):
            profile = load_profile(profile)
        scales = {
            k: v for k, v in {"time_scale": time_scale, "load_time_scale": load_time_scale}.items() if v is not None
        }
        if scales:
            profile = profile.model_copy(update={"sim": profile.sim.model_copy(update=scales)})
        owns_root = root is None
        if root is None:
            root = Path(tempfile.mkdtemp(prefix=f"{WORLD_DIR_PREFIX}{profile.name}-"))
        elif root.exists() and any(root.iterdir()):
            raise FileExistsError(f"{root} is not empty: a sim host needs a fresh directory")
        root = root.resolve()
        fixtures = load_fixtures()
        hub = HubEmulatorThread(
            fixtures,
            faults=list(faults),
            byte_scale=profile.sim.byte_scale,
            time_scale=profile.sim.time_scale,
            download_mb_s=profile.network.download_mb_s,
        )
        hub.start()
        try:
            state = build_host(
                root,
                profile,
                faults=list(faults),
                hub_url=hub.url,
                fixtures=fixtures,
                mount_backing=mount_backing,
            )
        except BaseException:
            hub.stop()
            if owns_root:
                shutil.rmtree(root, ignore_errors=True)
            raise
        return cls(state, hub, owns_root=owns_root)

    @classmethod
    def reopen(cls, root: Path | str, *, hub_port: int = 0) -> SimWorld:
        """Bring back a world whose process ended (killed) from its tree: a new Hub emulator, the same host.

        The host's files, servers still running and registries are left as they are; the Hub (a thread of
        the dead process) is started again, on `hub_port` when it is free (so a download still running on
        the host finds it where it was), else on a new port, and world.json points the host at it. The
        reopened world owns the tree as the one that built it did: closing it removes the tree.
        """
        state = WorldState.load(root)
        hub = None
        for port in dict.fromkeys((hub_port, 0)):
            candidate = HubEmulatorThread(
                load_fixtures(),
                faults=list(state.faults),
                byte_scale=state.byte_scale,
                time_scale=state.time_scale,
                download_mb_s=state.profile.network.download_mb_s,
                port=port,
            )
            try:
                candidate.start()
            except (OSError, RuntimeError, TimeoutError):
                continue
            hub = candidate
            break
        if hub is None:
            raise RuntimeError(f"could not start a Hub emulator for the world at {root}")
        state.hub_url = hub.url
        state.env["HF_ENDPOINT"] = hub.url
        state.save()
        return cls(state, hub, owns_root=True)

    @property
    def root(self) -> Path:
        return Path(self.state.root)

    @property
    def layout(self) -> WorldLayout:
        return self.state.layout

    @property
    def host_spec(self) -> str:
        """The host spec other commands accept for this running world."""
        return world_spec(self.root)

    def start_ssh(self) -> SshServer:
        """Make the host reachable over real SSH too (an sshd on loopback whose sessions land on it)."""
        if self.ssh is None:
            self.ssh = start_sshd(self.layout.sim_dir / "ssh", world_root=self.root)
            if any(self.state.fault(name) is not None for name in POWER_FAULTS):  # only these take the node down
                self._power_watch = threading.Thread(target=self._watch_power, name="sim-power-watch", daemon=True)
                self._power_watch.start()
        return self.ssh

    def _watch_power(self) -> None:
        """Keep the sshd in step with the node's power (world/hardware.py): gone while the node is down (the fault
        killed it already; this catches a connection that raced it), started again as it was (same port, same host
        key) once a rebooted node is back, as a machine's init starts its sshd at boot."""
        while not self._stop_watch.wait(POWER_WATCH_S):
            if not hardware.was_powered_off(self.layout):
                continue
            down = hardware.is_down(self.layout)
            with self._ssh_lock:
                if self.ssh is None or self._closed:
                    return
                running = self.ssh.process.poll() is None
                if down and running:
                    kill_sshd(self.ssh.directory, self.root)
                    self.ssh.process.wait()
                elif not down and not running:
                    try:
                        restart_sshd(self.ssh)
                    except RuntimeError as exc:  # the port was taken meanwhile: the node stays unreachable
                        log.warning("sim node %s: sshd did not come back after the reboot: %s", self.root, exc)
                        return

    def summary(self) -> dict[str, object]:
        """What `specops sim up` prints: enough to reach everything in the world."""
        return {
            "host": self.host_spec,
            "hub_url": self.hub.url,
            "profile": self.state.profile.name,
            "root": str(self.root),
            "home": str(self.layout.home),
            "faults": [f.name.value for f in self.state.faults],
            "time_scale": self.state.time_scale,
            "load_time_scale": self.state.load_time_scale,
            "byte_scale": self.state.byte_scale,
            "pid": os.getpid(),
            **(
                {
                    "ssh_host": self.ssh.url,
                    "ssh_key": str(self.ssh.client_key),
                    "ssh_known_hosts": str(self.ssh.known_hosts),
                }
                if self.ssh is not None
                else {}
            ),
        }

    def close(self, *, keep_root: bool = False) -> None:
        """Stop the host's servers and the Hub; remove the tree if this world made it."""
        if self._closed:
            return
        self._stop_watch.set()
        with self._ssh_lock:
            self._closed = True
            if self.ssh is not None:
                stop_sshd(self.ssh)
        if self._power_watch is not None:
            self._power_watch.join(timeout=15)
        stop_host_processes(self.layout)
        self.hub.stop()
        if self._owns_root and not keep_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SimWorld:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stop_host_processes(layout: WorldLayout, *, grace_s: float = 5.0) -> list[int]:
    """Terminate the live processes the host's registries name (servers, GPU holders), except this one.

    Squatters planted by faults are registered under this process's pid, so
    they are skipped too.
    """
    pids = {holding.pid for holding in live_holdings(layout, exclude_pid=os.getpid())}
    for entry_file in layout.ports_dir.glob("*.json"):
        entry = read_entry(layout, int(entry_file.stem))
        if entry is not None and entry.pid != os.getpid():
            pids.add(entry.pid)
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    alive = sorted(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if pid_alive(pid)]
    for pid in alive:
        _signal(pid, signal.SIGKILL)
    return sorted(pids)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def attach(host_spec: str) -> WorldState:
    """The state of a running world named by its host spec (`sim:NAME` or `sim:/path/to/root`)."""
    if not host_spec.startswith(SIM_HOST_PREFIX):
        raise ValueError(f"not a simulated host spec: {host_spec!r} (expected sim:NAME, as `specops sim up` prints)")
    root, name = world_root(host_spec), host_spec[len(SIM_HOST_PREFIX) :]
    if not name.startswith("/") and not world_runs_at(root):
        if name in builtin_profiles() or is_cluster_profile(name):
            raise ValueError(
                f"{host_spec!r} names a profile, not a running world: start one with `specops sim up {name}` "
                "and use the host it prints"
            )
        raise ValueError(
            f"no running simulated world is named {name!r}: start one with `specops sim up PROFILE` "
            "and use the host it prints"
        )
    return WorldState.load(root)
