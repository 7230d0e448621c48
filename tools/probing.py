"""Read-only commands for tools that look at a host: run, retry a dropped connection, split sectioned output.

Looking is harmless to repeat, so a connection that drops mid-command is
retried here (tenacity) and, past that, reported as HostUnavailable: the caller
decides what to do with a host that stopped answering.
"""

from __future__ import annotations

from collections.abc import Sequence

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from .errors import HostUnavailable
from .hosts import CommandResult, ConnectionDropped, Host, HostUnreachable

PROBE_TIMEOUT_S = 60.0


def probe(
    host: Host, argv: Sequence[str], *, timeout: float = PROBE_TIMEOUT_S, env: dict[str, str] | None = None
) -> CommandResult:
    """Run a read-only command; a dropped connection is retried. The exit status is the caller's to judge."""

    @retry(
        retry=retry_if_exception_type((ConnectionDropped, HostUnreachable)),
        stop=stop_after_attempt(3),
        wait=wait_exponential(multiplier=0.5, max=4),
        reraise=True,
    )
    def attempt() -> CommandResult:
        return host.run(list(argv), timeout=timeout, env=env, idempotent=True)

    try:
        return attempt()
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
