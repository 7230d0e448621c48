"""Host specs: what `--host` accepts, parsed and checked before anything connects.

    local                     this machine
    ssh://user@host[:port]    an SSH host
    NAME                      an entry of the inventory file, else a Host of ~/.ssh/config
    sim:/abs/root             a running simulated world (`specops sim up` prints it)

The inventory is YAML, NAME -> {url: ssh://..., <SshOptions fields>} or NAME -> url.
It is the file given, else $SPECOPS_INVENTORY, else ~/.config/specops/hosts.yaml when present.
"""

from __future__ import annotations

import fnmatch
import getpass
import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import paramiko
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from specops.sim.world.layout import SIM_HOST_PREFIX

from .errors import InvalidHostSpec, SimHostNotRunning, UnknownHostName
from .ssh_options import HOSTNAME, USERNAME, SshOptions, SshTarget

INVENTORY_ENV = "SPECOPS_INVENTORY"
DEFAULT_INVENTORY = "~/.config/specops/hosts.yaml"
DEFAULT_SSH_CONFIG = "~/.ssh/config"

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_SSH_URL_CHARS = re.compile(r"[A-Za-z0-9_.:@\[\]/\-]+\Z")


class LocalSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["local"] = "local"
    spec: str = "local"


class SimSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["sim"] = "sim"
    spec: str
    root: Path


class SshSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["ssh"] = "ssh"
    spec: str
    target: SshTarget
    options: SshOptions


HostSpec = LocalSpec | SimSpec | SshSpec


class InventoryEntry(SshOptions):
    url: str


def parse_host_spec(
    spec: str,
    *,
    inventory: str | Path | None = None,
    ssh_config: str | Path | None = None,
    **options: Any,
) -> HostSpec:
    """Check and resolve a spec. Raises InvalidHostSpec (a ValueError) and its kinds; connects to nothing."""
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidHostSpec(
            "empty host spec: give local, ssh://user@host[:port], a host name or sim:/root", host=str(spec)
        )
    if any(c.isspace() or not c.isprintable() for c in spec):
        raise InvalidHostSpec(f"host spec {spec!r} contains whitespace or control characters", host=spec)
    if spec == "local":
        _no_options(spec, options)
        return LocalSpec()
    if spec.startswith(SIM_HOST_PREFIX):
        _no_options(spec, options)
        return _sim_spec(spec)
    if "://" in spec:
        target = _parse_ssh_url(spec)
        return SshSpec(spec=spec, target=target, options=_options(spec, options))
    return _named_spec(spec, inventory=inventory, ssh_config=ssh_config, options=options)


def _no_options(spec: str, options: dict[str, Any]) -> None:
    if options:
        raise InvalidHostSpec(f"options {sorted(options)} apply to SSH hosts only, not {spec!r}", host=spec)


def _options(spec: str, options: dict[str, Any], base: dict[str, Any] | None = None) -> SshOptions:
    try:
        return SshOptions.model_validate({**(base or {}), **options})
    except ValidationError as exc:
        raise InvalidHostSpec(f"bad SSH options for {spec}: {exc}", host=spec) from None


def _sim_spec(spec: str) -> SimSpec:
    rest = spec[len(SIM_HOST_PREFIX) :]
    if not rest:
        raise InvalidHostSpec("sim: needs the root of a running world, e.g. sim:/tmp/specops-sim-x", host=spec)
    if not rest.startswith("/"):
        raise SimHostNotRunning(
            f"{spec!r} names a profile, not a running world: start one with `specops sim up {rest}` "
            "and use the host it prints (sim:/path/to/root)",
            host=spec,
        )
    return SimSpec(spec=spec, root=Path(rest))


