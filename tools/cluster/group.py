"""Host groups: what `--host` accepts for several nodes, parsed and checked before anything connects.

    SPEC,SPEC[,...]           a comma-separated list of host specs (tools/hosts/spec.py):
                              `ssh://a,ssh://b:2222`, `sim:/root1,sim:/root2`, `node-a,node-b`
    group:NAME                a group of the inventory file
    NAME                      the same, when NAME is a group of the inventory (else one host, a group of one)

The inventory (spec.py's: the file given, else $SPECOPS_INVENTORY, else ~/.config/specops/hosts.yaml) had
only hosts, NAME -> url or NAME -> {url: ..., <SshOptions fields>}. A group is a NAME whose value is a list
of host specs, each a spec `--host` takes for one host (an inventory host name, ssh://..., sim:/root):

    node-a: ssh://root@10.0.0.1
    node-b: {url: ssh://root@10.0.0.2, port: 2222}
    pair: [node-a, node-b]          # --host group:pair, or --host pair

Members keep their order: rank 0 (the node whose address is the dist-init address) is the first. A member
spec cannot hold a comma (the list's separator), a group cannot name another group, and a node cannot be
listed twice. A group that cannot be used is refused with one InvalidHostGroup line naming the member and
what is wrong with it; nothing is opened or connected to.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from specops.tools.errors import ErrorKind, InvalidToolInput
from specops.tools.hosts import HostNotRunning, InvalidHostSpec
from specops.tools.hosts.spec import HostSpec, KindSpec, SshSpec, find_inventory, parse_host_spec
from specops.tools.inputs import one_line

GROUP_PREFIX = "group:"
MAX_NODES = 64
_GROUP_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_FORMS = "give SPEC,SPEC (host specs separated by commas), group:NAME or an inventory group's NAME"


class InvalidHostGroup(InvalidToolInput):
    """A host group that cannot be used as given: empty, a member spec refused, a node twice, an unknown group."""

    kind = ErrorKind.INVALID_HOST_GROUP


class HostGroup(BaseModel):
    """The nodes a group names, in order: members[0] is rank 0."""

    model_config = ConfigDict(frozen=True)

    spec: str = Field(description="The group as given")
    source: Literal["list", "inventory"]
    group: str | None = Field(default=None, description="The inventory group's name (source=inventory)")
    inventory: str | None = Field(default=None, description="The inventory file the group was read from")
    members: list[Annotated[HostSpec, Field(discriminator="kind")]]

    @property
    def rank0(self) -> HostSpec:
        return self.members[0]

    @property
    def member_specs(self) -> list[str]:
        """Each member's spec as given: what open_host takes (with the same inventory)."""
        return [m.spec for m in self.members]


def _refuse(group: str, what: str, *, member: str | None = None) -> InvalidHostGroup:
    return InvalidHostGroup(
        f"host group {group!r}: {what}",
        remedy=_FORMS,
        details={"group": group, **({"member": member} if member is not None else {})},
    )


def _inventory_groups(path: Path, spec: str) -> dict[str, Any]:
    """The inventory's top-level mapping (hosts and groups), read once; a damaged file is refused in one line."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise _refuse(spec, f"inventory file {path} does not exist") from None
    except yaml.YAMLError as exc:
        raise _refuse(spec, f"inventory file {path} is not valid YAML: {one_line(str(exc))}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(spec, f"cannot read inventory file {path}: {one_line(str(exc))}") from None
    if not isinstance(data, dict):
        raise _refuse(spec, f"inventory file {path} must map host and group names to entries")
    return data


def _inventory_group(
    spec: str, name: str, inventory: str | Path | None, *, required: bool
) -> tuple[list[str], Path] | None:
    """The member specs of inventory group `name`; None when it is no group (and `required` is False)."""
    path = find_inventory(inventory)
    if path is None:
        if required:
            raise _refuse(spec, "no inventory file to read groups from: give --inventory or set $SPECOPS_INVENTORY")
        return None
    data = _inventory_groups(path, spec)
    raw = data.get(name)
    if not isinstance(raw, list):
        if not required:
            return None
        what = "is a host, not a group (a group is a list of host specs)" if raw is not None else "is not defined"
        raise _refuse(spec, f"{name!r} in {path} {what}")
    if not all(isinstance(m, str) for m in raw):
        raise _refuse(spec, f"group {name!r} in {path} must list host specs as strings")
    for member in raw:
        if member.startswith(GROUP_PREFIX) or isinstance(data.get(member), list):
            raise _refuse(spec, f"group {name!r} in {path} names another group, {member!r}: list its hosts instead")
    return list(raw), path


def parse_host_group(
    spec: str,
    *,
    inventory: str | Path | None = None,
    ssh_config: str | Path | None = None,
    **options: Any,
) -> HostGroup:
    """Check and resolve a group; every member is parsed as `--host` parses one host. Connects to nothing.

    `options` (SshOptions fields) apply to every SSH member. Raises InvalidHostGroup.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise _refuse(str(spec), f"empty: {_FORMS}")
    source: Literal["list", "inventory"] = "list"
    group_name: str | None = None
    inventory_file: Path | None = None
    if spec.startswith(GROUP_PREFIX):
        group_name = spec[len(GROUP_PREFIX) :]
        if not _GROUP_NAME.match(group_name):
            raise _refuse(spec, "a group name is letters, digits, '-', '_' and '.', starting with a letter or digit")
        found = _inventory_group(spec, group_name, inventory, required=True)
        assert found is not None
        words, inventory_file = found
        source = "inventory"
    elif "," not in spec and _GROUP_NAME.match(spec) and spec != "local":
        found = _inventory_group(spec, spec, inventory, required=False)
        if found is not None:
            words, inventory_file = found
            group_name, source = spec, "inventory"
        else:
            words = [spec]
    else:
        words = spec.split(",")
    if not words:
        raise _refuse(spec, "the group has no members")
    if len(words) > MAX_NODES:
        raise _refuse(spec, f"{len(words)} members: at most {MAX_NODES} nodes")
    members: list[HostSpec] = []
    for rank, word in enumerate(words):
        if not word.strip():
            raise _refuse(spec, f"member {rank + 1} is empty (two commas in a row, or one at an end)")
        try:
            members.append(parse_host_spec(word, inventory=inventory, ssh_config=ssh_config, **options))
        except (InvalidHostSpec, HostNotRunning) as exc:
            raise _refuse(spec, f"member {rank + 1} ({word!r}): {exc}", member=word) from None
    seen: dict[str, int] = {}
    for rank, member in enumerate(members):
        key = _node_key(member)
        if key in seen:
            raise _refuse(
                spec,
                f"member {rank + 1} ({member.spec!r}) is the same node as member {seen[key] + 1}: list each node once",
                member=member.spec,
            )
        seen[key] = rank
    return HostGroup(
        spec=spec,
        source=source,
        group=group_name,
        inventory=str(inventory_file) if inventory_file is not None else None,
        members=members,
    )


def _node_key(member: HostSpec) -> str:
    """What makes two members the same node: the SSH user@host:port, a registered kind's spec, or `local`."""
    if isinstance(member, SshSpec):
        target = member.target
        return f"ssh:{target.user}@{target.hostname.lower()}:{target.port}"
    if isinstance(member, KindSpec):
        return member.spec
    return "local"
