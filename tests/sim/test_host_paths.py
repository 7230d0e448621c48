"""Host paths in, real paths inside, host paths out: the translation a simulated host's Host and sshd apply."""

from __future__ import annotations

from pathlib import Path

from specops.sim.host.host_paths import HostPaths, as_host_shows

ROOT = "/tmp/specops-sim-seed-ct200-ab12cd34"


def _paths() -> HostPaths:
    return HostPaths(ROOT, "/root", ["/data", "/dev", "/.sim"], ["/etc/os-release", "/proc/cpuinfo"])


def test_what_the_host_owns_is_made_real_wherever_a_line_names_it():
    paths = _paths()
    line = "python3 -m sglang.launch_server --model-path=/root/models/x --log '/data/l og' 2>/dev/null </dev/null"
    assert paths.inward(line) == (
        f"python3 -m sglang.launch_server --model-path={ROOT}/root/models/x --log '{ROOT}/data/l og' "
        f"2>{ROOT}/dev/null <{ROOT}/dev/null"
    )
    assert paths.inward("PATH=/root/bin:/usr/bin") == f"PATH={ROOT}/root/bin:/usr/bin"
    assert paths.inward("cat /etc/os-release /etc/hosts /proc/cpuinfo /proc/1/cmdline") == (
        f"cat {ROOT}/etc/os-release /etc/hosts {ROOT}/proc/cpuinfo /proc/1/cmdline"
    )
    assert paths.real("/root") == f"{ROOT}/root" and paths.real("/.sim/world.json") == f"{ROOT}/.sim/world.json"


def test_what_only_looks_like_a_host_path_is_left_alone():
    paths = _paths()
    for text in ("/rootfs/x", "/usr/bin/env", "~/root/x", "$HOME/root", "a/root/b", "/tmp/x", "relative/data"):
        assert paths.inward(text) == text
    assert paths.real("models/x") == "models/x"  # relative: the caller resolves it under the home
    assert paths.inward(f"{ROOT}/root/x") == f"{ROOT}/root/x"  # already real: never translated twice
    assert paths.real(f"{ROOT}/data") == f"{ROOT}/data"


def test_what_comes_out_has_the_root_taken_out():
    paths = _paths()
    assert paths.outward(f"{ROOT}/root/models/x\ncwd {ROOT}\n") == "/root/models/x\ncwd /\n"
    assert paths.outward(f"{ROOT}-other/root") == f"{ROOT}-other/root"  # another world's root is not this one's
    assert as_host_shows(ROOT, '{"model_path": "' + ROOT + '/root/m"}') == '{"model_path": "/root/m"}'
    assert paths.outward_bytes(b"\xff\xfe" + ROOT.encode()) == b"\xff\xfe" + ROOT.encode()  # not text: untouched
    assert paths.inward_bytes(b"at /root/x") == f"at {ROOT}/root/x".encode()


def test_a_built_worlds_files_in_system_directories_are_owned_one_by_one(tmp_path: Path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text("PRETTY_NAME=x\n")
    (tmp_path / "usr/local/nvidia/bin").mkdir(parents=True)
    (tmp_path / "usr/local/nvidia/bin/nvidia-smi").write_text("")
    paths = HostPaths.of_world(tmp_path, "/root", ["/", "/data"])
    root = str(tmp_path)
    assert paths.real("/etc/os-release") == f"{root}/etc/os-release" and paths.real("/etc/hosts") == "/etc/hosts"
    assert paths.inward("[ -x /usr/local/nvidia/bin/nvidia-smi ]") == f"[ -x {root}/usr/local/nvidia/bin/nvidia-smi ]"
    assert paths.real("/usr/local/bin/python3") == "/usr/local/bin/python3"
    # No /dev of its own: /dev/null stays this machine's.
    assert paths.inward("2>/dev/null") == "2>/dev/null" and paths.real("/data/x") == f"{root}/data/x"
