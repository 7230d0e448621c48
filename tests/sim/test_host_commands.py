"""The sim host's executables, run as real subprocesses, against the real captures and GNU tools."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from specops.sim.host.build import build_host
from specops.sim.hub.fixtures import load_fixtures
from specops.sim.profiles import load_profile

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]

# Real captures from an H200 host (tests/data/captures/README.md says where they come from).
CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures" / "h200-1gpu"
NO_HUB = "http://127.0.0.1:9"  # nothing here needs the Hub


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


@pytest.fixture(scope="module")
def hgx(tmp_path_factory, fixtures):
    return build_host(
        tmp_path_factory.mktemp("hgx") / "host",
        load_profile("h200x8-nvlink"),
        faults=[],
        hub_url=NO_HUB,
        fixtures=fixtures,
    )


def sh(world, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        list(argv), env=world.env, cwd=world.env["HOME"], capture_output=True, text=True, timeout=30
    )
    if check:
        assert result.returncode == 0, (argv, result.stdout, result.stderr)
    return result


def capture(name: str) -> str:
    return (CAPTURES / name).read_text()


# ---- nvidia-smi ---------------------------------------------------------------------------------


def test_table_has_the_captures_layout_for_every_gpu(hgx):
    out = sh(hgx, "nvidia-smi").stdout.splitlines()
    real = capture("nvidia-smi.txt").splitlines()
    # Everything but the timestamp and the PCI bus id matches the real H200's table line for line.
    assert re.fullmatch(r"\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}       ", out[0])
    assert out[1:8] == real[1:8]
    gpu_rows = [line for line in out if re.match(r"\|\s+\d+  NVIDIA H200", line)]
    assert len(gpu_rows) == 8
    expected = re.sub(r"00:06\.0", "18:00.0", real[8])
    assert gpu_rows[0] == expected
    assert all(len(line) == 91 for line in out[1:] if line)
    # Power differs (the profile's idle draw), the memory cell is the capture's.
    assert out[9][41:] == real[9][41:]
    assert out[-7:] == real[-7:]


def test_long_product_names_are_cut_like_nvidia_smi(seed):
    out = sh(seed, "nvidia-smi").stdout
    assert "|   0  NVIDIA RTX PRO 6000 Blac...    On  |" in out
    assert "0MiB /  97887MiB" in out


def test_query_gpu_csv_matches_the_capture(hgx):
    fields = (
        "index,name,uuid,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,"
        "power.draw,power.limit,driver_version,pcie.link.gen.current,pcie.link.width.current"
    )
    out = sh(hgx, "nvidia-smi", f"--query-gpu={fields}", "--format=csv").stdout.splitlines()
    real = capture("nvidia-smi-query.csv").splitlines()
    assert out[0] == real[0]
    assert len(out) == 9
    ours, theirs = out[1].split(", "), real[1].split(", ")
    same = [0, 1, 3, 4, 5, 6, 7, 9, 10, 11, 12]  # uuid and the sampled power draw differ
    assert [ours[i] for i in same] == [theirs[i] for i in same]
    assert re.fullmatch(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ours[2])
    assert len({line.split(", ")[2] for line in out[1:]}) == 8  # one UUID per GPU

    plain = sh(
        hgx, "nvidia-smi", "--query-gpu=index,name,memory.total,memory.used", "--format=csv,noheader,nounits", "-i", "0"
    ).stdout
    assert plain == capture("nvidia-smi-query-nounits.csv")


def test_query_errors_and_selection(hgx):
    bad = sh(hgx, "nvidia-smi", "--query-gpu=index,bogus", "--format=csv", check=False)
    assert bad.returncode == 2 and 'Field "bogus" is not a valid field to query.' in bad.stdout
    unknown = sh(hgx, "nvidia-smi", "--frobnicate", check=False)
    assert unknown.returncode == 2 and "Please run 'nvidia-smi -h' for help." in unknown.stdout
    missing = sh(hgx, "nvidia-smi", "-i", "9", check=False)
    assert missing.returncode == 6 and "No devices were found" in missing.stdout
    listed = sh(hgx, "nvidia-smi", "-L").stdout.splitlines()
    assert len(listed) == 8 and re.fullmatch(r"GPU 7: NVIDIA H200 \(UUID: GPU-[0-9a-f-]{36}\)", listed[7])
    two = sh(hgx, "nvidia-smi", "--query-gpu=index", "--format=csv,noheader", "-i", "2,5").stdout
    assert two == "2\n5\n"


def test_compute_apps_header_alone_when_idle(hgx):
    out = sh(hgx, "nvidia-smi", "--query-compute-apps=pid,process_name,used_gpu_memory", "--format=csv").stdout
    assert out == capture("misc.txt").splitlines()[-1] + "\n"


def test_details_report(hgx):
    out = sh(hgx, "nvidia-smi", "-q", "-i", "0").stdout
    real = capture("nvidia-smi-q.txt")
    for line in (
        "    Product Name                                       : NVIDIA H200",
        "    Product Architecture                               : Hopper",
        "        Total                                          : 143771 MiB",
        "        Free                                           : 143156 MiB",
        "    Processes                                          : None",
    ):
        assert line in real and line in out
    assert "Attached GPUs                                          : 8" in out
    assert out.startswith("\n==============NVSMI LOG==============\n\n")


def test_topology_nvlink_and_pcie(hgx, seed):
    nv = sh(hgx, "nvidia-smi", "topo", "-m").stdout
    real = capture("nvidia-smi-topo.txt")
    header = nv.splitlines()[0]
    assert header.startswith("\t\x1b[4mGPU0\tGPU1") and header.endswith(
        "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m"
    )
    assert nv.split("\n\nLegend:")[1] == real.split("\n\nLegend:")[1]
    rows = [line.split("\t") for line in nv.split("\n\n")[0].splitlines()[1:]]
    assert len(rows) == 8 and rows[0][1:9] == [" X "] + ["NV18"] * 7
    assert rows[7][9:] == ["64-127", "1", "", "N/A"]

    pcie = [line.split("\t") for line in sh(seed, "nvidia-smi", "topo", "-m").stdout.split("\n\n")[0].splitlines()[1:]]
    assert pcie[0][1:9] == [" X ", "PIX", "NODE", "NODE", "SYS", "SYS", "SYS", "SYS"]
    assert pcie[5][1:9] == ["SYS", "SYS", "SYS", "SYS", "PIX", " X ", "NODE", "NODE"]
    assert "NV" not in "".join(cell for row in pcie for cell in row[1:9])


# ---- df -----------------------------------------------------------------------------------------


def test_df_h_on_the_seed_host(seed):
    out = sh(seed, "df", "-h", "/").stdout.splitlines()
    assert out[0].split() == ["Filesystem", "Size", "Used", "Avail", "Use%", "Mounted", "on"]
    assert out[1].split() == ["/dev/mapper/pve-vm--200--disk--0", "1000G", "971G", "29G", "98%", seed.root]
    assert len(out) == 2


def test_df_bytes_output_and_growth_by_byte_scale(hgx):
    data = Path(hgx.root) / "data"
    fields = "--output=source,fstype,size,used,avail,pcent,target"
    before = sh(hgx, "df", "-B1", fields, str(data)).stdout.splitlines()
    assert before[0].split() == ["Filesystem", "Type", "1B-blocks", "Used", "Avail", "Use%", "Mounted", "on"]
    source, fstype, size, used, avail, pcent, target = before[1].split()
    assert (source, fstype, target) == ("/dev/md0", "xfs", str(data))
    assert int(size) == 14305 * 1024**3 and int(used) == 3120 * 1024**3 and int(avail) == int(size) - int(used)
    (data / "shard.bin").write_bytes(b"\0" * 1_000_000)
    after = sh(hgx, "df", "-B1", "--output=used", str(data / "shard.bin")).stdout.splitlines()
    assert int(after[1]) == int(used) + 1_000_000 * hgx.byte_scale
    # / does not count what lies on /data, and it lists every mount with the capture's tmpfs.
    listing = sh(hgx, "df", "-T").stdout.splitlines()
    assert [row.split()[-1] for row in listing[1:]] == [hgx.root, f"{hgx.root}/dev/shm", str(data)]
    assert listing[0].split()[:4] == ["Filesystem", "Type", "1K-blocks", "Used"]


def test_df_errors_like_gnu(seed):
    missing = sh(seed, "df", "-h", "/nowhere/at/all", check=False)
    assert missing.returncode == 1 and missing.stderr == "df: /nowhere/at/all: No such file or directory\n"
    bad = sh(seed, "df", "--bogus", check=False)
    assert (
        bad.returncode == 1
        and bad.stderr == "df: unrecognized option '--bogus'\nTry 'df --help' for more information.\n"
    )
    field = sh(seed, "df", "--output=size,nope", check=False)
    assert field.returncode == 1 and "df: option --output: field nope unknown" in field.stderr


@pytest.mark.slow
@pytest.mark.serial  # on the one small tmpfs, which nothing else writes to meanwhile: its figures hold still
@pytest.mark.skipif(
    shutil.which("df", path="/usr/bin:/bin") is None, reason="needs GNU df (every Debian has it: CI never skips this)"
)
def test_df_formatting_matches_gnu_df_on_a_real_filesystem(tmp_path, fixtures, small_fs):
    """A real mount is reported from statvfs: every number column must equal GNU df's own."""
    backing = small_fs
    (backing / "f").write_bytes(os.urandom(1_500_000))
    profile = load_profile("seed-ct200")
    profile = profile.model_copy(
        update={
            "mounts": [
                *profile.mounts,
                profile.mounts[0].model_copy(
                    update={"mount_point": "/data", "device": "tmpfs", "fstype": "tmpfs", "size_gib": 1, "used_gib": 0}
                ),
            ]
        }
    )
    world = build_host(
        tmp_path / "host", profile, faults=[], hub_url=NO_HUB, fixtures=fixtures, mount_backing={"/data": backing}
    )
    gnu_df = shutil.which("df", path="/usr/bin:/bin")

    def gnu(flags):
        return subprocess.run([gnu_df, *flags, str(backing)], capture_output=True, text=True).stdout.splitlines()

    for flags in (["-B1"], ["-k"], ["-h"], ["-H"], ["-BM"], ["-B1500"], ["-P"], ["-i"]):
        ours = sh(world, "df", *flags, str(Path(world.root) / "data")).stdout.splitlines()
        theirs = gnu(flags)
        assert ours[0].split()[1:-2] == theirs[0].split()[1:-2], flags
        assert ours[1].split()[1:-1] == theirs[1].split()[1:-1], flags


