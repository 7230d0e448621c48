"""Host groups (tools/cluster/group.py): comma lists and inventory groups parsed in order, rank 0 first; bad input
refused with one InvalidHostGroup line, nothing opened."""

from __future__ import annotations

import pytest

from specops.tools.cluster.group import InvalidHostGroup, parse_host_group
from specops.tools.errors import ErrorKind


def test_a_comma_list_keeps_its_order_and_rank0_is_first(tmp_path):
    group = parse_host_group("ssh://root@a,ssh://bob@b:2222", inventory=tmp_path / "none.yaml")
    assert group.source == "list" and group.group is None
    assert group.member_specs == ["ssh://root@a", "ssh://bob@b:2222"]
    assert group.rank0.kind == "ssh" and group.rank0.target.hostname == "a"
    second = group.members[1]
    assert second.kind == "ssh" and (second.target.user, second.target.port) == ("bob", 2222)

    sims = parse_host_group("sim:/tmp/world-a,sim:/tmp/world-b")
    # Hosts of a kind a provider registered (the simulator's sim:/root), each kept as given.
    assert [(m.kind, m.spec) for m in sims.members] == [
        ("registered", "sim:/tmp/world-a"),
        ("registered", "sim:/tmp/world-b"),
    ]


def test_one_host_is_a_group_of_one(tmp_path):
    assert parse_host_group("local").member_specs == ["local"]
    assert parse_host_group("ssh://root@gpu-1").member_specs == ["ssh://root@gpu-1"]


def test_an_inventory_group_by_group_prefix_or_bare_name(tmp_path):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(
        "node-a: ssh://root@10.0.0.1\n"
        "node-b: {url: ssh://root@10.0.0.2:2222, connect_timeout_s: 3}\n"
        "pair: [node-b, node-a, ssh://root@10.0.0.3]\n"
    )
    for spec in ("group:pair", "pair"):
        group = parse_host_group(spec, inventory=inventory)
        assert group.source == "inventory" and group.group == "pair" and group.inventory == str(inventory)
        assert group.member_specs == ["node-b", "node-a", "ssh://root@10.0.0.3"]
        assert group.rank0.kind == "ssh" and group.rank0.target.hostname == "10.0.0.2"
        assert group.rank0.target.port == 2222 and group.rank0.options.connect_timeout_s == 3  # its entry applies
    # A host of the inventory, not a group: a group of one.
    assert parse_host_group("node-a", inventory=inventory).member_specs == ["node-a"]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("", "empty"),
        ("ssh://a,,ssh://b", "member 2 is empty"),
        ("ssh://a,", "member 2 is empty"),
        ("ssh://a,ssh://root@b;rm", "member 2 ('ssh://root@b;rm')"),
        ("ssh://root@a,ssh://root@A:22", "is the same node as member 1"),
        ("sim:/tmp/w,sim:/tmp/w", "is the same node as member 1"),
        ("sim:seed-ct200,local", "names a profile, not a running world"),
        ("ftp://a,ssh://b", "unknown scheme"),
        ("group:", "a group name is letters"),
        ("group:nope", "'nope' in"),
        ("group:node-a", "is a host, not a group"),
        ("group:nested", "names another group"),
        ("group:pair,local", "a group name is letters"),
    ],
)
def test_bad_groups_are_refused_in_one_line(tmp_path, spec, said):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text("node-a: ssh://root@10.0.0.1\npair: [node-a, local]\nnested: [pair, node-a]\n")
    with pytest.raises(InvalidHostGroup) as caught:
        parse_host_group(spec, inventory=inventory)
    error = caught.value
    assert error.kind is ErrorKind.INVALID_HOST_GROUP and error.record().kind == "invalid_host_group"
    assert said in error.what, error.what
    assert "\n" not in error.what and error.remedy


def test_a_damaged_or_missing_inventory_is_named(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("pair: [a, b\n")
    with pytest.raises(InvalidHostGroup, match="not valid YAML"):
        parse_host_group("group:pair", inventory=broken)
    with pytest.raises(InvalidHostGroup, match="does not exist"):
        parse_host_group("group:pair", inventory=tmp_path / "absent.yaml")
