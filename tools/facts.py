"""host_facts: what a host has (GPUs and their links, CPU, memory, disks, software) and what it already serves.

Everything is read with the host's own tools (nvidia-smi, df, free, /proc,
python3, hf) in a handful of read-only commands, so the same tool answers on
local, ssh:// and sim: hosts. Missing pieces are facts, not errors: a host
without nvidia-smi answers gpus=[] with a note, a host without SGLang answers
sglang_version=None.

Also here, because the space tool needs it too: `scan_processes`, the process
table with exact argv, cwd and open files (from /proc).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..transcripts.redaction import is_secret_flag
from .context import ToolContext
from .disk import Mount, human_bytes, list_mounts
from .hosts import CommandResult, Host
from .inputs import one_line
from .parsers.free import parse_free
from .parsers.nvidia_smi import (
    APP_FIELDS,
    GPU_FIELDS,
    ComputeApp,
    parse_compute_apps,
    parse_cuda_version,
    parse_gpu_query,
)
from .parsers.nvidia_topo import GpuTopology, parse_topology
from .parsers.os_release import parse_os_release, pretty_name
from .parsers.ps import PS_ARGS, parse_ps
from .parsers.versions import first_version, strip_ansi
from .probing import probe, sections
from .registry import tool
from .speculative_support import SpeculativeSupport, speculative_support

MIB = 1024**2


# -- the process table --------------------------------------------------------------------------

# Reads /proc on the host. Never the environment (it may hold tokens): argv, cwd and open files only.
_SCAN_PROCESSES = r"""
import json, os, sys
fds_wanted = sys.argv[1] == "fds"
out = []
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    base = "/proc/" + name
    try:
        with open(base + "/cmdline", "rb") as f:
            argv = [w.decode("utf-8", "replace") for w in f.read().split(b"\0") if w]
        with open(base + "/stat") as f:
            ppid = int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        continue
    if not argv:
        continue
    try:
        cwd = os.readlink(base + "/cwd")
    except OSError:
        cwd = None
    files = set()
    if fds_wanted:
        try:
            for fd in os.listdir(base + "/fd"):
                try:
                    target = os.readlink(base + "/fd/" + fd)
                except OSError:
                    continue
                if target.startswith("/"):
                    files.add(target)
        except OSError:
            pass
    out.append({"pid": int(name), "ppid": ppid, "argv": argv, "cwd": cwd, "open_files": sorted(files)})
print(json.dumps(out))
"""


def redact_argv(argv: Sequence[str]) -> list[str]:
    """argv with the values of flags that are secrets (--api-key, --hf-token, --token, --admin-api-key...) shown
    as ***. Which flags those are is redaction's rule (`is_secret_flag`): --speculative-num-draft-tokens,
    --max-total-tokens or --mask-token keep their values."""
    words: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            words.append("***")
            hide_next = False
        elif "=" in word and is_secret_flag(word.split("=", 1)[0]):
            words.append(word.split("=", 1)[0] + "=***")
        elif is_secret_flag(word):
            words.append(word)
            hide_next = True
        else:
            words.append(word)
    return words


class HostProcess(BaseModel):
    model_config = ConfigDict(frozen=True)

    pid: int
    ppid: int | None = None
    argv: list[str]
    cwd: str | None = Field(default=None, description="Working directory: relative paths in argv are relative to it")
    open_files: list[str] = []

    def paths(self) -> list[str]:
        """Every absolute path this process names or holds: argv words (relative ones against cwd) and open files."""
        found = set(self.open_files)
        for word in self.argv[1:]:
            value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
            if not value or value.startswith("-") or "://" in value:
                continue
            if value.startswith("/"):
                found.add(posixpath.normpath(value))
            elif self.cwd is not None:
                # Any word may be a relative path; one that is not names nothing inside a directory we check.
                found.add(posixpath.normpath(posixpath.join(self.cwd, value)))
        if self.cwd:
            found.add(self.cwd)
        return sorted(found)


def scan_processes(host: Host, *, open_files: bool = False) -> list[HostProcess]:
    """Every process on the host with exact argv and cwd (from /proc via python3); `ps` when python3 is missing."""
    done = probe(host, ["python3", "-c", _SCAN_PROCESSES, "fds" if open_files else "argv"])
    if done.ok:
        try:
            return [HostProcess.model_validate(p) for p in json.loads(done.stdout)]
        except ValueError:
            pass  # not the JSON we printed: fall through to ps
    listed = probe(host, list(PS_ARGS))
    if not listed.ok:
        return []
    return [HostProcess(pid=row.pid, argv=row.words) for row in parse_ps(listed.stdout)]


# -- results ------------------------------------------------------------------------------------


class GpuFacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    model: str
    uuid: str
    memory_total_bytes: int
    memory_used_bytes: int | None
    memory_total: str = Field(description="Human form, GiB")
    memory_used: str | None
    driver_version: str
    pcie_gen: int | None


class CpuFacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str | None
    cores: int | None = Field(description="Logical CPUs, as nproc prints")


class MemoryFacts(BaseModel):
    model_config = ConfigDict(frozen=True)

    total_bytes: int
    available_bytes: int
    total: str
    available: str


class CliFacts(BaseModel):
    """A Hugging Face command-line tool on the host's PATH, and whether it really runs its commands."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: str | None
    works: bool
    version: str | None = None
    detail: str = Field(description="What was run and what it said, in one line")


