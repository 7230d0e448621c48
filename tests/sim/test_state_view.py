"""world.json read untyped (state_view.py) says what the typed WorldState says, and keeps sim commands light."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from specops.sim.faults import FaultName, parse_fault
from specops.sim.host.build import build_host
from specops.sim.host.commands import ROOT_VARIABLE
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.profiles import load_profile
from specops.sim.world.state import WorldState
from specops.sim.world.state_view import load_state_view

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    faults = [parse_fault("old_sglang"), parse_fault("full_disk")]
    state = build_host(
        tmp_path_factory.mktemp("view") / "host",
        load_profile("seed-ct200"),
        faults=faults,
        hub_url="http://127.0.0.1:9",
        fixtures=load_fixtures(),
    )
    return WorldState.load(state.root)


def test_the_view_derives_what_the_typed_state_derives(built):
    view = load_state_view(built.root)
    assert view.layout == built.layout
    assert (view.time_scale, view.load_time_scale, view.byte_scale) == (
        built.time_scale,
        built.load_time_scale,
        built.byte_scale,
    )
    assert view.sglang_version == built.sglang_version == "0.5.10.post1"  # the old_sglang fault's version
    assert view.fault(FaultName.FULL_DISK).free_gib == built.fault(FaultName.FULL_DISK).free_gib
    assert view.fault(FaultName.BROKEN_CLI) is None and built.fault(FaultName.BROKEN_CLI) is None
    assert view.profile.gpus.count == built.profile.gpus.count == 8
    assert [m.size_bytes for m in view.mounts] == [m.size_bytes for m in built.mounts]
    assert view.env == built.env and view.env["HOME"] == built.env["HOME"]  # a dict field stays a dict


def test_a_missing_world_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a simulated host"):
        load_state_view(tmp_path)


@pytest.mark.parametrize(
    "argv",
    [
        ["nvidia-smi"],
        ["nvidia-smi", "--query-gpu=index,memory.used", "--format=csv"],
        ["df", "-h"],
        ["free", "-g"],
        ["nproc"],
    ],
)
def test_the_commands_an_agent_runs_often_start_without_pydantic(built, argv):
    """An agent runs these dozens of times a run: they must not build the profile's schemas each time."""
    # The wrapper is `ROOT=... exec PYTHON -m MODULE "$@"`: run the same with -X importtime.
    _, _, python, _, module, _ = shlex.split((built.layout.bin_dir / argv[0]).read_text().splitlines()[-1])
    result = subprocess.run(
        [python, "-X", "importtime", "-m", module, *argv[1:]],
        capture_output=True,
        text=True,
        env={**built.env, ROOT_VARIABLE: built.root},
        timeout=30,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "pydantic" not in imported and "specops.sim.profiles.schema" not in imported
