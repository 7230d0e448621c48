"""Read-only commands for tools that look at a host: run, name a host that stopped answering, split sectioned output.

Retries live in one layer, the host's: SSH reconnects with backoff and runs an
idempotent command (every probe is one) again when the connection dropped under
it. What still fails after that is HostUnavailable here, with what to do; the
caller decides what to do with a host that stopped answering. (A second retry
loop here multiplied the first: one read-only command ran up to 18 times.)
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import HostUnavailable
from .hosts import CommandResult, ConnectionDropped, Host, HostUnreachable

PROBE_TIMEOUT_S = 60.0


def probe(
    host: Host, argv: Sequence[str], *, timeout: float = PROBE_TIMEOUT_S, env: dict[str, str] | None = None
) -> CommandResult:
    """Run a read-only command (the host layer reruns it over a dropped connection). The exit status is the
    caller's to judge."""
    try:
        return host.run(list(argv), timeout=timeout, env=env, idempotent=True)
    except (ConnectionDropped, HostUnreachable) as exc:
        raise HostUnavailable(
            f"{host.spec} stopped answering while running `{argv[0]}`: {exc}",
            remedy="check the host is up and reachable (specops doctor HOST), then retry",
            details={"host": host.spec, "command": list(argv)},
        ) from None


def sections(text: str) -> dict[str, str]:
    """Split the output of a script that prints `@@name` before each part."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("@@"):
            current = parts.setdefault(line[2:].strip(), [])
        elif current is not None:
            current.append(line)
    # Only blank lines are trimmed: a leading tab can matter (the header of `nvidia-smi topo -m`).
    return {k: "\n".join(v).strip("\n") for k, v in parts.items()}
