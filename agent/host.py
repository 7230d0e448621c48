"""The host a run acts on, opened before anything else happens, and closed at the end.

The run gets its host as a HostRequest (the spec and the options some kinds
take, parsed once). A host that a registered provisioner brings up for the run
(tools/hosts/kinds.py: `sim:seed-ct200`, a simulated world started from a
profile with the faults and time scale asked for) is brought up, opened, and
taken down afterwards (servers it runs stop with it); any other spec (`local`,
`ssh://...`, inventory names, a group, `sim:NAME` of a world already up) is
opened as it is. The run never asks what kind of host it has. A host that
cannot be opened or does not answer is HostNotAnswering, with the reason, and
nothing on it changed.

The run records what it opened in a host_opened event (the world's directory,
its Hub, the home and writable roots); `reopen_run_host` uses it to bring a
killed run's host back for `specops resume`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specops.tools.context import ToolContext
from specops.tools.hosts import Host, HostError, HostRequest, Provisioned, open_host
from specops.tools.hosts.kinds import ProvisionFailed, provisioner_for
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


# How a run gets its host: the request -> a context manager yielding the RunHost.
HostOpener = Callable[[HostRequest], AbstractContextManager[RunHost]]


def is_provisioned(spec: str) -> bool:
    """Whether the run brings the host `spec` names up itself (and takes it down after)."""
    return provisioner_for(spec) is not None


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
def open_run_host(request: HostRequest | str) -> Iterator[RunHost]:
    """The run's host (and its ToolContext); a host brought up for the run is taken down on exit. A host group
    (several nodes, or a provisioned cluster) opens every node: rank 0's context is the run's, with the others as
    its peers."""
    request = request if isinstance(request, HostRequest) else HostRequest(spec=request)
    spec = request.spec
    provisioner = provisioner_for(spec)
    if provisioner is None:
        if request.options:
            raise HostNotAnswering(
                f"{', '.join(request.options)} apply to hosts a run brings up (sim:PROFILE) only, not {spec!r}"
            )
        with _open_provisioned(spec, Provisioned(open_spec=spec, group=is_host_group(spec))) as run_host:
            yield run_host
        return
    with ExitStack() as up:  # taken down when the run ends, however it ends
        try:
            provisioned = up.enter_context(provisioner.provision(request))
        except (ProvisionFailed, ValueError) as exc:
            raise HostNotAnswering(str(exc)) from None
        with _open_provisioned(spec, provisioned) as run_host:
            yield run_host


@contextmanager
def reopen_run_host(described: dict[str, Any]) -> Iterator[RunHost]:
    """The host a killed run had opened (its host_opened event), for resuming it.

    A host the run had brought up died with it; where its provisioner can bring it back from what the run
    recorded (a simulated world's tree is still on disk), it is, and taken down at the end as the run would have.
    Any other host is opened again as it is.
    """
    spec = str(described.get("spec", ""))
    provisioner = provisioner_for(spec)
    again = None
    if provisioner is not None:
        try:
            again = provisioner.reprovision(described.get("sim") or {})
        except (ProvisionFailed, ValueError) as exc:
            raise HostNotAnswering(str(exc)) from None
    if again is None:
        with open_run_host(spec) as run_host:
            run_host.context.allow(described.get("allowed_roots") or ())
            yield run_host
        return
    with ExitStack() as up:
        try:
            provisioned = up.enter_context(again)
        except (ProvisionFailed, ValueError) as exc:
            raise HostNotAnswering(str(exc)) from None
        with _open_provisioned(spec, provisioned) as run_host:
            run_host.context.allow(described.get("allowed_roots") or ())  # what the run was allowed (--allow-root too)
            yield run_host


def _open_provisioned(spec: str, provisioned: Provisioned) -> AbstractContextManager[RunHost]:
    facts = dict(provisioned.facts)
    if provisioned.group:
        return _opened_group(spec, provisioned.open_spec, facts, inventory=provisioned.inventory)
    return _opened(spec, provisioned.open_spec, facts)


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
