"""Secrets given to a detached process reach it by stdin, never by a command line `ps` would show.

A detached launcher exits at once, so `ps` alone would rarely catch a secret in its argv: the commands the host is
asked to run are looked at too.
"""

from __future__ import annotations

import time

import pytest

from specops.tools.hosts import Host, LocalHost, open_host

from .sshd import sshd  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

SECRET = "hf_notarealtoken0123456789"


def _spy_on_runs(host: Host) -> list[dict]:
    """Every command the host is asked to run, with what it is given besides its argv (env, stdin)."""
    calls: list[dict] = []
    run = host.run

    def spy(argv, **kwargs):
        calls.append({"argv": list(argv), "env": dict(kwargs.get("env") or {}), "stdin": kwargs.get("stdin")})
        return run(argv, **kwargs)

    host.run = spy  # type: ignore[method-assign]
    return calls


def _check(host: Host, tmp_path) -> None:
    out = tmp_path / "seen"
    # Written aside and renamed, so that `seen` appears only with its content
    # (a redirect creates the file before printf has written to it).
    script = f'printf %s "$HF_TOKEN" > {out}.part && mv {out}.part {out}; sleep 2'
    calls = _spy_on_runs(host)
    proc = host.start_detached(["sh", "-c", script], log_path=str(tmp_path / "log"), env={"HF_TOKEN": SECRET})
    # What starting it ran: the secret is in no word of a command, nor in an env one is given (a backend may
    # turn env into `export K=V` on the command line), only in what the launcher reads from stdin.
    launched = list(calls)
    assert launched, "start_detached ran nothing through host.run"
    for call in launched:
        assert not any(SECRET in word for word in call["argv"]), call["argv"]
        assert SECRET not in str(call["env"])
    assert any(SECRET in (call["stdin"] or "") for call in launched)
    try:
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline:
            table = host.run(["ps", "-eo", "args"], timeout=10).stdout
            assert SECRET not in table
            time.sleep(0.02)
        assert out.read_text() == SECRET
        assert SECRET not in host.run(["ps", "-eo", "args"], timeout=10).stdout
    finally:
        host.stop(proc)
    assert not any(SECRET in word for call in calls for word in call["argv"])


def test_local_detached_env_stays_out_of_ps(tmp_path):
    _check(LocalHost(), tmp_path)


def test_ssh_detached_env_stays_out_of_ps(sshd, tmp_path):  # noqa: F811
    with open_host(sshd.url, **sshd.options()) as host:
        _check(host, tmp_path)
