"""Typed errors of the host layer; each message says what happened and what can be done.

Every error carries `host` (the spec it concerns). Errors about a bad spec are
also ValueErrors; a missing remote file is also a FileNotFoundError, so callers
that only know the standard exceptions still catch them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .results import CommandResult


class HostError(Exception):
    """Base of every host-layer error."""

    def __init__(self, message: str, *, host: str) -> None:
        super().__init__(message)
        self.host = host


class InvalidHostSpec(HostError, ValueError):
    """The host spec cannot be used as given (bad syntax, shell metacharacters, empty host). Nothing was attempted.

    `char` is the character the spec was refused for, where one is to blame (the message names it).
    """

    def __init__(self, message: str, *, host: str, char: str | None = None) -> None:
        super().__init__(message, host=host)
        self.char = char


class UnknownHostName(InvalidHostSpec):
    """A bare name that neither the inventory nor ~/.ssh/config defines."""


class HostNotRunning(HostError):
    """A spec of a registered kind (kinds.py) that names no running host of that kind."""


class HostUnreachable(HostError):
    """No SSH session could be set up: connection refused, timed out, name not resolved, or not an SSH server."""


class HostAuthFailed(HostError):
    """The server refused every credential offered."""


class HostKeyUnknown(HostError):
    """The server's host key is not in the known_hosts file, and trusting new keys was not asked for."""

    def __init__(self, message: str, *, host: str, fingerprint: str) -> None:
        super().__init__(message, host=host)
        self.fingerprint = fingerprint


class HostKeyMismatch(HostError):
    """The server's host key differs from the one recorded for it: the host was reinstalled, or someone is in between."""


class ConnectionDropped(HostError):
    """The connection broke while a command was running (or could not be re-established).

    `may_have_run` is True when the command had been sent: it may have done
    some or all of its work. `partial` holds what output arrived before the drop.
    """

    def __init__(self, message: str, *, host: str, may_have_run: bool, partial: CommandResult | None = None) -> None:
        super().__init__(message, host=host)
        self.may_have_run = may_have_run
        self.partial = partial


class RemoteFileNotFound(HostError, FileNotFoundError):
    """A path the host layer was asked to read (or tail) does not exist on the host."""

    def __init__(self, message: str, *, host: str, path: str) -> None:
        HostError.__init__(self, message, host=host)
        self.path = path
        self.filename = path


class PortNotListening(HostError):
    """forward(port): nothing accepts connections on that port of the host."""

    def __init__(self, message: str, *, host: str, port: int) -> None:
        super().__init__(message, host=host)
        self.port = port


class CommandFailed(HostError):
    """A command exited non-zero where success was required (CommandResult.check, host-layer helpers)."""

    def __init__(self, result: CommandResult, what: str | None = None) -> None:
        detail = (result.stderr.strip() or result.stdout.strip())[-500:]
        status = "timed out" if result.timed_out else f"exited {result.exit_code}"
        prefix = f"{what}: " if what else ""
        super().__init__(
            f"{prefix}`{' '.join(result.argv)}` on {result.host} {status}" + (f": {detail}" if detail else ""),
            host=result.host,
        )
        self.result = result
