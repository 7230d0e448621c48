"""open_host: a Host from a spec (see spec.py for the forms it takes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Host
from .kinds import host_kind
from .local import LocalHost
from .spec import KindSpec, LocalSpec, SshSpec, parse_host_spec


def open_host(
    spec: str, *, inventory: str | Path | None = None, ssh_config: str | Path | None = None, **options: Any
) -> Host:
    """Open the host a spec names. `options` are SshOptions fields (SSH hosts only).

    Bad specs raise InvalidHostSpec (a ValueError) before anything is attempted;
    SSH hosts connect here and raise the connection errors of errors.py.
    """
    parsed = parse_host_spec(spec, inventory=inventory, ssh_config=ssh_config, **options)
    if isinstance(parsed, LocalSpec):
        return LocalHost()
    if isinstance(parsed, KindSpec):
        kind = host_kind(parsed.spec)
        assert kind is not None, "parse_host_spec found it"
        return kind.open(parsed.spec)
    assert isinstance(parsed, SshSpec)
    from .ssh import SshHost

    return SshHost(parsed.target, parsed.options, spec=parsed.spec, ssh_config=ssh_config)
