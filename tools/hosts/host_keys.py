"""Which host keys an SSH host is checked against, and what is done with a key not known yet.

The rules are OpenSSH's, read from ~/.ssh/config for the host (paramiko.SSHConfig), except where the
host's SshOptions set them (an inventory entry, or the caller):

- known_hosts files: the options' `known_hosts`, else the config's UserKnownHostsFile (one or more
  files; `none` for none), else ~/.ssh/known_hosts. The config's GlobalKnownHostsFile (by default
  /etc/ssh/ssh_known_hosts and ssh_known_hosts2) are checked too, never written.
- a key not in any of them: the options' `accept_unknown_host_key`, else StrictHostKeyChecking:
    yes, ask (OpenSSH's default; specops cannot ask)  refused: HostKeyUnknown, whose one line says how
                                                     to trust the key in the user's words;
    accept-new                                       accepted and recorded in the first known_hosts file;
    no, off                                          as accept-new, and a warning says so.
- a key that differs from the one recorded: always refused (HostKeyMismatch). OpenSSH's `no` would
  connect anyway; specops does not: its commands carry the Hub token in their environment, and a
  changed key is what a man in the middle looks like, so `no` only ever trusts keys never seen.

The config is looked up by the name the user gave when it is a Host of the config (an alias), else by
the host name, as `ssh NAME` would. IdentityFile from the config is offered when the options name no
key file (spec.py already reads it, HostName, User and Port for an alias).
"""

from __future__ import annotations

import fnmatch
import getpass
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko
import structlog

from specops.tools.inputs import one_line

from .errors import HostError, HostKeyUnknown, InvalidHostSpec
from .spec import DEFAULT_INVENTORY, DEFAULT_SSH_CONFIG, INVENTORY_ENV
from .ssh_options import DEFAULT_KNOWN_HOSTS, SshOptions, SshTarget

log = structlog.get_logger(__name__)

DEFAULT_GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")
_REFUSE = frozenset({"yes", "ask"})
_ACCEPT_NEW = "accept-new"
_SAID_NO = frozenset({"no", "off"})


@dataclass(frozen=True)
class HostKeyRules:
    """How one host's key is checked (see the module's docstring for where each part comes from)."""

    spec: str  # the host as the user named it
    target: SshTarget
    config_name: str  # the name ~/.ssh/config was looked up by: an alias, else the host name
    ssh_config: Path
    known_hosts: tuple[Path, ...]  # checked; the first records new keys
    global_known_hosts: tuple[Path, ...]  # checked, never written
    accept_new: bool
    said_no: bool  # StrictHostKeyChecking no/off, taken as accept-new
    decided_by: str  # what set the rule for unknown keys, in the words that set it; "" for OpenSSH's default (ask)
    hash_new: bool  # HashKnownHosts yes: new entries are written hashed
    identity_files: tuple[str, ...]  # IdentityFile of the config, for hosts whose options name no key

    @property
    def record_to(self) -> Path | None:
        return self.known_hosts[0] if self.known_hosts else None

    @property
    def key_name(self) -> str:
        """The host as known_hosts names it: `host`, or `[host]:port` off port 22."""
        t = self.target
        return t.hostname if t.port == 22 else f"[{t.hostname}]:{t.port}"


def host_key_rules(
    target: SshTarget, options: SshOptions, *, spec: str, ssh_config: str | Path | None = None
) -> HostKeyRules:
    """The rules for `target`, from its options and the SSH config (a missing config is an empty one).

    A config that cannot be read is an InvalidHostSpec naming the file, as spec.py says for named hosts.
    """
    config_path = Path(ssh_config or DEFAULT_SSH_CONFIG).expanduser()
    config = _read_config(config_path, spec)
    name = _config_name(config, spec, target)
    found: dict[str, Any] = dict(config.lookup(name)) if config is not None else {}
    chosen = options.model_fields_set

    def expand(value: str) -> Path:
        return Path(_expand_tokens(value, target, name)).expanduser()

    known: tuple[Path, ...]
    if "known_hosts" in chosen:
        known = (options.known_hosts_path,)
    elif "userknownhostsfile" in found:
        known = tuple(expand(v) for v in _words(found["userknownhostsfile"], config_path, spec))
    else:
        known = (Path(DEFAULT_KNOWN_HOSTS).expanduser(),)
    global_words = (
        _words(found["globalknownhostsfile"], config_path, spec)
        if "globalknownhostsfile" in found
        else list(DEFAULT_GLOBAL_KNOWN_HOSTS)
    )
    strict = str(found.get("stricthostkeychecking", "ask")).strip().lower()
    if "accept_unknown_host_key" in chosen:
        accept_new, said_no = options.accept_unknown_host_key, False
        decided_by = f"accept_unknown_host_key: {str(accept_new).lower()}"
    else:
        # An unknown value is taken as `yes`: nothing is trusted by a word specops does not know.
        accept_new, said_no = strict == _ACCEPT_NEW or strict in _SAID_NO, strict in _SAID_NO
        shown = found.get("stricthostkeychecking", "")
        decided_by = f"StrictHostKeyChecking {shown} in {_shown(config_path)}" if strict != "ask" else ""
    return HostKeyRules(
        spec=spec,
        target=target,
        config_name=name,
        ssh_config=config_path,
        known_hosts=known,
        global_known_hosts=tuple(Path(w).expanduser() for w in global_words),
        accept_new=accept_new,
        said_no=said_no,
        decided_by=decided_by,
        hash_new=str(found.get("hashknownhosts", "no")).strip().lower() == "yes",
        identity_files=tuple(found.get("identityfile") or ()) if "key_filename" not in chosen else (),
    )


