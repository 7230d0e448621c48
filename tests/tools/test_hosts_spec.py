"""Host specs: parsed and checked before anything connects."""

from __future__ import annotations

import getpass
import re

import pytest

from specops.tools.hosts import InvalidHostSpec, UnknownHostName, open_host, parse_host_spec
from specops.tools.hosts.spec import KindSpec, LocalSpec, SshSpec


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "   ",
        "ssh://",
        "ssh://root@",
        "ssh://root@host;rm -rf /",
        "ssh://root@$(reboot)",
        "ssh://root@host`id`",
        "ssh://root@host:99999",
        "ssh://root@host:port",
        "ssh://root@host/path",
        "ssh://root:secret@host",
        "ftp://host",
        "root@host",
        "my host",
        "host|cat",
        "sim:",
    ],
)
def test_bad_specs_are_refused_before_anything_is_tried(spec):
    with pytest.raises(InvalidHostSpec) as refused:
        parse_host_spec(spec, inventory="/nonexistent-inventory.yaml", ssh_config="/nonexistent")
    assert isinstance(refused.value, ValueError)


def test_good_specs_parse():
    assert parse_host_spec("local") == LocalSpec()
    ssh = parse_host_spec("ssh://ubuntu@10.0.0.5:2222", connect_timeout_s=3)
    assert isinstance(ssh, SshSpec)
    assert (ssh.target.user, ssh.target.hostname, ssh.target.port) == ("ubuntu", "10.0.0.5", 2222)
    assert ssh.options.connect_timeout_s == 3 and not ssh.options.accept_unknown_host_key
    default_user = parse_host_spec("ssh://gpu-1.example.com")
    assert isinstance(default_user, SshSpec) and default_user.target.user == getpass.getuser()
    assert default_user.target.port == 22
    sim = parse_host_spec("sim:/tmp/world")
    assert isinstance(sim, KindSpec) and (sim.spec, sim.prefix) == ("sim:/tmp/world", "sim:")


def test_options_are_checked():
    with pytest.raises(InvalidHostSpec, match="no_such_option"):
        parse_host_spec("ssh://root@h", no_such_option=1)
    with pytest.raises(InvalidHostSpec, match="SSH hosts only"):
        open_host("local", key_filename="/k")


def test_names_come_from_the_inventory_then_ssh_config(tmp_path):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text(
        "gpu-a:\n  url: ssh://root@10.1.1.1:2200\n  key_filename: /keys/a\n  keepalive_s: 5\n"
        "gpu-short: ssh://admin@10.1.1.2\n"
        "gpu-bad:\n  url: ssh://root@10.1.1.3\n  colour: blue\n"
    )
    config = tmp_path / "ssh_config"
    config.write_text(
        "Host gpu-c\n  HostName 10.2.2.2\n  User ops\n  Port 2022\n  IdentityFile /keys/c\nHost *\n  User everyone\n"
    )
    a = parse_host_spec("gpu-a", inventory=inventory, ssh_config=config, keepalive_s=7)
    assert isinstance(a, SshSpec) and a.spec == "gpu-a"
    assert (a.target.hostname, a.target.port, a.options.key_filename, a.options.keepalive_s) == (
        "10.1.1.1",
        2200,
        ["/keys/a"],
        7,
    )
    short = parse_host_spec("gpu-short", inventory=inventory, ssh_config=config)
    assert isinstance(short, SshSpec) and short.target.user == "admin"
    c = parse_host_spec("gpu-c", inventory=inventory, ssh_config=config)
    assert isinstance(c, SshSpec)
    assert (c.target.hostname, c.target.user, c.target.port, c.options.key_filename) == (
        "10.2.2.2",
        "ops",
        2022,
        ["/keys/c"],
    )
    with pytest.raises(InvalidHostSpec, match="colour"):
        parse_host_spec("gpu-bad", inventory=inventory, ssh_config=config)
    with pytest.raises(UnknownHostName, match="ssh://user@host"):
        parse_host_spec("gpu-z", inventory=inventory, ssh_config=config)  # `Host *` alone does not define it


@pytest.mark.parametrize(
    ("spec", "char", "words"),
    [
        ("ssh://root@gpu;reboot", ";", "has ';' right after \"ssh://root@gpu\": an SSH host is ssh://user@host[:port]"),
        ("ssh://root@gpu$(id)", "$", "has '$' right after \"ssh://root@gpu\""),
        ("ssh://root@gpu\n", "\n", 'has a newline right after "ssh://root@gpu"'),
        ("gpu-1|cat", "|", "has '|' right after \"gpu-1\""),
        (
            "root@gpu-1",
            "@",
            "has '@' right after \"root\": give local, ssh://user@host[:port], a host name or sim:NAME",
        ),
        ("my host", " ", 'has a space right after "my"'),
        ("sim:/tmp/w>x", ">", "has '>' right after \"sim:/tmp/w\": a sim: root is a plain path"),
        ("-gpu", "-", "has '-' at its start"),
        ("gpu\u200b", "\u200b", "has an invisible character (U+200B ZERO WIDTH SPACE)"),
    ],
)
def test_a_refused_spec_names_the_character_in_one_line(spec, char, words):
    with pytest.raises(InvalidHostSpec) as refused:
        parse_host_spec(spec, inventory="/nonexistent-inventory.yaml", ssh_config="/nonexistent")
    message = str(refused.value)
    assert words in message and refused.value.char == char and len(message.splitlines()) == 1, message


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("ssh://gpu:0", "the port must be a number from 1 to 65535"),  # was port 22, silently
        ("ssh://root:@gpu", "nothing more"),  # an empty password is a password
        ("ssh://[::1", "is not an SSH URL (Invalid IPv6 URL)"),  # was a bare ValueError from urlsplit
    ],
)
def test_specs_that_say_something_else_are_refused(spec, words):
    with pytest.raises(InvalidHostSpec, match=re.escape(words)):
        parse_host_spec(spec)


def test_damaged_host_files_are_one_line_naming_the_file(tmp_path):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text("gpu-a: [\n")
    with pytest.raises(InvalidHostSpec, match=f"inventory file {inventory} is not valid YAML") as refused:
        parse_host_spec("gpu-a", inventory=inventory, ssh_config="/nonexistent")
    assert len(str(refused.value).splitlines()) == 1
    inventory.write_text("gpu-a:\n  url: ssh://root@h\n  keepalive_s: -1\n")
    with pytest.raises(InvalidHostSpec, match="keepalive_s: should be greater than or equal to 0 \\(got -1\\)$"):
        parse_host_spec("gpu-a", inventory=inventory, ssh_config="/nonexistent")
    config = tmp_path / "ssh_config"
    config.write_text("Host gpu-b\n  HostName\n")
    inventory.write_text("{}\n")
    with pytest.raises(InvalidHostSpec, match=f"cannot read {config}"):
        parse_host_spec("gpu-b", inventory=inventory, ssh_config=config)