# ---- free, nproc, python, huggingface-cli -------------------------------------------------------


def test_free_like_procps(seed):
    real = capture("misc.txt").splitlines()
    out = sh(seed, "free", "-b").stdout.splitlines()
    assert out[0] == real[0]
    total = int(out[1].split()[1])
    assert total == int(1007.5 * 1024**3) // 4096 * 4096
    assert len(out[1]) == len(out[1].rstrip()) and out[2] == real[2]
    assert re.match(r"Mem: {5}\d", out[1])  # label padded to 9, first number to 11
    human = sh(seed, "free", "-h").stdout.splitlines()
    assert human[1].split()[1] == "1007Gi" and human[2].split()[1:] == ["0B", "0B", "0B"]
    assert int(sh(seed, "free", "-g").stdout.splitlines()[1].split()[1]) == 1007


def test_nproc_python_and_sglang(seed, hgx):
    assert sh(seed, "nproc").stdout == "128\n"
    for name in ("python", "python3", "python3.12"):
        assert sh(seed, name, "--version").stdout == "Python 3.12.3\n"
    version = sh(seed, "python", "-c", "import sglang; print(sglang.__version__)").stdout
    assert version == "0.5.23\n"
    assert sh(hgx, "python3", "-c", "import sglang; print(sglang.__version__)").stdout == "0.5.23\n"