def load_known_hosts(client: paramiko.SSHClient, rules: HostKeyRules) -> None:
    """Give `client` every key the rules check against (read-only: new ones are appended by the policy)."""
    for path in rules.known_hosts:
        if path.is_file():
            try:
                client.load_system_host_keys(str(path))
            except (OSError, UnicodeDecodeError) as exc:
                raise HostError(
                    f"cannot read the known_hosts file {_shown(path)}: {one_line(str(exc))}; fix its permissions "
                    "or encoding",
                    host=rules.spec,
                ) from None
    for path in rules.global_known_hosts:
        try:
            if path.is_file():
                client.load_system_host_keys(str(path))
        except (OSError, UnicodeDecodeError) as exc:  # another user's file: checked where it can be read
            log.warning("ssh.global_known_hosts_unreadable", file=str(path), error=one_line(str(exc)))


def missing_key_policy(rules: HostKeyRules) -> paramiko.MissingHostKeyPolicy:
    return RecordUnknownHostKey(rules) if rules.accept_new else RefuseUnknownHostKey(rules)


class RefuseUnknownHostKey(paramiko.MissingHostKeyPolicy):
    def __init__(self, rules: HostKeyRules) -> None:
        self.rules = rules

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        raise HostKeyUnknown(unknown_key_message(self.rules, key), host=self.rules.spec, fingerprint=key.fingerprint)


class RecordUnknownHostKey(paramiko.MissingHostKeyPolicy):
    """Trust on first use: accept a key never seen and append it to the first known_hosts file.

    A changed key never gets here: paramiko raises BadHostKeyException for it before any policy is asked.
    """

    def __init__(self, rules: HostKeyRules) -> None:
        self.rules = rules

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        client.get_host_keys().add(hostname, key.get_name(), key)
        path = self.rules.record_to
        if path is not None:
            name = paramiko.HostKeys.hash_host(hostname) if self.rules.hash_new else hostname
            try:
                _append_line(path, f"{name} {key.get_name()} {key.get_base64()}\n")
            except OSError as exc:
                raise HostError(
                    f"accepted the new host key of {hostname} ({key.get_name()} {key.fingerprint}) but cannot record "
                    f"it in {_shown(path)}: {one_line(str(exc))}; fix that file's permissions and connect again",
                    host=self.rules.spec,
                ) from None
        if self.rules.said_no:
            log.warning(
                "ssh.strict_host_key_checking_no",
                host=self.rules.spec,
                config=str(self.rules.ssh_config),
                note="StrictHostKeyChecking no is taken as accept-new: this new host key is accepted and recorded, "
                "a changed one would still be refused",
            )
        log.warning(
            "ssh.host_key_recorded",
            host=self.rules.spec,
            key=f"{key.get_name()} {key.fingerprint}",
            file=str(path) if path is not None else "nowhere (UserKnownHostsFile none)",
            trusted_by=self.rules.decided_by + (" (taken as accept-new)" if self.rules.said_no else ""),
        )


def unknown_key_message(rules: HostKeyRules, key: paramiko.PKey) -> str:
    """One line: whose key is unknown, where it was looked for, and the three ways to trust it."""
    t = rules.target
    looked = [*rules.known_hosts, *(p for p in rules.global_known_hosts if p.is_file())]
    where = ", ".join(_shown(p) for p in looked) or "no known_hosts file (UserKnownHostsFile none)"
    why = f" ({rules.decided_by})" if rules.decided_by else ""
    port = f"-p {t.port} " if t.port != 22 else ""
    record = _in_shell(rules.record_to if rules.record_to is not None else Path(DEFAULT_KNOWN_HOSTS))
    keyscan = f"`ssh-keyscan {port}{t.hostname} >> {record}`"
    if rules.record_to is None:
        keyscan += f" with a UserKnownHostsFile for it in {_shown(rules.ssh_config)}"
    return (
        f"the host key of {rules.key_name} ({key.get_name()} {key.fingerprint}) is not in {where}{why}. "
        f"Check that fingerprint with the host's owner (`ssh-keygen -lf {_host_key_file(key)}` on the host), "
        f"then trust it: run {keyscan}, "
        f"or put `StrictHostKeyChecking accept-new` under `Host {rules.config_name}` in {_shown(rules.ssh_config)}, "
        f"or set `accept_unknown_host_key: true` in {_inventory_entry(rules.spec)}"
    )


