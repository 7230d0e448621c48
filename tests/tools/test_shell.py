"""The shell tool: read-only by default, secrets refused, output capped, timeouts kept."""

import pytest

from specops.tools.context import ToolContext
from specops.tools.hosts import LocalHost
from specops.tools.shell import (
    ShellArgs,
    ShellCommandNeedsPermission,
    ShellCommandRefused,
    is_read_only,
    reveals_secrets,
    shell,
)

from .worlds import ctx, host, world  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)


def test_read_only_commands_run_on_the_host(ctx):  # noqa: F811
    out = shell(ctx, ShellArgs(argv=["nvidia-smi", "-L"], reason="count GPUs"))
    assert out.read_only and out.exit_code == 0
    assert out.stdout.count("GPU ") == 8
    config = shell(ctx, ShellArgs(argv=["head", "-c", "40", "models/Kimi-K2.6/tokenizer_config.json"], reason="look"))
    assert config.exit_code == 0, config.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["rm", "-rf", "models"],
        ["find", ".", "-delete"],
        ["hf", "download", "x/y"],
        ["pip", "install", "x"],
        ["python3", "-c", "print(1)"],
        ["nvidia-smi", "-r"],
        ["mount", "-o", "remount,rw", "/"],
        ["mount", "/dev/sdb1", "/mnt"],
        ["mount", "-t", "tmpfs", "x", "/mnt"],
        ["date", "-s", "2020-01-01"],
        ["date", "--set=2020-01-01"],
        ["date", "010112002020"],
        ["hostname", "newname"],
        ["hostname", "-F", "/etc/x"],
    ],
)
def test_changing_commands_need_the_policys_permission(ctx, argv):  # noqa: F811
    assert not is_read_only(argv)
    with pytest.raises(ShellCommandNeedsPermission):
        shell(ctx, ShellArgs(argv=argv, reason="test"))


@pytest.mark.parametrize(
    "argv",
    [
        ["env"],
        ["cat", "/root/.cache/huggingface/token"],
        ["cat", "/root/.ssh/id_ed25519"],
        ["bash", "-c", "ls"],
        ["ps", "e"],
        ["ps", "eww"],
        ["ps", "auxe"],
        ["grep", "-r", "hf_", "/root"],
        ["grep", "-rn", "hf_", "."],
        ["grep", "--recursive", "x", "/"],
        ["cat", "/root/.cache/huggingface/stored_tokens"],
        ["find", "/root/.ssh"],
        ["cat", "/srv/app/.env"],
        ["head", "/root/.aws/credentials"],
    ],
)
def test_secrets_and_shells_are_refused(ctx, argv):  # noqa: F811
    with pytest.raises(ShellCommandRefused):
        shell(ctx, ShellArgs(argv=argv, reason="test"))


@pytest.mark.parametrize(
    "argv",
    [
        ["date"],
        ["date", "+%s"],
        ["date", "-u", "+%F"],
        ["hostname"],
        ["hostname", "-f"],
        ["mount"],
        ["ps", "-eo", "pid,args"],
        ["ps", "aux"],
        ["grep", "-n", "block_size", "models/x/config.json"],
        ["du", "-sh", "/root/.cache/huggingface/hub"],
    ],
)
def test_looking_is_read_only(argv):
    assert is_read_only(argv) and not reveals_secrets(argv)


def test_permission_output_cap_and_timeout_locally(tmp_path):
    host = LocalHost()
    ctx = ToolContext(host=host, home=str(tmp_path), allowed_roots=(str(tmp_path),), shell_may_change=True)
    big = tmp_path / "big.txt"
    big.write_text("x" * 200_000)
    out = shell(ctx, ShellArgs(argv=["cat", str(big)], reason="look"))
    assert out.truncated and len(out.stdout) < 70_000
    slow = shell(ctx, ShellArgs(argv=["sleep", "5"], reason="wait", timeout_s=0.5))
    assert slow.timed_out and slow.exit_code is None and not slow.read_only