def _parse_ssh_url(spec: str) -> SshTarget:
    if not _SSH_URL_CHARS.match(spec):
        raise InvalidHostSpec(
            f"host spec {spec!r} has characters no SSH URL needs (shell metacharacters?): use ssh://user@host[:port]",
            host=spec,
        )
    parts = urlsplit(spec)
    if parts.scheme != "ssh":
        raise InvalidHostSpec(f"unknown scheme {parts.scheme!r} in {spec!r}: only ssh:// is supported", host=spec)
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.password:
        raise InvalidHostSpec(f"{spec!r}: an SSH host spec is ssh://user@host[:port], nothing more", host=spec)
    hostname = parts.hostname or ""
    if not hostname or not HOSTNAME.match(hostname):
        raise InvalidHostSpec(f"{spec!r} has no valid host name", host=spec)
    try:
        port = parts.port or 22
    except ValueError:
        raise InvalidHostSpec(f"{spec!r}: the port must be a number from 1 to 65535", host=spec) from None
    user = parts.username or getpass.getuser()
    if not USERNAME.match(user):
        raise InvalidHostSpec(f"{spec!r}: {user!r} is not a valid user name", host=spec)
    return SshTarget(hostname=hostname, user=user, port=port)


def _inventory_path(inventory: str | Path | None) -> Path | None:
    if inventory is not None:
        return Path(inventory).expanduser()
    if os.environ.get(INVENTORY_ENV):
        return Path(os.environ[INVENTORY_ENV]).expanduser()
    default = Path(DEFAULT_INVENTORY).expanduser()
    return default if default.is_file() else None


def _named_spec(
    name: str, *, inventory: str | Path | None, ssh_config: str | Path | None, options: dict[str, Any]
) -> SshSpec:
    if not _NAME.match(name):
        raise InvalidHostSpec(
            f"host spec {name!r} is not local, ssh://user@host[:port], sim:/root or a plain host name", host=name
        )
    inventory_path = _inventory_path(inventory)
    if inventory_path is not None:
        entry = _inventory_entry(inventory_path, name)
        if entry is not None:
            target = _parse_ssh_url(entry.url)
            base = entry.model_dump(exclude={"url"}, exclude_unset=True)
            return SshSpec(spec=name, target=target, options=_options(name, options, base))
    config_path = Path(ssh_config or DEFAULT_SSH_CONFIG).expanduser()
    if config_path.is_file():
        found = _from_ssh_config(config_path, name)
        if found is not None:
            target, base = found
            return SshSpec(spec=name, target=target, options=_options(name, options, base))
    looked = [str(p) for p in (inventory_path, config_path) if p is not None]
    raise UnknownHostName(
        f"no host named {name!r} in {' or '.join(looked)}: add it there, or give ssh://user@host[:port]",
        host=name,
    )


def _inventory_entry(path: Path, name: str) -> InventoryEntry | None:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise InvalidHostSpec(f"inventory file {path} does not exist", host=name) from None
    except yaml.YAMLError as exc:
        raise InvalidHostSpec(f"inventory file {path} is not valid YAML: {exc}", host=name) from None
    if not isinstance(data, dict):
        raise InvalidHostSpec(f"inventory file {path} must map host names to entries", host=name)
    raw = data.get(name)
    if raw is None:
        return None
    try:
        return InventoryEntry.model_validate({"url": raw} if isinstance(raw, str) else raw)
    except ValidationError as exc:
        raise InvalidHostSpec(f"inventory entry {name!r} in {path} is invalid: {exc}", host=name) from None


def _from_ssh_config(path: Path, name: str) -> tuple[SshTarget, dict[str, Any]] | None:
    config = paramiko.SSHConfig.from_path(str(path))
    # lookup() answers for any name (Host * applies to all): only a pattern naming this host counts.
    patterns = [p for p in config.get_hostnames() if p != "*" and not p.startswith("!")]
    if not any(fnmatch.fnmatchcase(name, p) for p in patterns):
        return None
    found = config.lookup(name)
    hostname = found.get("hostname", name)
    if not HOSTNAME.match(hostname):
        raise InvalidHostSpec(f"HostName {hostname!r} for {name!r} in {path} is not a valid host name", host=name)
    try:
        target = SshTarget(
            hostname=hostname, user=found.get("user") or getpass.getuser(), port=int(found.get("port", 22))
        )
    except (ValueError, ValidationError) as exc:
        raise InvalidHostSpec(f"Host {name!r} in {path}: {exc}", host=name) from None
    base: dict[str, Any] = {}
    if found.get("identityfile"):
        base["key_filename"] = found["identityfile"]
    return target, base