def test_huggingface_cli_by_hub_version(seed, hgx):
    stub = sh(seed, "huggingface-cli", "download", "SubSir/Kimi-K2.6-DFlash-tmp-long", check=False)
    assert stub.returncode == 1
    assert "`huggingface-cli` is deprecated and no longer works. Use `hf` instead." in stub.stderr
    gone = subprocess.run(["sh", "-c", "huggingface-cli --help"], env=hgx.env, capture_output=True, text=True)
    assert gone.returncode == 127 and "not found" in gone.stderr
    assert (Path(hgx.root) / ".sim/bin/hf").exists() and not (Path(hgx.root) / ".sim/bin/huggingface-cli").exists()


# ---- ss ---------------------------------------------------------------------------------------------


def test_ss_lists_the_hosts_ports_not_this_machines(tmp_path, fixtures):
    from specops.sim.faults import PortInUse

    world = build_host(
        tmp_path / "host", load_profile("seed-ct200"), faults=[PortInUse(port=30000)], hub_url=NO_HUB, fixtures=fixtures
    )
    out = sh(world, "ss", "-ltnp").stdout.splitlines()
    assert out[0].startswith("State") and len(out) == 2  # only the fault's squatter, none of this machine's sockets
    assert "127.0.0.1:30000" in out[1] and f'users:(("python3",pid={os.getpid()},' in out[1]
    assert sh(world, "ss", "-Hltn", "sport = :30001").stdout.strip() == ""
    refused = sh(world, "ss", "-s", check=False)
    assert refused.returncode == 1 and "only listening TCP sockets are modelled" in refused.stderr


def test_sleep_waits_on_the_hosts_clock_and_holds_it_at_its_end(seed):
    """The host's time cannot pass a sleep's end before the sleep has returned, however long this machine keeps
    it from running: a tool polling the host by `sleep` polls at the host time it asked for."""
    start = float(sh(seed, "date", "+%s.%N").stdout)
    sleeper = subprocess.Popen(["sleep", "1"], env=seed.env, cwd=seed.env["HOME"])
    try:
        time.sleep(0.3)
        os.kill(sleeper.pid, signal.SIGSTOP)  # starved: a scheduler that does not run it
        time.sleep(1.3)  # past its end on this machine's clock
        assert float(sh(seed, "date", "+%s.%N").stdout) <= start + 1.0 + 0.05
    finally:
        os.kill(sleeper.pid, signal.SIGCONT)
    assert sleeper.wait(timeout=30) == 0
    assert float(sh(seed, "date", "+%s.%N").stdout) >= start + 1.0


def test_sleep_speaks_gnu_sleep(seed):
    assert sh(seed, "sleep", "0.1s", "0.05").returncode == 0
    missing = sh(seed, "sleep", check=False)
    assert (missing.returncode, missing.stderr) == (
        1,
        "sleep: missing operand\nTry 'sleep --help' for more information.\n",
    )
    invalid = sh(seed, "sleep", "5x", check=False)
    assert invalid.returncode == 1 and invalid.stderr.startswith("sleep: invalid time interval '5x'\n")
