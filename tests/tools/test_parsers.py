"""Parsers against real captures from an H200 host (tests/data/captures/) and sim-printed multi-GPU output."""

from pathlib import Path

import pytest

from specops.tools.parsers.df import parse_df
from specops.tools.parsers.free import parse_free
from specops.tools.parsers.nvidia_smi import parse_compute_apps, parse_cuda_version, parse_gpu_query
from specops.tools.parsers.nvidia_topo import parse_topology
from specops.tools.parsers.os_release import parse_os_release, pretty_name
from specops.tools.parsers.ps import parse_ps
from specops.tools.parsers.versions import first_version, version_tuple

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures" / "h200-1gpu"
QUERY_FIELDS = (
    "index",
    "name",
    "uuid",
    "memory.total",
    "memory.used",
    "memory.free",
    "utilization.gpu",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "driver_version",
    "pcie.link.gen.current",
    "pcie.link.width.current",
)

# An 8-GPU PCIe host as `nvidia-smi topo -m` prints it (header in ANSI underline, tab separated).
PCIE_TOPO = (
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tPIX\tNODE\tSYS\t0-63\t0\t\tN/A\n"
    "GPU1\tPIX\t X \tNODE\tSYS\t0-63\t0\t\tN/A\n"
    "GPU2\tNODE\tNODE\t X \tSYS\t64-127\t1\t\tN/A\n"
    "GPU3\tSYS\tSYS\tSYS\t X \t64-127\t1\t\tN/A\n"
    "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n"
)
NVLINK_TOPO = PCIE_TOPO.replace("PIX", "NV18").replace("NODE", "NV18").replace("SYS\t", "NV18\t")


def capture(name: str) -> str:
    return (CAPTURES / name).read_text()


def test_gpu_query_with_units_matches_the_capture():
    [gpu] = parse_gpu_query(capture("nvidia-smi-query.csv"), QUERY_FIELDS)
    assert (gpu.index, gpu.name, gpu.memory_total_mib, gpu.memory_used_mib) == (0, "NVIDIA H200", 143771, 0)
    assert gpu.driver_version == "580.159.04" and gpu.pcie_gen == 5


def test_gpu_query_without_units_or_header():
    [gpu] = parse_gpu_query(capture("nvidia-smi-query-nounits.csv"), ("index", "name", "memory.total", "memory.used"))
    assert gpu.memory_total_mib == 143771 and gpu.memory_used_mib == 0


def test_gpu_query_refuses_a_line_of_the_wrong_shape():
    with pytest.raises(ValueError):
        parse_gpu_query("0, NVIDIA H200\n", ("index", "name", "memory.total"))


def test_compute_apps_empty_and_listed():
    assert parse_compute_apps("") == []
    [app] = parse_compute_apps("123, sglang::scheduler_TP0, 83520, GPU-abc\n")
    assert (app.pid, app.used_memory_mib, app.gpu_uuid) == (123, 83520, "GPU-abc")


def test_cuda_version_from_the_summary_header():
    assert parse_cuda_version(capture("nvidia-smi.txt")) == "13.0"
    assert parse_cuda_version("no header here") is None


def test_topology_of_one_gpu_from_the_capture():
    topo = parse_topology(capture("nvidia-smi-topo.txt"))
    assert topo.gpus == ["GPU0"] and topo.interconnect == "single"
    assert topo.cpu_affinity == {"GPU0": "0-15"} and topo.links == {"GPU0": {"GPU0": "X"}}


def test_topology_pcie_and_nvlink_summaries():
    pcie = parse_topology(PCIE_TOPO)
    assert pcie.interconnect == "pcie" and pcie.link_counts == {"PIX": 1, "NODE": 2, "SYS": 3}
    assert pcie.links["GPU2"]["GPU0"] == "NODE" and pcie.numa_affinity["GPU3"] == "1"
    nvlink = parse_topology(NVLINK_TOPO)
    assert nvlink.interconnect == "nvlink" and nvlink.min_nvlinks == 18
    mixed = parse_topology(PCIE_TOPO.replace("PIX", "NV4"))
    assert mixed.interconnect == "mixed" and mixed.min_nvlinks == 4


def test_topology_without_a_matrix_is_an_error():
    with pytest.raises(ValueError):
        parse_topology("NVML: Driver/library version mismatch\n")


def test_df_bytes_from_the_capture():
    rows = parse_df(capture("df.txt").split("\n\n")[0])
    root = next(r for r in rows if r.mount_point == "/")
    assert (root.source, root.fstype, root.size_bytes, root.used_bytes, root.avail_bytes, root.use_percent) == (
        "/dev/vda",
        "ext4",
        270553174016,
        17286672384,
        68702265344,
        21,
    )


def test_df_mount_point_with_a_space():
    [row] = parse_df("Filesystem Type 1B-blocks Used Avail Use% Mounted on\n/dev/sdb ext4 100 40 60 40% /mnt/my disk\n")
    assert row.mount_point == "/mnt/my disk"


def test_free_from_the_capture():
    info = parse_free(capture("misc.txt"))
    assert info.total_bytes == 135128870912 and info.available_bytes == 134596698112 and info.swap_total_bytes == 0


def test_os_release_and_ps():
    fields = parse_os_release(
        'NAME="Ubuntu"\nVERSION="24.04.3 LTS (Noble Numbat)"\nPRETTY_NAME="Ubuntu 24.04.3 LTS"\n# c\n'
    )
    assert pretty_name(fields) == "Ubuntu 24.04.3 LTS"
    rows = parse_ps("  PID COMMAND\n   1 /sbin/init\n 42 python3 -m sglang.launch_server --port 30000\n")
    assert [r.pid for r in rows] == [1, 42] and rows[1].words[2] == "sglang.launch_server"


def test_versions():
    assert first_version("\x1b[32m✓ hf version\x1b[0m\n  version: 2.4.0") == "2.4.0"
    assert first_version("Python 3.12.3") == "3.12.3"
    assert first_version(capture("misc.txt").splitlines()[-2]) == "2.11.0+cu130"
    assert first_version("Usage: hf [OPTIONS]") is None
    assert version_tuple("0.5.10rc1") == (0, 5, 10) and version_tuple("0.5.2") < (0, 5, 10)
