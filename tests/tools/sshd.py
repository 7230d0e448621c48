"""Test support: a real OpenSSH sshd on loopback (specops.sim.host.ssh_gateway) as a pytest fixture.

Where sshd is missing the tests fail, saying what to run (tests/run.sh installs it as root); only a user who is not
root, which CI never is, sees them skipped (tests/needs.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from specops.sim.host.ssh_gateway import SSH_KEYGEN, SSHD, SshServer, free_port, keygen, running_sshd, sshd_available

from ..needs import missing

__all__ = ["SshServer", "free_port", "keygen", "require_sshd", "running_sshd", "sshd"]


def require_sshd() -> None:
    """Fail (skip for a user who is not root: tests/needs.py) when OpenSSH's server is not installed."""
    if sshd_available():
        return
    missing(
        f"OpenSSH server not installed ({SSHD}, {SSH_KEYGEN})",
        "run `bash tests/run.sh` as root (it installs openssh-server), or apt-get install openssh-server",
    )


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    with running_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server
