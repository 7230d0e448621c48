"""The simulator as a provider of hosts (tools/hosts/kinds.py): import this module to offer `sim:` specs.

- `sim:NAME` or `sim:/abs/root`: a running world (`specops sim up` prints it), opened as a SimHost;
- `sim:PROFILE` (a built-in profile name, `sim:seed-ct200`): a world started for a run with the faults and time
  scale asked for, or a cluster profile's nodes (each over SSH, as an inventory group), taken down after the run.

The tools and the agent reach none of this by import: they open what the registry hands them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from urllib.parse import urlparse

from specops.tools.hosts import (
    Host,
    HostKind,
    HostNotRunning,
    HostRequest,
    InvalidHostSpec,
    Provisioned,
    register_host_kind,
    register_provisioner,
)
from specops.tools.hosts.kinds import ProvisionFailed

from .world.layout import SIM_HOST_PREFIX, world_root, world_runs_at

_ROOT_CHARS = re.compile(r"[A-Za-z0-9._/~+@%=:,\-]+\Z")  # what a world's directory is named with


def _running(spec: str) -> bool:
    """Whether `spec` names a running world."""
    return world_runs_at(world_root(spec))


def _check_root_spec(spec: str) -> None:
    rest = spec[len(SIM_HOST_PREFIX) :]
    if not rest:
        raise InvalidHostSpec("sim: needs a running world's name, as `specops sim up` prints it", host=spec)
    if not rest.startswith("/") and not _running(spec):
        raise HostNotRunning(
            f"{spec!r} names a profile, not a running world: start one with `specops sim up {rest}` "
            "and use the host it prints",
            host=spec,
        )


def _open_root(spec: str) -> Host:
    from .host.sim_host import SimHost

    return SimHost(world_root(spec))


RUNNING_WORLD = HostKind(
    prefix=SIM_HOST_PREFIX,
    chars=_ROOT_CHARS,
    chars_hint="a sim: root is a plain path",
    check=_check_root_spec,
    open=_open_root,
)


class SimProfiles:
    """Worlds (and clusters of them) started from a profile for one run."""

    prefix = SIM_HOST_PREFIX

    def provides(self, spec: str) -> bool:
        return (
            spec.startswith(SIM_HOST_PREFIX) and not spec[len(SIM_HOST_PREFIX) :].startswith("/") and not _running(spec)
        )

    def check(self, request: HostRequest) -> None:
        """The profile exists and every fault parses (a cluster's may name a node); starts nothing."""
        from .faults import describe_fault_error, parse_fault
        from .profiles import ProfileInvalid, UnknownProfileError, load_profile
        from .profiles.cluster import is_cluster_profile, load_cluster_profile
        from .world.cluster import parse_node_fault

        name = request.spec[len(SIM_HOST_PREFIX) :]
        try:
            nodes = len(load_cluster_profile(name).nodes) if is_cluster_profile(name) else 0
            if not nodes:
                load_profile(name)
        except (UnknownProfileError, ProfileInvalid) as exc:
            raise ProvisionFailed(f"{' '.join(str(exc).split())} (see `specops sim profiles`)") from None
        for spec in _faults(request):
            try:
                parse_node_fault(spec, nodes) if nodes else parse_fault(spec)
            except ValueError as exc:  # a ValidationError too
                raise ProvisionFailed(
                    f"{describe_fault_error(spec, exc)} (see `specops sim faults`)", option="faults"
                ) from None

    @contextmanager
    def provision(self, request: HostRequest) -> Iterator[Provisioned]:
        from .profiles.cluster import is_cluster_profile

        name = request.spec[len(SIM_HOST_PREFIX) :]
        if is_cluster_profile(name):
            cluster = _start_cluster(name, request)
            try:
                yield Provisioned(
                    open_spec=cluster.host_group,
                    group=True,
                    inventory=cluster.inventory_path,
                    facts=cluster.summary(),
                )
            finally:
                cluster.close()
            return
        world = _start_world(name, request)
        try:
            yield Provisioned(open_spec=world.host_spec, facts=world.summary())
        finally:
            world.close()

    def reprovision(self, facts: Mapping[str, Any]) -> AbstractContextManager[Provisioned] | None:
        """A killed run's world, reopened from its tree on disk (its Hub started again, on the same port when
        free); a cluster's nodes are not kept, and refused."""
        if facts.get("cluster"):
            raise ProvisionFailed(
                "the simulated cluster ended with the run that started it (its nodes are not kept on disk): "
                "run the goal again"
            )
        if not facts.get("root"):
            return None
        return _reopened(str(facts["root"]), urlparse(str(facts.get("hub_url", ""))).port or 0)


@contextmanager
def _reopened(root: str, hub_port: int) -> Iterator[Provisioned]:
    from .world.world import SimWorld

    if not world_runs_at(root):
        raise ProvisionFailed(f"the simulated world it ran in, {root}, no longer exists")
    try:
        world = SimWorld.reopen(root, hub_port=hub_port)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        raise ProvisionFailed(f"cannot reopen the simulated host at {root}: {exc}") from None
    try:
        yield Provisioned(open_spec=world.host_spec, facts=world.summary())
    finally:
        world.close()


def _start_cluster(profile: str, request: HostRequest) -> Any:
    """A simulated cluster for the run: every node over SSH (its inventory group), the faults per node."""
    from .host.ssh_gateway import SshdMissing
    from .profiles import ProfileInvalid, UnknownProfileError
    from .world.cluster import SimCluster

    try:
        return SimCluster.start(profile, faults=_faults(request), time_scale=_time_scale(request), ssh=True)
    except ValueError as exc:  # a bad node fault (a ValidationError too)
        raise ProvisionFailed(f"bad --sim-fault: {' '.join(str(exc).split())} (see `specops sim faults`)") from None
    except (UnknownProfileError, ProfileInvalid, SshdMissing) as exc:
        raise ProvisionFailed(f"cannot start the simulated cluster {profile!r}: {exc}") from None


def _start_world(profile: str, request: HostRequest) -> Any:
    from .faults import describe_fault_error, parse_fault
    from .profiles import ProfileInvalid, UnknownProfileError
    from .world.world import SimWorld

    faults = []
    for spec in _faults(request):
        try:
            faults.append(parse_fault(spec))
        except ValueError as exc:  # a ValidationError too
            raise ProvisionFailed(
                f"bad --sim-fault: {describe_fault_error(spec, exc)} (see `specops sim faults`)"
            ) from None
    try:
        # The profile's quick-run scales unless told: loading far faster than serving.
        time_scale = _time_scale(request)
        if time_scale is None:
            return SimWorld.start_fast(profile, faults=faults)
        return SimWorld.start(profile, faults=faults, time_scale=time_scale)
    except UnknownProfileError as exc:
        raise ProvisionFailed(f"no simulated host profile {profile!r}: {exc} (see `specops sim profiles`)") from None
    except ProfileInvalid as exc:
        raise ProvisionFailed(f"simulated host profile {profile!r} cannot be used: {exc}") from None


def _faults(request: HostRequest) -> list[str]:
    """The faults asked for (`--sim-fault`): the request's "faults" option."""
    return list(request.options.get("faults") or ())


def _time_scale(request: HostRequest) -> float | None:
    """The time scale asked for (`--time-scale`), if any: the request's "time_scale" option."""
    scale = request.options.get("time_scale")
    return None if scale is None else float(scale)


def register() -> None:
    """Offer `sim:` hosts to open_host and to runs (idempotent)."""
    register_host_kind(RUNNING_WORLD)
    register_provisioner(SimProfiles())


register()
