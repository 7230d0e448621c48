"""probe: a read-only command runs once through the host layer (which does the reruns); a host that still does not
answer is HostUnavailable with what to do."""

from __future__ import annotations

import pytest

from specops.tools.errors import HostUnavailable
from specops.tools.hosts import CommandResult, ConnectionDropped, LocalHost
from specops.tools.probing import probe


class _DroppingHost(LocalHost):
    """A host whose connection drops under every command (after the host layer's own reruns gave up)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[dict] = []

    def run(self, argv, **kwargs) -> CommandResult:
        self.runs.append({"argv": argv, **kwargs})
        raise ConnectionDropped("the connection dropped", host=self.spec, may_have_run=True)


def test_a_probe_runs_once_as_idempotent_and_names_the_host_that_stopped_answering():
    host = _DroppingHost()
    with pytest.raises(HostUnavailable) as caught:
        probe(host, ["nvidia-smi", "-L"])
    # One layer of retries, the host's: the probe asks it to rerun (idempotent) and does not loop on top of it.
    assert len(host.runs) == 1 and host.runs[0]["idempotent"] is True
    assert "stopped answering while running `nvidia-smi`" in str(caught.value)
    assert caught.value.remedy.startswith("check the host is up")


def test_a_probe_returns_a_failed_command_for_the_caller_to_judge():
    done = probe(LocalHost(), ["sh", "-c", "echo out; exit 3"])
    assert done.exit_code == 3 and done.stdout == "out\n"