class ServingProcess(BaseModel):
    """An SGLang server running on the host."""

    model_config = ConfigDict(frozen=True)

    pid: int
    argv: list[str] = Field(description="Its command line, secrets (--api-key ...) shown as ***")
    port: int
    model_path: str | None
    draft_model_path: str | None
    speculative_algorithm: str | None
    tp_size: int | None
    gpu_memory_bytes: int = Field(description="GPU memory held by it and its children, all GPUs together")
    gpu_memory: str
    gpus_used: int


class GpuProcess(BaseModel):
    """A process holding GPU memory that is not an SGLang server of this host (another job, a leftover)."""

    model_config = ConfigDict(frozen=True)

    pid: int
    process_name: str
    gpu_memory_bytes: int
    gpus_used: int


class GpuAccess(BaseModel):
    """How the GPUs were looked for: nvidia-smi on PATH and, where it is not or lists no GPU, what says why."""

    model_config = ConfigDict(frozen=True)

    nvidia_smi: str | None = Field(description="The nvidia-smi on the PATH of the host's commands; None: none")
    listed_none: str | None = Field(default=None, description="What that nvidia-smi printed when it listed no GPU")
    off_path: str | None = Field(default=None, description="An nvidia-smi in a standard place outside that PATH")
    driver_version: str | None = Field(
        default=None, description="The kernel module's, from /proc/driver/nvidia/version (read without nvidia-smi)"
    )
    device_files: list[str] = Field(default_factory=list, description="/dev/nvidia* (or WSL's /dev/dxg) present")

    @property
    def driver_present(self) -> bool:
        """Whether anything besides nvidia-smi says an NVIDIA driver is there."""
        return bool(self.driver_version or self.device_files or self.off_path)


class HubReach(BaseModel):
    """Whether the host opens a TCP connection to the Hub it downloads from (or to the proxy its environment names
    for it): the first hop of every download, checked without a request, so nothing is asked of the Hub."""

    model_config = ConfigDict(frozen=True)

    endpoint: str = Field(description="The host's HF_ENDPOINT, else https://huggingface.co")
    via: str | None = Field(default=None, description="host:port of the proxy the host's environment names for it")
    reached: bool
    detail: str = Field(description="What the connection attempt said, in one line")


class HostFactsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GroupFacts(BaseModel):
    """The run's other nodes, when its host is a group: what a launch over them needs (tools/cluster/facts.py)."""

    nodes: list[str] = Field(description="Every node's host spec, rank 0 (this host) first")
    hostnames: list[str | None]
    gpu_count: int = Field(description="GPUs of every node together")
    ok: bool = Field(description="Every node has the same GPU model and count and the same SGLang")
    problems: list[str] = Field(description="Each failed check, naming the node")
    shared_root: str | None = Field(description="A root every node shares (one download serves all); None")
    dist_init_reach: str = Field(
        default="", description="Whether every node opened a TCP connection to rank 0's dist-init address"
    )
    summary: str


