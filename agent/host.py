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
from typing import Any
from urllib.parse import urlparse

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
            home=self.context.home,
            allowed_roots=list(self.context.allowed_roots),
            sim=self.sim,
        )


# How a run gets its host: (spec, sim faults, time scale) -> a context manager yielding the RunHost.
HostOpener = Callable[[str, Sequence[str], "float | None"], AbstractContextManager[RunHost]]


def is_sim_profile(spec: str) -> bool:
    return spec.startswith(SIM_HOST_PREFIX) and not spec[len(SIM_HOST_PREFIX) :].startswith("/")


@contextmanager
def open_run_host(spec: str, *, sim_faults: Sequence[str] = (), time_scale: float | None = None) -> Iterator[RunHost]:
    """The run's host (and its ToolContext); a simulated world started for it is closed on exit."""
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
