"""Host specs: what `--host` accepts, parsed and checked before anything connects.

    local                     this machine
    ssh://user@host[:port]    an SSH host
    NAME                      an entry of the inventory file, else a Host of ~/.ssh/config
    PREFIX:...                a host of a kind a provider registered (kinds.py): sim:/abs/root, a running
                              simulated world (`specops sim up` prints it)

The inventory is YAML, NAME -> {url: ssh://..., <SshOptions fields>} or NAME -> url.
It is the file given, else $SPECOPS_INVENTORY, else ~/.config/specops/hosts.yaml when present.

A spec that cannot be used is refused with an InvalidHostSpec whose message is one line naming
what is wrong: the offending character where one is to blame (`ssh://root@host;rm` has ';'), the
file and what is wrong with it for a damaged inventory or ~/.ssh/config.
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

from specops.tools.inputs import describe_char, first_unprintable, one_line, validation_message

from .errors import InvalidHostSpec, UnknownHostName
from .kinds import host_kind
from .ssh_options import HOSTNAME, USERNAME, SshOptions, SshTarget

INVENTORY_ENV = "SPECOPS_INVENTORY"
DEFAULT_INVENTORY = "~/.config/specops/hosts.yaml"
DEFAULT_SSH_CONFIG = "~/.ssh/config"

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_SSH_URL_CHARS = re.compile(r"[A-Za-z0-9_.:@\[\]/\-]+\Z")
_USER_AT_HOST = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*@[A-Za-z0-9][A-Za-z0-9.\-]*(?::[0-9]+)?\Z")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]+\Z")
_SPECS = "give local, ssh://user@host[:port], a host name or sim:NAME"


class LocalSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["local"] = "local"
    spec: str = "local"


class KindSpec(BaseModel):
    """A host of a kind a provider registered (kinds.py), opened by that kind."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["registered"] = "registered"
    spec: str
    prefix: str


class SshSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["ssh"] = "ssh"
    spec: str
    target: SshTarget
    options: SshOptions


HostSpec = LocalSpec | KindSpec | SshSpec


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
            "empty host spec: give local, ssh://user@host[:port], a host name or sim:NAME", host=str(spec)
        )
    check_host_spec_characters(spec)
    if spec == "local":
        _no_options(spec, options)
        return LocalSpec()
    kind = host_kind(spec)
    if kind is not None:
        _no_options(spec, options)
        kind.check(spec)
        return KindSpec(spec=spec, prefix=kind.prefix)
    if "://" in spec:
        target = _parse_ssh_url(spec)
        # An inventory entry for this very URL gives its options (accept_unknown_host_key, known_hosts, ...) to
        # the URL as to the entry's name: the host is the same however it is named.
        inventory_path = find_inventory(inventory)
        entry = _entry_for_url(inventory_path, spec, target) if inventory_path is not None else None
        base = entry.model_dump(exclude={"url"}, exclude_unset=True) if entry is not None else None
        return SshSpec(spec=spec, target=target, options=_options(spec, options, base))
    return _named_spec(spec, inventory=inventory, ssh_config=ssh_config, options=options)


def check_host_spec_characters(spec: str) -> str:
    """Refuse (InvalidHostSpec, one line naming it) the first character no spec of its kind has; reads no file.

    The kind is told by the spec's start: a registered kind's prefix (kinds.py), a URL (ssh://...), else a host name.
    """
    kind = host_kind(spec)
    if kind is not None:
        allowed, start, what = kind.chars, len(kind.prefix), kind.chars_hint
    elif "://" in spec:
        allowed, start, what = _SSH_URL_CHARS, 0, "an SSH host is ssh://user@host[:port]"
    else:
        allowed, start, what = _NAME_CHARS, 0, f"{_SPECS}; a host name is letters, digits, '-', '_' and '.'"
    bad = next((i for i in range(start, len(spec)) if not allowed.match(spec[i])), None)
    if bad is None:
        return spec
    if spec[bad].isspace() or first_unprintable(spec[bad]) is not None:
        what = f"{_SPECS}, without spaces or control characters"
    elif _USER_AT_HOST.match(spec):
        what += f" (ssh://{spec}?)"
    raise _refused(spec, bad, what)


def _no_options(spec: str, options: dict[str, Any]) -> None:
    if options:
        raise InvalidHostSpec(f"options {sorted(options)} apply to SSH hosts only, not {spec!r}", host=spec)


def _options(spec: str, options: dict[str, Any], base: dict[str, Any] | None = None) -> SshOptions:
    try:
        return SshOptions.model_validate({**(base or {}), **options})
    except ValidationError as exc:
        raise InvalidHostSpec(f"bad SSH options for {spec}: {validation_message(exc)}", host=spec) from None