class HostFacts(BaseModel):
    host: str
    hostname: str | None
    os: str | None
    kernel: str | None
    gpus: list[GpuFacts]
    gpu_count: int
    gpu_model: str | None
    gpu_memory_total_bytes: int = Field(description="All GPUs together")
    driver_version: str | None
    cuda_version: str | None = Field(description="Highest CUDA the driver supports (nvidia-smi's header)")
    interconnect: GpuTopology | None
    gpu_access: GpuAccess | None = Field(
        default=None, description="How the GPUs were looked for (None: a record from before it was kept)"
    )
    cpu: CpuFacts
    memory: MemoryFacts | None
    python_version: str | None
    sglang_version: str | None = Field(description="None: SGLang is not installed for the host's python3")
    speculative: SpeculativeSupport | None = Field(
        default=None, description="What that SGLang allows for speculative decoding (None: no SGLang)"
    )
    huggingface_hub_version: str | None = Field(description="The huggingface_hub python3 imports; None: not installed")
    clis: list[CliFacts]
    hub: HubReach | None = Field(
        default=None, description="Whether the host reaches the Hub it downloads from (None: not checked, no python3)"
    )
    serving: list[ServingProcess]
    other_gpu_processes: list[GpuProcess]
    mounts: list[Mount]
    notes: list[str]
    group: GroupFacts | None = Field(default=None, description="The other nodes of the run's host group, if any")


# -- reading the host ---------------------------------------------------------------------------

_SYSTEM_SCRIPT = r"""
echo "@@hostname"; printf '%s\n' "${HOSTNAME:-$(hostname 2>/dev/null)}"
echo "@@kernel"; uname -r 2>/dev/null
echo "@@os_release"; cat /etc/os-release 2>/dev/null
echo "@@nproc"; nproc 2>/dev/null
echo "@@cpu_model"; grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2-
echo "@@free"; free -b 2>/dev/null
echo "@@python"; python3 --version 2>&1
echo "@@hf"; command -v hf 2>/dev/null
echo "@@huggingface-cli"; command -v huggingface-cli 2>/dev/null
"""

# Without nvidia-smi on PATH, the signs of a driver: a host may have one loaded with nvidia-smi elsewhere (a
# container without the driver's utilities, a PATH of non-interactive shells without /usr/local/nvidia/bin, WSL's
# /usr/lib/wsl/lib). Each place is its own literal path in the script, as the host names it.
_NVIDIA_SMI_PLACES = ("/usr/bin", "/usr/local/bin", "/usr/local/nvidia/bin", "/usr/lib/wsl/lib", "/opt/nvidia/bin")
_OFF_PATH_CHECKS = "".join(f"  [ -x {p}/nvidia-smi ] && echo {p}/nvidia-smi\n" for p in _NVIDIA_SMI_PLACES)

_GPU_SCRIPT = rf"""
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "@@missing"
  echo "@@driver"; head -n 1 /proc/driver/nvidia/version 2>/dev/null
  echo "@@devices"; for d in /dev/nvidiactl /dev/nvidia[0-9]* /dev/dxg; do [ -e "$d" ] && echo "$d"; done
  echo "@@off_path"
{_OFF_PATH_CHECKS}  exit 0
fi
echo "@@path"; command -v nvidia-smi
echo "@@query"; nvidia-smi --query-gpu={",".join(GPU_FIELDS)} --format=csv,noheader,nounits 2>&1
echo "@@apps"; nvidia-smi --query-compute-apps={",".join(APP_FIELDS)} --format=csv,noheader,nounits 2>&1
echo "@@summary"; nvidia-smi 2>&1 | head -n 5
echo "@@topo"; nvidia-smi topo -m 2>&1
"""

