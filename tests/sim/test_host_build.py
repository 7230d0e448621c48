"""The sim host's tree builder: layout, models on disk, mount accounting, faults and environment."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from huggingface_hub import scan_cache_dir

from specops.sim.faults import FullDisk, OldSglang, OutOfMemory, PortInUse
from specops.sim.host.build import build_host
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.profiles import load_profile
from specops.sim.world.state import WorldState

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

NO_HUB = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures()


@pytest.fixture(scope="module")
def seed(tmp_path_factory, fixtures):
    return build_host(
        tmp_path_factory.mktemp("seed") / "host",
        load_profile("seed-ct200"),
        faults=[],
        hub_url=NO_HUB,
        fixtures=fixtures,
    )


def sh(world, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), env=world.env, cwd=world.env["HOME"], capture_output=True, text=True, timeout=30)


def test_world_json_env_and_layout(seed):
    loaded = WorldState.load(seed.root)
    assert loaded == seed
    root = Path(seed.root)
    env = seed.env
    assert env["PATH"].split(":")[0] == str(root / ".sim/bin")
    assert env["HOME"] == str(root / "root") and env["USER"] == "root" and env["HOSTNAME"] == "ct200"
    assert env["HF_HOME"] == str(root / "root/.cache/huggingface") and env["HF_ENDPOINT"] == NO_HUB
    assert env["HF_HUB_DISABLE_TELEMETRY"] == "1" and env["PYTHONPATH"] == str(root / ".sim/site")
    assert env["SPECOPS_SIM_ROOT"] == str(root)
    assert env["SPECOPS_PORT_MAP"] == str(root / ".sim/ports")  # its ports are virtual: the map says where each is
    assert seed.real_hf.endswith("/hf") and Path(seed.real_hf).is_file()
    assert sorted(p.name for p in (root / ".sim/bin").iterdir()) == [
        "date",  # the host's clock (sim/world/clock.py)
        "df",
        "dmesg",  # the kernel log (sim/world/hardware.py)
        "du",  # counts a virtual mount as its df does (sim/host/disk/allocation.py)
        "free",
        "hf",
        "huggingface-cli",
        "nproc",
        "nvidia-smi",
        "python",
        "python3",
        "python3.12",
        "sleep",  # waits on the host's clock
        "ss",
        "uname",  # -r: the modelled kernel
    ]
    # What the modelled machine's OS says of itself, where a real host's tools read it.
    assert 'PRETTY_NAME="Ubuntu 24.04.3 LTS"' in (root / "etc/os-release").read_text()
    assert "model name\t: AMD EPYC 9575F 64-Core Processor" in (root / "proc/cpuinfo").read_text()
    assert (root / "dev/null").resolve() == Path("/dev/null")
    assert [m.mount_point for m in seed.mounts] == ["/", "/dev/shm"]
    assert all(m.kind == "virtual" for m in seed.mounts)


def test_local_dir_model_is_sparse_and_accounted(seed, fixtures):
    model = Path(seed.root) / "root/models/Kimi-K2.6"
    main = fixtures["moonshotai/Kimi-K2.6"].revision()
    assert sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file()) == sorted(
        f.path for f in main.files
    )
    shard = next(f for f in main.files if f.is_lfs)
    on_disk = model / shard.path
    assert on_disk.stat().st_size == shard.stored_size(1024)
    assert on_disk.stat().st_blocks == 0  # sparse: a 550 GiB model costs no disk here
    config = next(f for f in main.files if not f.is_lfs)
    assert (model / config.path).read_bytes() == config.content
    root_mount = seed.mounts[0]
    assert root_mount.used_bytes_at_start == 971 * 1024**3
    assert root_mount.stored_bytes_at_start >= sum(f.stored_size(1024) for f in main.files)


def test_hf_cache_is_seen_by_the_real_huggingface_hub(seed, fixtures):
    cache = Path(seed.root) / "root/.cache/huggingface/hub"
    info = scan_cache_dir(cache)
    assert info.warnings == []
    (repo,) = info.repos
    fixture = fixtures["Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"]
    assert repo.repo_id == fixture.repo_id and repo.repo_type == "model"
    assert {r.commit_hash for r in repo.revisions} == {r.sha for r in fixture.revisions}
    main = fixture.revision()
    by_sha = {r.commit_hash: r for r in repo.revisions}
    assert by_sha[main.sha].refs == frozenset({"main"})
    assert by_sha[main.sha].nb_files == len(main.files)
    # Shared content across revisions is one blob, as in a real cache.
    assert repo.size_on_disk < sum(f.stored_size(1024) for r in fixture.revisions for f in r.files)
    listed = sh(seed, "hf", "cache", "ls", "--no-truncate")
    assert listed.returncode == 0 and fixture.repo_id in listed.stdout


def test_faults_the_builder_applies(tmp_path, fixtures):
    faults = [
        FullDisk(mount_point="/", free_gib=3.0),
        OldSglang(version="0.5.10.post1"),
        PortInUse(port=30000),
        OutOfMemory(foreign_mib_per_gpu=40000),
    ]
    world = build_host(
        tmp_path / "host", load_profile("h200x8-nvlink"), faults=faults, hub_url=NO_HUB, fixtures=fixtures
    )
    df = sh(world, "df", "-B1", "--output=size,used,avail", "/").stdout.splitlines()[1].split()
    assert int(df[2]) == 3 * 1024**3 and int(df[0]) - int(df[1]) == 3 * 1024**3
    assert sh(world, "python", "-c", "import sglang; print(sglang.__version__)").stdout == "0.5.10.post1\n"
    port = (Path(world.root) / ".sim/ports/30000.json").read_text()
    assert f'"pid":{os.getpid()}' in port.replace(" ", "") and '"owner":"foreign"' in port.replace(" ", "")
    apps = sh(
        world, "nvidia-smi", "--query-compute-apps=pid,process_name,used_gpu_memory", "--format=csv,noheader"
    ).stdout.splitlines()
    assert apps == [f"{os.getpid()}, python3, 40000 MiB"] * 8
    used = sh(world, "nvidia-smi", "--query-gpu=memory.used,memory.free", "--format=csv,noheader,nounits").stdout
    assert used.splitlines()[0] == f"40000, {143771 - 616 - 40000 + 1}"
    table = sh(world, "nvidia-smi").stdout
    assert f"|    0   N/A  N/A{os.getpid():>16}      C   python3" in table and "40000MiB / 143771MiB" in table


def test_dead_processes_free_their_gpu_memory(tmp_path, fixtures):
    world = build_host(tmp_path / "host", load_profile("h200x8-nvlink"), faults=[], hub_url=NO_HUB, fixtures=fixtures)
    gone = subprocess.Popen(["true"])
    gone.wait()
    (Path(world.root) / f".sim/gpu/{gone.pid}.json").write_text(
        f'{{"pid": {gone.pid}, "process_name": "python3", "gpu_mib": {{"0": 1000}}}}'
    )
    out = sh(world, "nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader", "-i", "0").stdout
    assert out == "0 MiB\n"


def test_no_sglang_no_site_dir(tmp_path, fixtures):
    profile = load_profile("seed-ct200")
    profile = profile.model_copy(
        update={"software": profile.software.model_copy(update={"sglang": None}), "models": []}
    )
    world = build_host(tmp_path / "host", profile, faults=[], hub_url=NO_HUB, fixtures=fixtures)
    assert "PYTHONPATH" not in world.env
    result = sh(world, "python", "-c", "import sglang")
    assert result.returncode == 1 and "ModuleNotFoundError" in result.stderr


def test_the_real_hf_is_found_where_a_user_install_puts_its_scripts(tmp_path, monkeypatch):
    import sys
    import sysconfig

    from specops.sim.host.build import BuildError, real_hf_executable

    interpreter, user_scripts = tmp_path / "bin", tmp_path / "user-bin"
    interpreter.mkdir()
    user_scripts.mkdir()
    monkeypatch.setattr(sys, "executable", str(interpreter / "python3"))
    # `pip install --user`: scripts go to the user scheme's folder, not beside the interpreter.
    monkeypatch.setattr(sysconfig, "get_path", lambda name, scheme=None: str(user_scripts if scheme else interpreter))
    with pytest.raises(BuildError, match="looked in .*user-bin"):
        real_hf_executable()
    (user_scripts / "hf").write_text("#!/bin/sh\n")
    assert real_hf_executable() == str(user_scripts / "hf")
