"""Hosts as they are found (issue 27): `specops run "deploy and benchmark ..." --host H` on a host that cannot do it
ends in one `why:` line saying what is missing and what to do, exits 1, leaves the host as it was (no download
started, no file written, no server, nothing asked of the Hub) and never shows a traceback; `specops doctor H`
names the same problem in the same words.

The hosts: this machine as `local` (no GPU here), and simulated hosts with a fault each: no SGLang, an SGLang
without DFLASH, a driver whose nvidia-smi is off PATH (elsewhere, or nowhere), no route to the Hub. Each run stops
right after host_facts, so each test takes seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specops.cli.main import app
from specops.sim.faults import Fault, HubOffline, NoSglang, NvidiaSmiOffPath, OldSglang
from specops.sim.world.world import SimWorld
from specops.tools.facts import HostFacts, host_facts_view

from ..jobs import job_timeout

pytestmark = [job_timeout(), pytest.mark.slow]

GOAL = "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
NOTHING = "Nothing was downloaded or launched"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hermetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Hub token of this machine, and no connection past loopback: a local host's Hub is a closed port."""
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "HF_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")


def run(host: str, runs_dir: Path):  # noqa: ANN201 - click's Result
    return CliRunner().invoke(app, ["run", GOAL, "--host", host, "--runs-dir", str(runs_dir)], catch_exceptions=False)


def doctor(host: str) -> dict:
    result = CliRunner().invoke(app, ["doctor", host, "--json"], catch_exceptions=False)
    assert result.exit_code == 1, (result.stdout, result.stderr)  # a problem was found
    return json.loads(result.stdout)


def the_why_line(result) -> str:  # noqa: ANN001 - click's Result
    """The run's last line, checked to be its one `why:` line, with no traceback anywhere."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    said = result.stdout + result.stderr
    assert "Traceback" not in said and "Error:" not in said, said
    lines = result.stdout.strip().splitlines()
    assert [line for line in lines if line.startswith("why:")] == lines[-1:], said
    return lines[-1].removeprefix("why: ")


def snapshot(world: SimWorld) -> dict[str, tuple[int, int]]:
    """Every file and directory of the host (size, mtime), and the simulator's servers, ports and GPU holders."""
    root = world.layout.root
    sim = world.layout.sim_dir
    found: dict[str, tuple[int, int]] = {}
    for path in [root, *root.rglob("*")]:
        if path.is_relative_to(sim) and not any(
            path.is_relative_to(d) for d in (world.layout.ports_dir, world.layout.gpu_dir)
        ):
            continue  # world.json, the clock and counters are the simulator's own bookkeeping
        if path.is_relative_to(root / "proc"):
            continue  # /proc is the kernel's view of the node (its boot id), not a change anyone made
        stat = path.lstat()
        found[str(path.relative_to(root))] = (stat.st_size if path.is_file() else 0, stat.st_mtime_ns)
    return found


@pytest.fixture
def world_with(request) -> Iterator[SimWorld]:  # noqa: ANN001 - pytest's FixtureRequest
    faults: list[Fault] = request.param
    with SimWorld.start("h200x8-nvlink", faults=faults, time_scale=50) as world:
        yield world


def assert_untouched(world: SimWorld, before: dict[str, tuple[int, int]]) -> None:
    assert snapshot(world) == before  # no download directory, no model, no cache entry, no log, no server
    # No repo asked for (the run stopped before the drafter's config) and no file fetched. (The host's `hf` asks
    # huggingface_hub's own /api/agent-harnesses when host_facts runs it: no repo, no download.)
    asked = [r.path for r in world.hub.emulator.requests if r.path.startswith(("/api/models", "/api/datasets"))]
    assert asked == [] and not [r for r in world.hub.emulator.requests if "/resolve/" in r.path]


def test_the_view_of_a_host_without_sglang_is_shown():
    """The bug a real H200 without SGLang met: the model view of its facts raised KeyError: 'behaves_as'."""
    facts = HostFacts.model_validate(
        {
            "host": "local",
            "hostname": "h200",
            "os": None,
            "kernel": None,
            "gpus": [],
            "gpu_count": 0,
            "gpu_model": None,
            "gpu_memory_total_bytes": 0,
            "driver_version": None,
            "cuda_version": None,
            "interconnect": None,
            "cpu": {"model": None, "cores": 16},
            "memory": None,
            "python_version": "3.12.3",
            "sglang_version": None,
            "huggingface_hub_version": None,
            "clis": [],
            "serving": [],
            "other_gpu_processes": [],
            "mounts": [],
            "notes": [],
        }
    )
    shown = host_facts_view(facts)
    assert shown["sglang_version"] is None and shown["speculative"] is None