def _refused(spec: str, index: int, what_to_do: str) -> InvalidHostSpec:
    """A refusal naming spec[index], the character to blame, and where it is."""
    where = f'right after "{spec[:index]}"' if index else "at its start"
    char = spec[index]
    return InvalidHostSpec(f"host spec {spec!r} has {describe_char(char)} {where}: {what_to_do}", host=spec, char=char)


def _parse_ssh_url(spec: str) -> SshTarget:
    check_host_spec_characters(spec)
    try:
        parts = urlsplit(spec)
    except ValueError as exc:  # an unclosed [ of an IPv6 address, say
        raise InvalidHostSpec(f"{spec!r} is not an SSH URL ({exc}): use ssh://user@host[:port]", host=spec) from None
    if parts.scheme != "ssh":
        raise InvalidHostSpec(f"unknown scheme {parts.scheme!r} in {spec!r}: only ssh:// is supported", host=spec)
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.password is not None:
        raise InvalidHostSpec(f"{spec!r}: an SSH host spec is ssh://user@host[:port], nothing more", host=spec)
    try:
        hostname = parts.hostname or ""
    except ValueError:
        hostname = ""
    if not hostname or not HOSTNAME.match(hostname):
        raise InvalidHostSpec(f"{spec!r} has no valid host name", host=spec)
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port is None:
        port = 22
    if not 1 <= port <= 65535:
        raise InvalidHostSpec(f"{spec!r}: the port must be a number from 1 to 65535", host=spec)
    user = parts.username if parts.username is not None else getpass.getuser()
    if not USERNAME.match(user):
        raise InvalidHostSpec(f"{spec!r}: {user!r} is not a valid user name", host=spec)
    return SshTarget(hostname=hostname, user=user, port=port)


def find_inventory(inventory: str | Path | None) -> Path | None:
    if inventory is not None:
        return Path(inventory).expanduser()
    if os.environ.get(INVENTORY_ENV):
        return Path(os.environ[INVENTORY_ENV]).expanduser()
    default = Path(DEFAULT_INVENTORY).expanduser()
    return default if default.is_file() else None


def _named_spec(
    name: str, *, inventory: str | Path | None, ssh_config: str | Path | None, options: dict[str, Any]
) -> SshSpec:
    if not _NAME.match(name):  # its characters are checked: it starts with '.' or '-'
        raise _refused(name, 0, f"{_SPECS}; a host name starts with a letter, a digit or '_'")
    inventory_path = find_inventory(inventory)
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
    raw = _inventory(path, name).get(name)
    return None if raw is None else _entry(path, name, raw)


def _entry_for_url(path: Path, spec: str, target: SshTarget) -> InventoryEntry | None:
    """The first inventory entry whose url is the same host, user and port as `target`; None when none is."""
    if not path.is_file():
        return None
    for name, raw in _inventory(path, spec).items():
        url = raw if isinstance(raw, str) else raw.get("url") if isinstance(raw, dict) else None
        if not isinstance(url, str):
            continue
        try:
            same = _parse_ssh_url(url) == target
        except InvalidHostSpec:
            continue  # an entry with a broken url is said when that entry is used by name
        if same:
            return _entry(path, str(name), raw)
    return None


def _inventory(path: Path, host: str) -> dict[Any, Any]:
    """The inventory file's mapping; InvalidHostSpec (naming the file and what is wrong) when it has none."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise InvalidHostSpec(f"inventory file {path} does not exist", host=host) from None
    except yaml.YAMLError as exc:
        raise InvalidHostSpec(f"inventory file {path} is not valid YAML: {one_line(str(exc))}", host=host) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidHostSpec(f"cannot read inventory file {path}: {one_line(str(exc))}", host=host) from None
    if not isinstance(data, dict):
        raise InvalidHostSpec(f"inventory file {path} must map host names to entries", host=host)
    return data


def _entry(path: Path, name: str, raw: Any) -> InventoryEntry:
    try:
        return InventoryEntry.model_validate({"url": raw} if isinstance(raw, str) else raw)
    except ValidationError as exc:
        raise InvalidHostSpec(
            f"inventory entry {name!r} in {path} is invalid: {validation_message(exc)}", host=name
        ) from None


def _from_ssh_config(path: Path, name: str) -> tuple[SshTarget, dict[str, Any]] | None:
    try:
        config = paramiko.SSHConfig.from_path(str(path))
    except (paramiko.ssh_exception.ConfigParseError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidHostSpec(f"cannot read {path}: {one_line(str(exc))}", host=name) from None
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
