"""A simulated host does not inherit this machine's Hub token: a command gets it only when it is passed explicitly.

A real world (seed-ct200) on this machine, whose environment carries a planted HF_TOKEN, HUGGING_FACE_HUB_TOKEN,
HF_TOKEN_PATH and HF_OIDC_RESOURCE: commands on the sim host (run, start_detached, `specops sim exec`) see none of
them, and huggingface_hub on the host finds no token; a command given the token the way tools give it
(ToolContext.command_env) does see it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from specops.sim.world.world import SimWorld
from specops.tools.context import ToolContext
from specops.tools.hosts import Host

from .worlds import reach, start_world

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

PLANTED = "hf_plantedTokenThatMustNotLeakToTheHost0123"
SHOW = (
    'echo "HF_TOKEN=${HF_TOKEN:-unset} OLD=${HUGGING_FACE_HUB_TOKEN:-unset} PATH_=${HF_TOKEN_PATH:-unset}'
    ' OIDC=${HF_OIDC_RESOURCE:-unset}"'
)
NOTHING = "HF_TOKEN=unset OLD=unset PATH_=unset OIDC=unset\n"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This machine has a Hub token: in the environment, under the old name, in a token file, and through OIDC."""
    token_file = tmp_path / "token"
    token_file.write_text(PLANTED)
    monkeypatch.setenv("HF_TOKEN", PLANTED)
    monkeypatch.setenv("HUGGING_FACE_HUB_TOKEN", PLANTED)
    monkeypatch.setenv("HF_TOKEN_PATH", str(token_file))
    monkeypatch.setenv("HF_OIDC_RESOURCE", "planted-oidc-resource")  # get_token would exchange an OIDC token
    return token_file


@pytest.fixture
def world(planted: Path) -> Iterator[SimWorld]:
    with start_world() as w:
        yield w


@pytest.fixture
def sim_host(world: SimWorld) -> Iterator[Host]:
    with reach(world, "sim") as h:
        yield h


def test_commands_on_a_sim_host_do_not_inherit_the_hub_token(sim_host: Host) -> None:
    assert sim_host.run(["sh", "-c", SHOW], timeout=30).stdout == NOTHING
    assert sim_host.run(["sh", "-c", "echo ${HF_TOKEN:+set}"], timeout=30).stdout == "\n"
    # huggingface_hub on the host looks where `hf` looks (HF_TOKEN, HF_TOKEN_PATH, $HF_HOME/token): nothing.
    found = sim_host.run(
        [sys.executable, "-c", "import huggingface_hub; print(huggingface_hub.get_token())"], timeout=60
    )
    assert found.ok and found.stdout == "None\n", found.stderr
    # What the world sets is still there.
    assert sim_host.run(["sh", "-c", 'echo "$HF_ENDPOINT"'], timeout=30).stdout.startswith("http://127.0.0.1:")


def test_a_command_given_the_token_explicitly_sees_it(sim_host: Host) -> None:
    env = ToolContext.for_host(sim_host, hub_token=SecretStr(PLANTED)).command_env()
    assert env == {"HF_TOKEN": PLANTED}
    assert sim_host.run(["sh", "-c", 'echo "${HF_TOKEN:-unset}"'], timeout=30, env=env).stdout == f"{PLANTED}\n"
    # A run without a token passes none, and the host has none.
    assert ToolContext.for_host(sim_host).command_env() == {}


def test_detached_processes_on_a_sim_host_do_not_inherit_the_hub_token(sim_host: Host, world: SimWorld) -> None:
    bare = sim_host.start_detached(["sh", "-c", SHOW], log_path="logs/bare.log")
    given = sim_host.start_detached(
        ["sh", "-c", 'echo "${HF_TOKEN:-unset}"'], log_path="logs/given.log", env={"HF_TOKEN": PLANTED}
    )
    logs = world.layout.home / "logs"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(
        (logs / name).exists() and (logs / name).read_text().endswith("\n") for name in ("bare.log", "given.log")
    ):
        time.sleep(0.05)
    for proc in (bare, given):
        sim_host.stop(proc, grace_s=2)
    assert (logs / "bare.log").read_text() == NOTHING
    assert (logs / "given.log").read_text() == f"{PLANTED}\n"


def test_sim_exec_does_not_pass_the_hub_token_on(world: SimWorld) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "specops.cli.main",
            "sim",
            "exec",
            world.host_spec,
            "--",
            "sh",
            "-c",
            f'{SHOW}; echo "$HF_HOME"',
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # this process's environment, the planted token included, is the command's
    assert done.returncode == 0, done.stderr
    assert done.stdout == NOTHING + f"{world.layout.home / '.cache' / 'huggingface'}\n"