@pytest.mark.skipif(
    bool(shutil.which("nvidia-smi")) or os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0"),
    reason="this machine has an NVIDIA driver: `local` is not a host without a GPU here (CI's machine has none)",
)
def test_local_without_a_gpu(hermetic, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the local host's home: it must stay empty
    # The report's chart is drawn here too (local is this machine): matplotlib's font cache is specops' own.
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "runs" / "matplotlib"))
    monkeypatch.chdir(tmp_path)
    line = the_why_line(run("local", tmp_path / "runs"))
    assert line == (
        "no NVIDIA GPU on local (nvidia-smi not found, no NVIDIA driver loaded): run on a GPU host instead, e.g. "
        f"--host ssh://user@gpu-box. {NOTHING}"
    )
    assert list(home.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "runs"]  # the run's own record only
    found = doctor("local")
    assert found["problems"][0]["what"] == line.split(": run on a GPU host")[0]


@pytest.mark.parametrize("world_with", [[NoSglang()]], indirect=True)
def test_gpu_host_without_sglang(hermetic, world_with, tmp_path):
    world, host = world_with, world_with.host_spec
    before = snapshot(world)
    line = the_why_line(run(host, tmp_path))
    assert line == (
        f"SGLang is not installed for the python3 of {host}: install it there (pip install 'sglang>=0.5.23', the "
        "newest release specops knows; DFLASH needs 0.5.11 or newer), or put the python3 that has it first on PATH, "
        f"then run again. {NOTHING}"
    )
    assert_untouched(world, before)
    assert f"{line.split(': install it there')[0]}" in [p["what"] for p in doctor(host)["problems"]]


@pytest.mark.parametrize("world_with", [[OldSglang()]], indirect=True)
def test_gpu_host_with_an_sglang_without_dflash(hermetic, world_with, tmp_path):
    world, host = world_with, world_with.host_spec
    before = snapshot(world)
    line = the_why_line(run(host, tmp_path))
    assert line == (
        "SGLang 0.5.10.post1 on the host has no DFLASH speculative algorithm (first in SGLang 0.5.11): upgrade SGLang "
        f"on the host (pip install -U 'sglang>=0.5.11'), then run again. {NOTHING}"
    )
    assert_untouched(world, before)
    assert "SGLang 0.5.10.post1 is too old for DFlash (needs 0.5.11 or newer)" in [
        p["what"] for p in doctor(host)["problems"]
    ]


@pytest.mark.parametrize(
    ("world_with", "found_at"),
    [([NvidiaSmiOffPath()], "/usr/local/nvidia/bin"), ([NvidiaSmiOffPath(at="")], None)],
    indirect=["world_with"],
    ids=["elsewhere", "nowhere"],
)
def test_gpu_host_with_a_driver_and_no_nvidia_smi_on_path(hermetic, world_with, found_at, tmp_path):
    world, host = world_with, world_with.host_spec
    before = snapshot(world)
    line = the_why_line(run(host, tmp_path))
    signs = "kernel module 580.159.04; /dev/nvidiactl and 8 more device files"  # as the host names them
    if found_at:
        smi = f"{found_at}/nvidia-smi"
        remedy = (
            f"add {found_at} to the PATH of the host's non-interactive shells (the ones specops runs), or link "
            f"it: ln -s {smi} /usr/local/bin/nvidia-smi"
        )
        signs += f"; nvidia-smi at {smi}"
    else:
        remedy = (
            "install the driver's utilities (e.g. apt install nvidia-utils-580), or in a container start it with "
            "NVIDIA_DRIVER_CAPABILITIES=compute,utility"
        )
    what = (
        f"nvidia-smi is not on the PATH of {host}, but an NVIDIA driver is there ({signs}): specops reads the GPUs "
        "with nvidia-smi"
    )
    assert line == f"{what}: {remedy}, then run again. {NOTHING}"
    assert_untouched(world, before)
    assert {"what": what, "remedy": remedy} in doctor(host)["problems"]


@pytest.mark.parametrize("world_with", [[HubOffline()]], indirect=True)
def test_gpu_host_without_the_hub(hermetic, world_with, tmp_path):
    world, host = world_with, world_with.host_spec
    before = snapshot(world)
    line = the_why_line(run(host, tmp_path))
    what = (
        f"{host} cannot reach the Hugging Face Hub at {world.hub.url} through the proxy 127.0.0.1:9 (cannot connect "
        "to 127.0.0.1:9: Connection refused), so it cannot download the drafter"
    )
    remedy = (
        "give the host a route to the Hub (or set HF_ENDPOINT to a mirror it reaches, or https_proxy to a proxy that "
        "answers)"
    )
    assert line == f"{what}: {remedy}, then run again. {NOTHING}"
    assert_untouched(world, before)
    assert {"what": what, "remedy": remedy} in doctor(host)["problems"]
