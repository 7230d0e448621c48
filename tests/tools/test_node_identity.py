"""Which node is which: the address other nodes reach a node by comes from where SSH reaches it (an inventory name
or an ssh_config alias is no address), and what SGLang a node runs is read per host, never shared by two hosts
that happen to carry one name."""

from __future__ import annotations

import pytest

from specops.sim.faults import parse_fault
from specops.tools.context import ToolContext
from specops.tools.hosts import open_host
from specops.tools.hosts.ssh import SshHost
from specops.tools.hosts.ssh_options import SshTarget
from specops.tools.sglang.capabilities import read_capabilities
from specops.tools.sglang.multinode import node_address

from .worlds import start_world


def test_an_inventory_named_ssh_node_is_reached_at_its_target_not_its_name(monkeypatch, tmp_path):
    monkeypatch.setattr(SshHost, "_connect", lambda self: None)  # the address is read from the target alone
    host = SshHost(
        SshTarget(hostname="gpu-b.cluster.internal", user="root"), spec="gpu-b", ssh_config=tmp_path / "none"
    )
    assert node_address(ToolContext(host=host, home="/root", allowed_roots=("/root",))) == "gpu-b.cluster.internal"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_local_or_simulated_node_is_reached_on_this_machines_loopback():
    with start_world("seed-ct200") as world, open_host(world.host_spec) as host:
        assert node_address(ToolContext.for_host(host)) == "127.0.0.1"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_two_hosts_of_one_name_each_have_their_own_sglang_release():
    with (
        start_world("seed-ct200") as new,
        start_world("seed-ct200", faults=[parse_fault("old_sglang:version=0.5.11")]) as old,
        open_host(new.host_spec) as a,
        open_host(old.host_spec) as b,
    ):
        a.spec = b.spec = "node"  # one inventory name reused for a re-created node, say
        assert read_capabilities(a).version == "0.5.23"
        assert read_capabilities(b).version == "0.5.11"
        assert read_capabilities(a).version == "0.5.23"  # still its own, from the cache