# A TCP connection to the Hub's host (or to the proxy the environment names for it, as huggingface_hub would use):
# DNS, a route and a firewall are what a host without the Hub lacks. No HTTP request: nothing is asked of the Hub
# (its rate limits count requests). A proxy's user and password are never printed.
HUB_CONNECT_TIMEOUT_S = 5.0
_HUB_SCRIPT = r"""
import json, os, socket, sys, urllib.parse, urllib.request
endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
url = urllib.parse.urlsplit(endpoint)
host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)
proxies = urllib.request.getproxies_environment()
proxy = None if urllib.request.proxy_bypass_environment(host, proxies) else proxies.get(url.scheme) or proxies.get("all")
via = None
if proxy:
    p = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
    host, port = p.hostname or "", p.port or (443 if p.scheme == "https" else 80)
    via = f"{host}:{port}"
out = {"endpoint": endpoint, "via": via, "reached": False}
timeout = float(sys.argv[1])
try:
    socket.create_connection((host, port), timeout=timeout).close()
    out.update(reached=True, detail=f"connected to {host}:{port}")
except socket.gaierror as exc:
    out["detail"] = f"cannot resolve {host}: {exc.strerror or exc}"
except TimeoutError:
    out["detail"] = f"no answer from {host}:{port} in {timeout:g} s"
except OSError as exc:
    out["detail"] = f"cannot connect to {host}:{port}: {exc.strerror or exc}"
print(json.dumps(out))
"""

# Versions as installed packages say (no import: torch would take seconds); sglang is imported
# when it has no distribution metadata (a source checkout), as `import sglang` is what serving uses.
_VERSIONS_SCRIPT = r"""
import json
from importlib import metadata
out = {}
for name in ("sglang", "huggingface_hub", "torch"):
    try:
        out[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        out[name] = None
if out["sglang"] is None:
    try:
        import sglang
        out["sglang"] = getattr(sglang, "__version__", None)
    except Exception:
        pass
print(json.dumps(out))
"""


def _gib(n: int) -> str:
    return human_bytes(n)


def _flag(argv: list[str], *names: str) -> str | None:
    for i, word in enumerate(argv):
        for name in names:
            if word == name and i + 1 < len(argv):
                return argv[i + 1]
            if word.startswith(name + "="):
                return word.split("=", 1)[1]
    return None


def is_sglang_server(argv: list[str]) -> bool:
    """`python -m sglang.launch_server ...` or `sglang serve ...` (its scheduler children are not counted)."""
    if "sglang.launch_server" in argv:
        return argv.index("sglang.launch_server") > 0 and argv[argv.index("sglang.launch_server") - 1] == "-m"
    return len(argv) > 1 and posixpath.basename(argv[0]) == "sglang" and argv[1] == "serve"


