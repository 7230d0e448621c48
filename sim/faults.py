"""Named faults a scenario injects into a simulated world.

Each fault is a typed record; the part of the world it concerns reads it from
the world state (world.json) and misbehaves the way the real thing does.
Who reads which fault is named in each docstring.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from ..sglang_releases.facts import modelled_versions
from .fault_names import FaultName


class _Fault(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FullDisk(_Fault):
    """The mount holds more than the profile says, leaving `free_gib`. Read by the host tree builder."""

    name: Literal[FaultName.FULL_DISK] = FaultName.FULL_DISK
    mount_point: str = "/"
    free_gib: float = Field(default=3.0, ge=0)


class BrokenCli(_Fault):
    """`hf` prints its help text and exits 0 without downloading (the seed's CLI). Read by the sim `hf`."""

    name: Literal[FaultName.BROKEN_CLI] = FaultName.BROKEN_CLI


class GatedRepo(_Fault):
    """The repo needs a token: 401 without one, 403 with a token not granted access. Read by the Hub emulator."""

    name: Literal[FaultName.GATED_REPO] = FaultName.GATED_REPO
    repo_id: str


class MissingRepo(_Fault):
    """The repo does not exist on the Hub (404 RepoNotFound). Read by the Hub emulator."""

    name: Literal[FaultName.MISSING_REPO] = FaultName.MISSING_REPO
    repo_id: str


class DatasetsMissing(_Fault):
    """The Hub serves no dataset repo (404 RepoNotFound on the dataset routes; with `repo_id`, that one only), so
    the standard datasets cannot be fetched; model repos are served as usual. Read by the Hub emulator."""

    name: Literal[FaultName.DATASETS_MISSING] = FaultName.DATASETS_MISSING
    repo_id: str | None = Field(default=None, description="The one dataset repo missing; None: every dataset repo")

    def covers(self, repo_id: str) -> bool:
        return self.repo_id is None or self.repo_id == repo_id


class HubThrottle(_Fault):
    """The first `requests` Hub requests get 429 with Retry-After. Read by the Hub emulator."""

    name: Literal[FaultName.HUB_THROTTLE] = FaultName.HUB_THROTTLE
    requests: int = Field(default=3, ge=1)
    retry_after_s: float = Field(default=1.0, ge=0)


class SlowDownload(_Fault):
    """File transfers run at `mb_s` (modelled MB/s) instead of the profile's rate. Read by the Hub emulator."""

    name: Literal[FaultName.SLOW_DOWNLOAD] = FaultName.SLOW_DOWNLOAD
    mb_s: float = Field(default=5.0, gt=0)


class DownloadCut(_Fault):
    """The connection drops after `after_fraction` of a large file, `times` times. Read by the Hub emulator."""

    name: Literal[FaultName.DOWNLOAD_CUT] = FaultName.DOWNLOAD_CUT
    after_fraction: float = Field(default=0.5, gt=0, lt=1)
    times: int = Field(default=1, ge=1)


class ServerCrashAtStart(_Fault):
    """The server dies with a traceback `after_fraction` of the way through loading. Read by the serving simulator."""

    name: Literal[FaultName.SERVER_CRASH_AT_START] = FaultName.SERVER_CRASH_AT_START
    after_fraction: float = Field(default=0.6, gt=0, lt=1)
    times: int = Field(default=1, ge=1, description="Launches that crash before one succeeds")


class SlowLoad(_Fault):
    """The server loads `factor` times slower than the profile says (a network filesystem, a cold page cache),
    logging its progress all the way. Read by the serving simulator."""

    name: Literal[FaultName.SLOW_LOAD] = FaultName.SLOW_LOAD
    factor: float = Field(default=6.0, gt=1)


class LoadHang(_Fault):
    """The server hangs `at_fraction` of the way through loading: alive, its log silent from then on (as an NCCL
    hang at start-up is). Read by the serving simulator."""

    name: Literal[FaultName.LOAD_HANG] = FaultName.LOAD_HANG
    at_fraction: float = Field(default=0.3, gt=0, lt=1)


class CrashUnderLoad(_Fault):
    """The server dies (NCCL watchdog timeout) once `at_running` requests run at once. Read by the serving simulator."""

    name: Literal[FaultName.CRASH_UNDER_LOAD] = FaultName.CRASH_UNDER_LOAD
    at_running: int = Field(default=96, ge=1)
    speculative_only: bool = True
    times: int | None = Field(
        default=None, ge=1, description="Servers that crash before one survives the load (a transient crash); None: all"
    )


class CudaGraphDrafter(_Fault):
    """CUDA graphs fail with the drafter: capture crashes at start, or throughput collapses
    (acceptance 1.00, as the seed saw). Only with a speculative algorithm and CUDA graphs on.
    Read by the serving simulator."""

    name: Literal[FaultName.CUDA_GRAPH_DRAFTER] = FaultName.CUDA_GRAPH_DRAFTER
    mode: Literal["crash", "collapse"] = "crash"


class PortInUse(_Fault):
    """Another process (not the agent's) already listens on `port`. Read by the host tree builder
    (which registers the squatter) and the serving simulator."""

    name: Literal[FaultName.PORT_IN_USE] = FaultName.PORT_IN_USE
    port: int = 30000


class OutOfMemory(_Fault):
    """GPU memory is short at launch: a foreign process holds `foreign_mib_per_gpu` on every GPU
    (nvidia-smi shows it), and/or the static pool needs `--mem-fraction-static` of at least
    `min_mem_fraction_static`. Read by the host tree builder and the serving simulator."""

    name: Literal[FaultName.OUT_OF_MEMORY] = FaultName.OUT_OF_MEMORY
    foreign_mib_per_gpu: int = Field(default=0, ge=0)
    min_mem_fraction_static: float | None = Field(default=0.92, gt=0, le=1)


class SshDrop(_Fault):
    """The SSH connection to the host drops after `after_commands` commands, `times` times, when the
    host is reached over SSH (`specops sim up --ssh`). Read by the host's sshd session wrapper."""

    name: Literal[FaultName.SSH_DROP] = FaultName.SSH_DROP
    after_commands: int = Field(default=3, ge=0)
    times: int = Field(default=1, ge=1)


class OldSglang(_Fault):
    """The host has an older SGLang release than its profile (by default 0.5.10.post1, the last without
    DFLASH). Read by the host tree builder."""

    name: Literal[FaultName.OLD_SGLANG] = FaultName.OLD_SGLANG
    version: str = "0.5.10.post1"

    @field_validator("version")
    @classmethod
    def _modelled(cls, version: str) -> str:
        # The simulator behaves as a release it has the facts of (sglang_releases/data), never as a guess.
        if version not in modelled_versions():
            raise ValueError(
                f"SGLang {version} is not modelled; the simulated releases are {', '.join(modelled_versions())}"
            )
        return version


class NoSglang(_Fault):
    """SGLang is not installed for the host's python3 (no `sglang` package; `python3 -m sglang.launch_server`
    fails). Read by the host tree builder."""

    name: Literal[FaultName.NO_SGLANG] = FaultName.NO_SGLANG


class NvidiaSmiOffPath(_Fault):
    """The NVIDIA driver is loaded (/proc/driver/nvidia/version, /dev/nvidia*) but nvidia-smi is not on the PATH
    of the host's commands: it is in `at` (a container toolkit's /usr/local/nvidia/bin, WSL's /usr/lib/wsl/lib),
    or, with `at=` empty, nowhere (a container started without the driver's utilities). Read by the host tree
    builder, which also keeps this machine's own nvidia-smi off the host's PATH."""

    name: Literal[FaultName.NVIDIA_SMI_OFF_PATH] = FaultName.NVIDIA_SMI_OFF_PATH
    at: str = "/usr/local/nvidia/bin"

    @field_validator("at")
    @classmethod
    def _absolute(cls, at: str) -> str:
        if at and not at.startswith("/"):
            raise ValueError(f"{at!r} is not an absolute directory on the host (or empty: nvidia-smi nowhere)")
        return at.rstrip("/") or ("/" if at else "")


class HubOffline(_Fault):
    """The host reaches no Hub: its environment sends every connection out through a proxy that refuses them
    (http_proxy and https_proxy at a closed loopback port, no no_proxy), as on a host behind a firewall. The
    agent's own side still reaches the Hub. Read by the host tree builder (the host's environment)."""

    name: Literal[FaultName.HUB_OFFLINE] = FaultName.HUB_OFFLINE


class _NodeFault(_Fault):
    """A fault of one node of a cluster (`NAME:node=I`) that strikes mid-job: when rank 0 of a server spanning the
    node first runs `at_running` requests. Read by the serving simulator (serving/node_faults.py)."""

    at_running: int = Field(default=32, ge=1)


class NodeDies(_NodeFault):
    """The node loses power for good: its processes die without a word, its SSH connections drop and no new one is
    answered; the other nodes' ranks report NCCL's remote error naming it and die."""

    name: Literal[FaultName.NODE_DIES] = FaultName.NODE_DIES


class NodeReboots(_NodeFault):
    """As node_dies, but the node is back `down_s` of its seconds later: rebooted (a new boot id), no SGLang running,
    its files as they were."""

    name: Literal[FaultName.NODE_REBOOTS] = FaultName.NODE_REBOOTS
    down_s: float = Field(default=300.0, gt=0)


class NetworkPartition(_NodeFault):
    """The InfiniBand link between the node and the others fails: every rank on both sides reports NCCL's IB
    completion error (IBV_WC_RETRY_EXC_ERR) naming the other side and dies; both nodes stay up."""

    name: Literal[FaultName.NETWORK_PARTITION] = FaultName.NETWORK_PARTITION


class GpuLost(_NodeFault):
    """GPU `gpu` of the node falls off the bus (Xid 79): the kernel logs it, nvidia-smi cannot reach it, the rank on
    it dies with a CUDA error (and the others with NCCL's remote error); it stays lost until the node reboots."""

    name: Literal[FaultName.GPU_LOST] = FaultName.GPU_LOST
    gpu: int = Field(default=0, ge=0)


NodeFault = NodeDies | NodeReboots | NetworkPartition | GpuLost

Fault = Annotated[
    FullDisk
    | BrokenCli
    | GatedRepo
    | MissingRepo
    | DatasetsMissing
    | HubThrottle
    | SlowDownload
    | DownloadCut
    | ServerCrashAtStart
    | SlowLoad
    | LoadHang
    | CrashUnderLoad
    | CudaGraphDrafter
    | PortInUse
    | OutOfMemory
    | SshDrop
    | OldSglang
    | NoSglang
    | NvidiaSmiOffPath
    | HubOffline
    | NodeDies
    | NodeReboots
    | NetworkPartition
    | GpuLost,
    Field(discriminator="name"),
]

FaultList = TypeAdapter(list[Fault])

# Each fault's record type, by name: for listings and documentation.
FAULT_TYPES: dict[FaultName, type[_Fault]] = {t.model_fields["name"].default: t for t in get_args(get_args(Fault)[0])}


def parse_fault(spec: str) -> Fault:
    """Parse a command-line fault: `name` or `name:key=value,key=value`."""
    name, _, rest = spec.partition(":")
    params: dict[str, object] = {"name": name.strip()}
    for pair in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = pair.partition("=")
        if not eq:
            raise ValueError(f"fault {spec!r}: expected key=value, got {pair!r}")
        params[key.strip()] = value.strip()
    return TypeAdapter(Fault).validate_python(params)


def describe_fault_error(spec: str, error: ValueError) -> str:
    """Why parse_fault refused `spec`, as one line: an unknown name with the known ones, or each bad parameter."""
    if not isinstance(error, ValidationError):
        return " ".join(str(error).split())
    problems = error.errors(include_url=False)
    if any(p["type"] in ("union_tag_invalid", "union_tag_not_found") for p in problems):
        name = spec.partition(":")[0].strip()
        return f"no fault named {name!r}; known faults: {', '.join(n.value for n in FAULT_TYPES)}"
    said = "; ".join(
        f"{'.'.join(str(part) for part in p['loc'][1:]) or 'fault'}: {p['msg']} (got {p.get('input')!r})"
        if p["type"] != "extra_forbidden"
        else f"{'.'.join(str(part) for part in p['loc'][1:])}: no such parameter"
        for p in problems
    )
    return f"fault {spec!r}: {' '.join(said.split())}"


def find_fault(faults: list[Fault], name: FaultName) -> Fault | None:
    """The first fault of that name, if injected."""
    return next((f for f in faults if f.name == name), None)
