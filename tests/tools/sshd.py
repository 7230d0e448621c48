"""Test support: a real OpenSSH sshd on loopback (specops.sim.host.ssh_gateway) as a pytest fixture.

Where sshd is missing the tests are skipped, except under CI=true, where they
fail: CI must run them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from specops.sim.host.ssh_gateway import SSH_KEYGEN, SSHD, SshServer, free_port, keygen, running_sshd, sshd_available

__all__ = ["SshServer", "free_port", "keygen", "require_sshd", "running_sshd", "sshd"]


def require_sshd() -> None:
    """Skip (or, under CI=true, fail) when OpenSSH's server is not installed."""
    if sshd_available():
        return
    message = f"OpenSSH server not installed ({SSHD}, {SSH_KEYGEN}): apt-get install openssh-server"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    with running_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server