def _descendants(pid: int, processes: list[HostProcess]) -> set[int]:
    children: dict[int, list[int]] = {}
    for p in processes:
        if p.ppid is not None:
            children.setdefault(p.ppid, []).append(p.pid)
    tree, stack = {pid}, [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in tree:
                tree.add(child)
                stack.append(child)
    return tree


def _hf_cli(host: Host) -> CliFacts:
    for argv in (["hf", "version"], ["hf", "--version"]):
        done = probe(host, argv, timeout=60)
        if done.exit_code == 127:
            return CliFacts(name="hf", path=None, works=False, detail="not on PATH")
        text = strip_ansi(done.stdout + done.stderr)
        if "Usage: hf" in text and "version:" not in text:
            # The seed's failure: the CLI answers every command with its help and downloads nothing.
            return CliFacts(
                name="hf",
                path=None,
                works=False,
                detail=f"`{' '.join(argv)}` printed hf's help text instead of a version: it ignores its commands "
                "and will not download either",
            )
        version = first_version(text) if done.ok else None
        if version:
            return CliFacts(name="hf", path=None, works=True, version=version, detail=f"`{' '.join(argv)}`: {version}")
    return CliFacts(
        name="hf", path=None, works=False, detail=f"`hf --version` exited {done.exit_code}: {text.strip()[-200:]}"
    )


def _legacy_cli(host: Host) -> CliFacts:
    name = "huggingface-cli"
    done = probe(host, [name, "--help"], timeout=60)
    if done.exit_code == 127:
        return CliFacts(name=name, path=None, works=False, detail="not on PATH (huggingface_hub 2.x has none)")
    text = strip_ansi(done.stdout + done.stderr).strip()
    if "no longer works" in text or not done.ok:
        first = next((line for line in text.splitlines() if line.strip()), "")
        return CliFacts(name=name, path=None, works=False, detail=f"`{name} --help` exited {done.exit_code}: {first}")
    deprecated = "deprecated" in text.lower()
    return CliFacts(
        name=name,
        path=None,
        works=True,
        detail=f"`{name} --help` works" + (" but warns it is deprecated in favour of `hf`" if deprecated else ""),
    )


@dataclass(frozen=True)
class _HostProbes:
    """The probes gather_host_facts runs side by side, as futures (read each with .result())."""

    hub: Future[CommandResult]
    system: Future[CommandResult]
    gpu: Future[CommandResult]
    versions: Future[CommandResult]
    hf: Future[CliFacts]
    legacy: Future[CliFacts]
    processes: Future[list[HostProcess]]
    mounts: Future[list[Mount]]


def _run_probes(host: Host) -> _HostProbes:
    """Start every read-only probe of the host side by side (each is its own process or SSH channel); all have
    finished when this returns."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return _HostProbes(
            # First: the one that may wait for a connection timeout, while the others run.
            hub=pool.submit(probe, host, ["python3", "-c", _HUB_SCRIPT, str(HUB_CONNECT_TIMEOUT_S)]),
            system=pool.submit(probe, host, ["sh", "-c", _SYSTEM_SCRIPT]),
            gpu=pool.submit(probe, host, ["sh", "-c", _GPU_SCRIPT]),
            versions=pool.submit(probe, host, ["python3", "-c", _VERSIONS_SCRIPT]),
            hf=pool.submit(_hf_cli, host),
            legacy=pool.submit(_legacy_cli, host),
            processes=pool.submit(scan_processes, host),
            mounts=pool.submit(list_mounts, host),
        )


def _memory_facts(system: dict[str, str], notes: list[str]) -> MemoryFacts | None:
    """Total and available memory from `free -b`'s section; None (and a note) when it printed nothing usable."""
    try:
        info = parse_free(system.get("free", ""))
        return MemoryFacts(
            total_bytes=info.total_bytes,
            available_bytes=info.available_bytes,
            total=_gib(info.total_bytes),
            available=_gib(info.available_bytes),
        )
    except ValueError:
        notes.append("`free -b` printed nothing usable: memory unknown")
        return None


def _cpu_facts(system: dict[str, str]) -> CpuFacts:
    """The CPU's model (from /proc/cpuinfo) and logical core count (nproc)."""
    nproc = system.get("nproc", "")
    return CpuFacts(model=system.get("cpu_model", "").strip() or None, cores=int(nproc) if nproc.isdigit() else None)


def _python_version(system: dict[str, str], notes: list[str]) -> str | None:
    """python3's version from `python3 --version`; None (and a note) when there is no python3."""
    python_version = first_version(system.get("python", "")) if system.get("python", "").startswith("Python") else None
    if python_version is None:
        notes.append("no python3 on PATH")
    return python_version


def _gpu_list(query: str, notes: list[str]) -> list[GpuFacts]:
    """The GPUs from nvidia-smi's --query-gpu rows; [] (and a note) when it listed none."""
    try:
        return [
            GpuFacts(
                index=r.index,
                model=r.name,
                uuid=r.uuid,
                memory_total_bytes=r.memory_total_mib * MIB,
                memory_used_bytes=None if r.memory_used_mib is None else r.memory_used_mib * MIB,
                memory_total=_gib(r.memory_total_mib * MIB),
                memory_used=None if r.memory_used_mib is None else _gib(r.memory_used_mib * MIB),
                driver_version=r.driver_version,
                pcie_gen=r.pcie_gen,
            )
            for r in parse_gpu_query(query)
        ]
    except ValueError:
        notes.append(f"nvidia-smi did not list GPUs: {query[:200]!r} (driver not loaded?)")
        return []


@dataclass(frozen=True)
class _GpuReading:
    """What the GPU probe's nvidia-smi sections say: the GPUs, CUDA version, compute apps and link matrix."""

    access: GpuAccess
    gpus: list[GpuFacts] = field(default_factory=list)
    cuda: str | None = None
    apps: list[ComputeApp] = field(default_factory=list)
    topology: GpuTopology | None = None


def _without_nvidia_smi(gpu: dict[str, str], notes: list[str]) -> _GpuReading:
    """No nvidia-smi on PATH: the driver's signs the probe found instead, said in a note."""
    driver = gpu.get("driver", "").strip()
    access = GpuAccess(
        nvidia_smi=None,
        off_path=next(iter(gpu.get("off_path", "").split()), None),
        driver_version=first_version(driver) if "NVRM" in driver else None,
        device_files=gpu.get("devices", "").split(),
    )
    if access.driver_present:
        notes.append(
            "no nvidia-smi on PATH, but an NVIDIA driver is there"
            + (f" (kernel module {access.driver_version})" if access.driver_version else "")
            + (f"; nvidia-smi is at {access.off_path}" if access.off_path else "")
            + ": GPUs unknown (gpus=[])"
        )
    else:
        notes.append("no nvidia-smi on PATH and no NVIDIA driver: no NVIDIA GPU on this host (gpus=[])")
    return _GpuReading(access=access)


def _gpu_facts(stdout: str, notes: list[str]) -> _GpuReading:
    """Parse the GPU probe's output; what is missing or unreadable becomes a note."""
    gpu = sections(stdout)
    if "missing" in gpu:
        return _without_nvidia_smi(gpu, notes)
    gpus = _gpu_list(gpu.get("query", ""), notes)
    access = GpuAccess(
        nvidia_smi=gpu.get("path", "").strip() or "nvidia-smi",
        listed_none=None if gpus else one_line(gpu.get("query", ""))[:200] or "nothing",
    )
    cuda = parse_cuda_version(gpu.get("summary", ""))
    apps: list[ComputeApp] = []
    try:
        apps = parse_compute_apps(gpu.get("apps", ""))
    except ValueError:
        notes.append("nvidia-smi --query-compute-apps printed nothing usable")
    topology = None
    if gpus:
        try:
            topology = parse_topology(gpu.get("topo", ""))
        except ValueError:
            notes.append("`nvidia-smi topo -m` printed no GPU matrix: interconnect unknown")
    return _GpuReading(access=access, gpus=gpus, cuda=cuda, apps=apps, topology=topology)


def _package_versions(
    python_version: str | None, versions_run: Future[CommandResult], notes: list[str]
) -> dict[str, str | None]:
    """The sglang and huggingface_hub versions python3 reports (only asked when there is a python3)."""
    versions: dict[str, str | None] = {"sglang": None, "huggingface_hub": None}
    if python_version is not None:
        done = versions_run.result()
        try:
            versions = json.loads(done.stdout) if done.ok else versions
        except ValueError:
            notes.append("could not read package versions from python3")
    if versions.get("sglang") is None:
        notes.append("SGLang is not installed for python3")
    return versions


def _hub_reach(python_version: str | None, hub_run: Future[CommandResult], notes: list[str]) -> HubReach | None:
    """Whether the host reaches its Hub (asked only when there is a python3); None when it could not be asked."""
    if python_version is None:
        return None
    done = hub_run.result()
    try:
        return HubReach.model_validate_json(done.stdout) if done.ok else None
    except ValueError:
        notes.append(f"could not check the host's route to the Hub: {one_line(done.stdout + done.stderr)[-200:]}")
        return None


def _serving_process(proc: HostProcess, tree: set[int], apps: list[ComputeApp], gpu_uuids: set[str]) -> ServingProcess:
    """One SGLang server from its argv and the GPU memory its process tree holds."""
    held = [a for a in apps if a.pid in tree]
    mib = sum(a.used_memory_mib or 0 for a in held)
    port = _flag(proc.argv, "--port")
    tp = _flag(proc.argv, "--tp-size", "--tp")
    return ServingProcess(
        pid=proc.pid,
        argv=redact_argv(proc.argv),
        port=int(port) if port and port.isdigit() else 30000,
        model_path=_flag(proc.argv, "--model-path", "--model"),
        draft_model_path=_flag(proc.argv, "--speculative-draft-model-path"),
        speculative_algorithm=_flag(proc.argv, "--speculative-algorithm"),
        tp_size=int(tp) if tp and tp.isdigit() else None,
        gpu_memory_bytes=mib * MIB,
        gpu_memory=_gib(mib * MIB),
        gpus_used=len({a.gpu_uuid for a in held} & gpu_uuids) or len({a.gpu_uuid for a in held}),
    )


def _serving_processes(
    processes: list[HostProcess], apps: list[ComputeApp], gpus: list[GpuFacts]
) -> tuple[list[ServingProcess], set[int]]:
    """The host's SGLang servers, and the pids of them and their children (whose GPU memory they account for)."""
    gpu_uuids = {g.uuid for g in gpus}
    serving: list[ServingProcess] = []
    claimed: set[int] = set()
    for proc in processes:
        if not is_sglang_server(proc.argv):
            continue
        tree = _descendants(proc.pid, processes)
        claimed |= tree
        serving.append(_serving_process(proc, tree, apps, gpu_uuids))
    return serving, claimed


def _other_gpu_processes(apps: list[ComputeApp], claimed: set[int]) -> list[GpuProcess]:
    """The processes holding GPU memory that no SGLang server of the host accounts for, one per pid."""
    others: dict[int, list[ComputeApp]] = {}
    for app in apps:
        if app.pid not in claimed:
            others.setdefault(app.pid, []).append(app)
    return [
        GpuProcess(
            pid=pid,
            process_name=held[0].process_name,
            gpu_memory_bytes=sum(a.used_memory_mib or 0 for a in held) * MIB,
            gpus_used=len(held),
        )
        for pid, held in sorted(others.items())
    ]


def gather_host_facts(host: Host) -> HostFacts:
    """Read the host with its own tools and put what they say together; what cannot be read is a note."""
    notes: list[str] = []
    probes = _run_probes(host)
    system = {k: v.strip() for k, v in sections(probes.system.result().stdout).items()}
    os_fields = parse_os_release(system.get("os_release", ""))
    memory = _memory_facts(system, notes)
    cpu = _cpu_facts(system)
    python_version = _python_version(system, notes)
    gpu = _gpu_facts(probes.gpu.result().stdout, notes)
    versions = _package_versions(python_version, probes.versions, notes)
    hub = _hub_reach(python_version, probes.hub, notes)
    if hub is not None and not hub.reached:
        notes.append(f"the host cannot reach the Hub at {hub.endpoint}: {hub.detail}")
    clis = [
        cli.model_copy(update={"path": system.get(cli.name) or None})
        for cli in (probes.hf.result(), probes.legacy.result())
    ]
    processes = probes.processes.result()
    serving, claimed = _serving_processes(processes, gpu.apps, gpu.gpus)
    other_gpu = _other_gpu_processes(gpu.apps, claimed)
    return HostFacts(
        host=host.spec,
        hostname=system.get("hostname") or None,
        os=pretty_name(os_fields),
        kernel=system.get("kernel") or None,
        gpus=gpu.gpus,
        gpu_count=len(gpu.gpus),
        gpu_model=gpu.gpus[0].model if gpu.gpus else None,
        gpu_memory_total_bytes=sum(g.memory_total_bytes for g in gpu.gpus),
        driver_version=gpu.gpus[0].driver_version if gpu.gpus else None,
        cuda_version=gpu.cuda,
        interconnect=gpu.topology,
        gpu_access=gpu.access,
        cpu=cpu,
        memory=memory,
        python_version=python_version,
        sglang_version=versions.get("sglang"),
        speculative=_support(versions.get("sglang")),
        huggingface_hub_version=versions.get("huggingface_hub"),
        clis=clis,
        hub=hub,
        serving=serving,
        other_gpu_processes=other_gpu,
        mounts=probes.mounts.result(),
        notes=notes,
    )


def _support(version: str | None) -> SpeculativeSupport | None:
    if not version:
        return None
    try:
        return speculative_support(version)
    except ValueError:  # not a release number (a source build's odd version): nothing known
        return None


def host_facts_view(facts: HostFacts) -> dict[str, Any]:
    """The facts in the words a planner uses: GPUs one line per kind, links as their summary, sizes in human form
    (exact bytes, UUIDs, paths of CLIs and the link matrix stay in the transcript)."""
    # The host's spec is what the caller named; gpu_count is the GPU line's.
    shown = facts.model_dump(
        mode="json",
        exclude={
            "gpus",
            "interconnect",
            "gpu_model",
            "gpu_memory_total_bytes",
            "memory",
            "mounts",
            "clis",
            "host",
            "gpu_count",
        },
    )
    kinds: dict[tuple[str, str], list[GpuFacts]] = {}
    for gpu in facts.gpus:
        kinds.setdefault((gpu.model, gpu.memory_total), []).append(gpu)
    shown["gpus"] = [
        f"{len(gpus)} x {model} ({memory}; used: {', '.join(sorted({g.memory_used or '?' for g in gpus}))})"
        for (model, memory), gpus in kinds.items()
    ]
    if facts.interconnect is not None:
        shown["interconnect"] = facts.interconnect.summary
    if facts.memory is not None:
        shown["memory"] = f"{facts.memory.total}, {facts.memory.available} available"
    shown["mounts"] = [f"{m.mount_point} ({m.fstype}): {m.free} free of {m.size}" for m in facts.mounts]
    shown["clis"] = [{"name": c.name, "works": c.works, "version": c.version, "detail": c.detail} for c in facts.clis]
    speculative = shown.get("speculative")
    if speculative is not None:  # None: no SGLang on the host, nothing it allows
        speculative.pop("dflash_since", None)  # history; what this version allows is what a plan needs
        speculative.pop("dflash_architectures", None)  # read_drafter_config checks a drafter against them
        if speculative.get("behaves_as") == facts.sglang_version:
            speculative.pop("behaves_as", None)
    # Said when something is wrong only: a host that has both says nothing more (the view stays short).
    access = shown.pop("gpu_access", None)
    if access is not None and not facts.gpus:
        shown["gpu_access"] = {k: v for k, v in access.items() if v}
    hub = shown.pop("hub", None)
    if hub is not None and not hub["reached"]:
        shown["hub"] = f"cannot reach {hub['endpoint']}: {hub['detail']}"
    if facts.group is None:
        shown.pop("group", None)
    else:
        group = facts.group
        shown["group"] = {
            "nodes": len(group.nodes),
            "gpus": group.gpu_count,
            **({"problems": group.problems} if group.problems else {}),
            "shared_root": group.shared_root,
        }
    return shown


@tool("host_facts", mutates=False, view=host_facts_view)
def host_facts(ctx: ToolContext, args: HostFactsArgs) -> HostFacts:
    """The host: GPUs and their links, CPU, memory, OS, Python, SGLang and what it allows for speculative decoding,
    huggingface_hub and which Hugging Face CLIs work, servers and other GPU processes running, mounts with free bytes.
    """
    if not ctx.peers:
        return gather_host_facts(ctx.host)
    from .cluster.facts import cluster_facts  # here: the cluster's checks gather each node's facts with this module
    from .cluster.reach import dist_init_reachable
    from .sglang.multinode import dist_init_address

    found = cluster_facts(ctx.nodes)
    head = found.nodes[0].facts
    # Every node must reach rank 0's rendezvous: checked from each node (rank 0 listening on a free port), not
    # assumed; the launch later picks its own free port at the same address.
    address, _, port = dist_init_address(ctx).rpartition(":")
    reach = dist_init_reachable(ctx.nodes, address, int(port))
    problems = [*found.problems, *([reach.summary] if not reach.all_reached else [])]
    group = GroupFacts(
        nodes=[n.name for n in found.nodes],
        hostnames=[n.facts.hostname for n in found.nodes],
        gpu_count=sum(n.facts.gpu_count for n in found.nodes),
        ok=found.ok and reach.all_reached,
        problems=problems,
        shared_root=found.shared_root,
        dist_init_reach=reach.summary,
        summary=found.summary,
    )
    ctx.group_shared_root = found.shared_root  # start_download then fetches once there, not once per node
    return head.model_copy(update={"group": group})
