"""The host a run acts on, opened before anything else happens, and closed at the end.

`sim:PROFILE` (a built-in profile name, e.g. `sim:seed-ct200`, the default)
starts a simulated world in this process for the run, with the faults and
time scale asked for, and closes it afterwards (servers it runs stop with it).
`sim:/path` attaches to a world `specops sim up` started; `local`, `ssh://...`
and inventory names are opened as they are. A host that cannot be opened or
does not answer is HostNotAnswering, with the reason, and nothing on it changed.

The run records what it opened in a host_opened event (the world's directory,
its Hub, the home and writable roots); `reopen_run_host` uses it to bring a
killed run's host back for `specops resume`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from specops.sim.profiles.cluster import is_cluster_profile
from specops.sim.world.layout import SIM_HOST_PREFIX
from specops.tools.context import ToolContext
from specops.tools.hosts import Host, HostError, open_host
from specops.tools.hub import HubTokenUnreadable, local_hub_token
from specops.transcripts import OpenedHost

DEFAULT_HOST = "sim:seed-ct200"


class HostNotAnswering(RuntimeError):
    """The host could not be opened or did not answer; nothing was done on it."""


@dataclass
class RunHost:
    spec: str  # as given (sim:seed-ct200)
    host: Host
    context: ToolContext
    sim: dict[str, Any] = field(default_factory=dict)  # the world's summary when the run started one

    def opened(self) -> OpenedHost:
        """What the run opened, recorded as its host_opened event (resume opens it again from that)."""
        return OpenedHost(
            spec=self.spec,
            opened=self.host.spec,
            nodes=[ctx.host.spec for ctx in self.context.nodes] if self.context.peers else [],
            home=self.context.home,
            allowed_roots=list(self.context.allowed_roots),
            sim=self.sim,
        )


# How a run gets its host: (spec, sim faults, time scale) -> a context manager yielding the RunHost.
HostOpener = Callable[[str, Sequence[str], "float | None"], AbstractContextManager[RunHost]]


def is_sim_profile(spec: str) -> bool:
    return spec.startswith(SIM_HOST_PREFIX) and not spec[len(SIM_HOST_PREFIX) :].startswith("/")


def is_host_group(spec: str) -> bool:
    """Whether `spec` names several nodes: SPEC,SPEC, group:NAME, or an inventory group's name (a group of one
    is a host)."""
    from specops.tools.cluster.group import GROUP_PREFIX, InvalidHostGroup, parse_host_group

    if "," in spec or spec.startswith(GROUP_PREFIX):
        return True
    try:
        return len(parse_host_group(spec).members) > 1
    except InvalidHostGroup:
        return False


@contextmanager
def open_run_host(spec: str, *, sim_faults: Sequence[str] = (), time_scale: float | None = None) -> Iterator[RunHost]:
    """The run's host (and its ToolContext); a simulated world started for it is closed on exit. A host group
    (several nodes, or a sim cluster profile) opens every node: rank 0's context is the run's, with the others as
    its peers."""
    if is_sim_profile(spec) and is_cluster_profile(spec[len(SIM_HOST_PREFIX) :]):
        cluster = _start_cluster(spec[len(SIM_HOST_PREFIX) :], sim_faults, time_scale)
        try:
            with _opened_group(
                spec, cluster.host_group, cluster.summary(), inventory=cluster.inventory_path
            ) as run_host:
                yield run_host
        finally:
            cluster.close()
        return
    if not is_sim_profile(spec) and is_host_group(spec):
        if sim_faults or time_scale is not None:
            raise HostNotAnswering(f"--sim-fault and --time-scale apply to sim:PROFILE hosts only, not {spec!r}")
        with _opened_group(spec, spec, {}) as run_host:
            yield run_host
        return
    world = None
    if is_sim_profile(spec):
        world = _start_world(spec[len(SIM_HOST_PREFIX) :], sim_faults, time_scale)
    elif sim_faults or time_scale is not None:
        raise HostNotAnswering(f"--sim-fault and --time-scale apply to sim:PROFILE hosts only, not {spec!r}")
    try:
        open_spec = world.host_spec if world is not None else spec
        with _opened(spec, open_spec, world.summary() if world is not None else {}) as run_host:
            yield run_host
    finally:
        if world is not None:
            world.close()


@contextmanager
def reopen_run_host(described: dict[str, Any]) -> Iterator[RunHost]:
    """The host a killed run had opened (its host_opened event), for resuming it.

    A `sim:PROFILE` world was started by the run itself and died with it, but its tree is still on disk:
    it is reopened (its Hub started again, on the same port when free) and closed at the end as the run
    would have. Any other host is opened again as it is.
    """
    spec = str(described.get("spec", ""))
    sim = described.get("sim") or {}
    if sim.get("cluster"):
        raise HostNotAnswering(
            f"the simulated cluster of {spec} ended with the run that started it (its nodes are not kept on disk): "
            "run the goal again"
        )
    if not (is_sim_profile(spec) and sim.get("root")):
        with open_run_host(spec) as run_host:
            run_host.context.allow(described.get("allowed_roots") or ())
            yield run_host
        return
    from specops.sim.world.world import SimWorld

    try:
        world = SimWorld.reopen(sim["root"], hub_port=urlparse(str(sim.get("hub_url", ""))).port or 0)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        raise HostNotAnswering(f"cannot reopen the simulated host of {spec} at {sim['root']}: {exc}") from None
    try:
        with _opened(spec, world.host_spec, world.summary()) as run_host:
            run_host.context.allow(described.get("allowed_roots") or ())  # what the run was allowed (--allow-root too)
            yield run_host
    finally:
        world.close()


@contextmanager
def _opened(spec: str, open_spec: str, sim: dict[str, Any]) -> Iterator[RunHost]:
    try:
        host = open_host(open_spec)
    except (HostError, ValueError, OSError) as exc:
        raise HostNotAnswering(f"cannot open host {spec}: {exc}") from None
    try:
        token = local_hub_token()  # HF_TOKEN, else huggingface_hub's token file; the recorder redacts it
    except HubTokenUnreadable as exc:
        host.close()
        raise HostNotAnswering(f"{exc.what}: {exc.remedy}") from None
    try:
        context = ToolContext.for_host(host, hub_token=token)
    except Exception as exc:  # the first command: a host that does not answer fails here
        host.close()
        raise HostNotAnswering(f"host {spec} does not answer: {exc}") from None
    try:
        yield RunHost(spec=spec, host=host, context=context, sim=sim)
    finally:
        host.close()


@contextmanager
def _opened_group(
    spec: str, group_spec: str, sim: dict[str, Any], *, inventory: Path | None = None
) -> Iterator[RunHost]:
    """Every node of the group opened, each with its context; a node that cannot be opened or does not answer is
    named, and every node opened is closed again."""
    from specops.tools.cluster.group import InvalidHostGroup, parse_host_group

    try:
        group = parse_host_group(group_spec, inventory=inventory)
    except InvalidHostGroup as exc:
        raise HostNotAnswering(f"cannot open host group {spec}: {exc}") from None
    try:
        token = local_hub_token()
    except HubTokenUnreadable as exc:
        raise HostNotAnswering(f"{exc.what}: {exc.remedy}") from None
    hosts: list[Host] = []
    try:
        contexts = []
        for rank, member in enumerate(group.member_specs):
            try:
                hosts.append(open_host(member, inventory=inventory or group.inventory))
            except (HostError, ValueError, OSError) as exc:
                raise HostNotAnswering(f"cannot open node {rank} ({member}) of {spec}: {exc}") from None
            try:
                contexts.append(ToolContext.for_host(hosts[-1], hub_token=token))
            except Exception as exc:
                raise HostNotAnswering(f"node {rank} ({member}) of {spec} does not answer: {exc}") from None
        head = contexts[0]
        head.peers = tuple(contexts[1:])
        yield RunHost(spec=spec, host=head.host, context=head, sim=sim)
    finally:
        for host in hosts:
            host.close()


def _start_cluster(profile: str, sim_faults: Sequence[str], time_scale: float | None):
    """A simulated cluster for the run: every node over SSH (its inventory group), the faults per node."""
    from specops.sim.host.ssh_gateway import SshdMissing
    from specops.sim.profiles import ProfileInvalid, UnknownProfileError
    from specops.sim.world.cluster import SimCluster

    try:
        return SimCluster.start(profile, faults=sim_faults, time_scale=time_scale, ssh=True)
    except ValueError as exc:  # a bad node fault (a ValidationError too)
        raise HostNotAnswering(f"bad --sim-fault: {' '.join(str(exc).split())} (see `specops sim faults`)") from None
    except (UnknownProfileError, ProfileInvalid, SshdMissing) as exc:
        raise HostNotAnswering(f"cannot start the simulated cluster {profile!r}: {exc}") from None


def _start_world(profile: str, sim_faults: Sequence[str], time_scale: float | None):
    from specops.sim.faults import describe_fault_error, parse_fault
    from specops.sim.profiles import ProfileInvalid, UnknownProfileError
    from specops.sim.world.world import SimWorld

    faults = []
    for spec in sim_faults:
        try:
            faults.append(parse_fault(spec))
        except ValueError as exc:  # a ValidationError too
            raise HostNotAnswering(
                f"bad --sim-fault: {describe_fault_error(spec, exc)} (see `specops sim faults`)"
            ) from None
    try:
        # The profile's quick-run scales unless told: loading far faster than serving, and serving as fast
        # as this machine can stream the profile's peak to a benchmark client (the tools convert back).
        if time_scale is None:
            return SimWorld.start_fast(profile, faults=faults)
        return SimWorld.start(profile, faults=faults, time_scale=time_scale)
    except UnknownProfileError as exc:
        raise HostNotAnswering(f"no simulated host profile {profile!r}: {exc} (see `specops sim profiles`)") from None
    except ProfileInvalid as exc:
        raise HostNotAnswering(f"simulated host profile {profile!r} cannot be used: {exc}") from None