def changed_key_message(rules: HostKeyRules, offered: paramiko.PKey, expected: paramiko.PKey) -> str:
    """One line: the key changed, which file holds the old one, and how to replace it if that is expected."""
    holder = next((p for p in (*rules.known_hosts, *rules.global_known_hosts) if _holds(p, rules.key_name)), None)
    file = _shown(holder) if holder is not None else "known_hosts"
    forget = f"ssh-keygen -R {shlex.quote(rules.key_name)}" + (f" -f {_in_shell(holder)}" if holder is not None else "")
    said_no = (
        f" (StrictHostKeyChecking no in {_shown(rules.ssh_config)} lets specops trust new keys, never changed ones)"
        if rules.said_no
        else ""
    )
    return (
        f"the host key of {rules.key_name} changed: it offers {offered.get_name()} {offered.fingerprint}, "
        f"{file} has {expected.get_name()} {expected.fingerprint}{said_no}. If the host was reinstalled, check the "
        f"new fingerprint with its owner, remove the old entry (`{forget}`) and connect again; otherwise someone may "
        "be intercepting the connection"
    )


# -- helpers -----------------------------------------------------------------------------------


def _read_config(path: Path, spec: str) -> paramiko.SSHConfig | None:
    if not path.is_file():
        return None
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except (paramiko.ssh_exception.ConfigParseError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidHostSpec(f"cannot read {path}: {one_line(str(exc))}", host=spec) from None


def _config_name(config: paramiko.SSHConfig | None, spec: str, target: SshTarget) -> str:
    """The alias the user gave when the config has a Host for it that leads to this host, else the host name."""
    if config is None or "://" in spec:
        return target.hostname
    patterns = [p for p in config.get_hostnames() if p != "*" and not p.startswith("!")]
    if any(fnmatch.fnmatchcase(spec, p) for p in patterns) and config.lookup(spec).get("hostname", spec) == (
        target.hostname
    ):
        return spec
    return target.hostname


def _words(value: object, config_path: Path, spec: str) -> list[str]:
    """A list-valued option (UserKnownHostsFile a b): its words; `none` is no file."""
    try:
        words = shlex.split(str(value))
    except ValueError as exc:
        raise InvalidHostSpec(f"cannot read {config_path}: {value!r}: {exc}", host=spec) from None
    return [] if [w.lower() for w in words] == ["none"] else words


def _expand_tokens(value: str, target: SshTarget, name: str) -> str:
    """The %-tokens OpenSSH expands in known_hosts paths (ssh_config(5) TOKENS)."""
    replacements = {
        "%%": "%",
        "%d": os.path.expanduser("~"),
        "%u": getpass.getuser(),
        "%h": target.hostname,
        "%n": name,
        "%p": str(target.port),
        "%r": target.user,
    }
    out, i = [], 0
    while i < len(value):
        pair = value[i : i + 2]
        if pair in replacements:
            out.append(replacements[pair])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def _append_line(path: Path, line: str) -> None:
    """Append one known_hosts line; a file it creates is the user's alone (0600), as ssh makes it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)  # an existing file keeps its mode
    with os.fdopen(fd, "r+b") as f:
        end = f.seek(0, os.SEEK_END)
        if end > 0 and f.seek(end - 1) >= 0 and f.read(1) != b"\n":
            line = "\n" + line
        f.write(line.encode())


def _host_key_file(key: paramiko.PKey) -> str:
    """Where sshd keeps a host key of this type: ssh-ed25519 in /etc/ssh/ssh_host_ed25519_key.pub."""
    kind = key.get_name().removeprefix("ssh-").split("-")[0]
    return f"/etc/ssh/ssh_host_{kind}_key.pub"


def _holds(path: Path, key_name: str) -> bool:
    try:
        return path.is_file() and paramiko.HostKeys(str(path)).lookup(key_name) is not None
    except (OSError, UnicodeDecodeError):
        return False


def _shown(path: Path) -> str:
    """A path as a user writes it: under the home as ~/..."""
    home = Path(os.path.expanduser("~"))
    try:
        return f"~/{path.relative_to(home)}"
    except ValueError:
        return str(path)


def _in_shell(path: Path) -> str:
    """A path as a user types it in a shell command: ~/ kept (so the shell expands it), the rest quoted."""
    shown = _shown(path)
    return f"~/{shlex.quote(shown[2:])}" if shown.startswith("~/") else shlex.quote(shown)


def _inventory_entry(spec: str) -> str:
    given = os.environ.get(INVENTORY_ENV)
    inventory = _shown(Path(given).expanduser()) if given else DEFAULT_INVENTORY
    if "://" in spec:
        return f"an entry with `url: {spec}` in the specops inventory ({inventory})"
    return f"the `{spec}:` entry of the specops inventory ({inventory})"
