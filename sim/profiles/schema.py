"""The host profile: everything the simulated world knows about one GPU host.

A profile is data (YAML beside this file). It says what the host has (GPUs,
disks, software), how fast it downloads, and how fast SGLang serves the target
model on it for each parallel configuration and speculative algorithm. Every
figure carries its provenance: `measured` (taken from a real run, see
shared/calibration/) or `modelled` (a plausible figure this project derived).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Provenance = Literal["measured", "modelled"]
PromptKind = Literal["math", "code", "chat"]
PROMPT_KINDS: tuple[PromptKind, ...] = ("math", "code", "chat")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GpuSpec(_Strict):
    model: str = Field(description="Product name as nvidia-smi prints it")
    count: int = Field(ge=1)
    memory_mib: int = Field(description="FB memory total per GPU, as nvidia-smi reports it")
    reserved_mib: int = Field(default=616, description="FB memory the driver reserves")
    architecture: str
    interconnect: Literal["pcie", "nvlink"]
    nvlink_bonded_links: int = Field(default=0, description="# in NV# of `nvidia-smi topo -m`")
    pcie_gen: int = 5
    pcie_width: int = 16
    numa_nodes: int = Field(default=2, ge=1, description="GPUs split evenly over NUMA nodes")
    power_limit_w: float
    idle_power_w: float
    idle_temp_c: int = 34
    driver_version: str
    cuda_version: str
    vbios_version: str = "96.00.A5.00.1A"
    board_part_number: str = "N/A"


class CpuSpec(_Strict):
    model: str
    cores: int = Field(ge=1, description="Logical CPUs, as nproc prints")
    sockets: int = 2


class MountSpec(_Strict):
    mount_point: str = Field(description="Where the host mounts it, e.g. / or /data")
    device: str = Field(description="Source column of df, e.g. /dev/nvme0n1p2")
    fstype: str = "ext4"
    size_gib: float = Field(gt=0, description="Size as `df -h` prints it (G = GiB)")
    used_gib: float = Field(ge=0, description="Used at the start, everything included")

    @model_validator(mode="after")
    def _used_fits(self) -> MountSpec:
        if self.used_gib > self.size_gib:
            raise ValueError(f"mount {self.mount_point}: used {self.used_gib} GiB > size {self.size_gib} GiB")
        return self


class SoftwareSpec(_Strict):
    os: str = "Ubuntu 24.04.3 LTS"
    kernel: str = "6.8.0-60-generic"
    python: str = Field(description="What `python3 --version` prints after 'Python '")
    torch: str
    sglang: str | None = Field(description="Installed SGLang version; None: not installed")
    huggingface_hub: str = Field(
        description="Decides which CLIs exist: 0.x `huggingface-cli` downloads with a warning, "
        "1.x it prints that it no longer works, 2.x it is gone"
    )

    @property
    def hub_major(self) -> int:
        return int(self.huggingface_hub.split(".")[0])

    @property
    def clis(self) -> list[str]:
        """The Hugging Face command-line tools this host has on its PATH."""
        clis = ["hf"] if self.hub_major >= 1 or _version_tuple(self.huggingface_hub) >= (0, 34) else []
        if self.hub_major < 2:
            clis.append("huggingface-cli")
        return clis


class NetworkSpec(_Strict):
    download_mb_s: float = Field(gt=0, description="Sustained download rate from the Hub, MB/s (10^6 bytes)")


class HostModel(_Strict):
    """A model already on the host's disk when the world starts (the target, old checkpoints)."""

    repo_id: str
    path: str = Field(description="Where it lies: relative to the home directory, or an absolute host path")
    fixture: str = Field(description="Hub fixture repo whose files are laid down here")
    layout: Literal["local_dir", "hf_cache"] = "local_dir"


class ConcurrencyCurve(_Strict):
    """Aggregate output tok/s by client concurrency. None: that point is unknown."""

    concurrency: list[int]
    tok_s: list[float | None]

    @model_validator(mode="after")
    def _aligned(self) -> ConcurrencyCurve:
        if len(self.concurrency) != len(self.tok_s):
            raise ValueError("concurrency and tok_s must have the same length")
        if sorted(self.concurrency) != self.concurrency or len(set(self.concurrency)) != len(self.concurrency):
            raise ValueError("concurrency levels must be strictly increasing")
        if not any(v is not None for v in self.tok_s):
            raise ValueError("a curve needs at least one known point")
        return self

    def known_points(self) -> list[tuple[int, float]]:
        return [(c, v) for c, v in zip(self.concurrency, self.tok_s, strict=False) if v is not None]


class ParallelConfig(_Strict):
    """One autoregressive serving configuration and its measured or modelled speed."""

    name: str
    tp: int = 1
    ep: int = 1
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    cuda_graphs: bool = True
    nnodes: int = Field(
        default=1,
        ge=1,
        description="Nodes the layout spans (SGLang's --nnodes): its tp*pp GPUs split evenly over them. A curve of a "
        "layout over several nodes is stated as if its GPUs shared one NVLink domain: the profile's internode link "
        "adds its own time to every step (sim/serving/internode.py)",
    )
    throughput: ConcurrencyCurve
    provenance: Provenance
    note: str = ""

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @model_validator(mode="after")
    def _splits_over_nodes(self) -> ParallelConfig:
        if self.gpus % self.nnodes:
            raise ValueError(f"config {self.name}: {self.gpus} GPUs do not split evenly over {self.nnodes} nodes")
        return self


class SpeculativeConfig(_Strict):
    """Speculative decoding on top of one parallel configuration, stated at one setting of its knobs.

    `throughput` and `accept_length` hold at (num_steps, topk, num_draft_tokens); a launch at other settings is
    served through sim/serving/performance.py's settings model (a modelled mapping, see there).
    """

    name: str
    algorithm: str = Field(description="SGLang's --speculative-algorithm value, upper case")
    base: str = Field(description="Name of the ParallelConfig it runs on")
    cuda_graphs: bool = True
    throughput: ConcurrencyCurve = Field(
        description="Aggregate output tok/s at the mean acceptance length, with max-running-requests "
        "raised to the concurrency (the SGLang default of 48 under DFlash caps it below that)"
    )
    accept_length: dict[PromptKind, float] = Field(
        description="Mean tokens per verify step (bonus token included) by prompt kind"
    )
    accept_length_thinking_off: dict[PromptKind, float] | None = Field(
        default=None,
        description="The same with the target's thinking switched off in its chat template (a prompt ending in an "
        "empty think block); None: thinking makes no difference to this drafter",
    )
    accept_spread: float = Field(default=0.35, ge=0, description="Std-dev of per-request acceptance length")
    drafter: str | None = Field(
        default=None,
        description="Hub repo id of the draft model the figures are for (None: none, NGRAM, or the target's own "
        "MTP layers under NEXTN)",
    )
    num_steps: int | None = Field(
        default=None,
        ge=1,
        description="--speculative-num-steps the figures hold at; None: what SGLang chooses when it is not given "
        "(the release's automatic choice by target architecture; NGRAM: draft tokens // topk; DFLASH: 1)",
    )
    topk: int | None = Field(
        default=None,
        ge=1,
        description="--speculative-eagle-topk (NGRAM: --speculative-ngram-max-bfs-breadth) the figures hold at; "
        "None: SGLang's choice",
    )
    num_draft_tokens: int | None = Field(
        default=None,
        ge=1,
        description="--speculative-num-draft-tokens the figures hold at (DFLASH: the block size); None: SGLang's "
        "choice (DFLASH: its default block size, 16)",
    )
    draft_cost: float | None = Field(
        default=None,
        ge=0,
        description="What one draft pass costs, as a fraction of the target's decode step at the same batch; "
        "None: the algorithm's default in sim/serving/performance.py (DRAFT_COST)",
    )
    provenance: Provenance
    note: str = ""

    @field_validator("accept_length", "accept_length_thinking_off")
    @classmethod
    def _all_kinds(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is None:
            return v
        missing = set(PROMPT_KINDS) - set(v)
        if missing:
            raise ValueError(f"accept_length lacks {sorted(missing)}")
        if any(x < 1 for x in v.values()):
            raise ValueError("an acceptance length is at least 1 (the bonus token)")
        return v

    @property
    def mean_accept_length(self) -> float:
        """The figure `throughput` was stated at: the mean over the prompt kinds."""
        return sum(self.accept_length.values()) / len(self.accept_length)


class TargetModel(_Strict):
    """The model the host serves, and what loading it costs."""

    repo_id: str
    weights_gib: float = Field(description="Weights as loaded on the GPUs, all shards together")
    load_seconds: float = Field(description="Modelled time from launch to ready, at time scale 1")
    prefill_tok_s: float = Field(description="Prefill rate of one request, tokens/s")
    kv_mib_per_token: float = Field(description="KV cache per token, summed over GPUs")
    cuda_graph_mib: int = Field(default=2048, description="Per-GPU memory CUDA graph capture takes")
    activation_mib: int = Field(default=3072, description="Per-GPU workspace outside the static pool")
    architecture: str | None = Field(
        default=None,
        description="hf_config.architectures[0] of the checkpoint, as SGLang reads it: decides its automatic "
        "speculative settings (and, where no repo id tells, which target a launch loaded); None: unknown, "
        "so every speculative config of this target states its settings",
    )
    hidden_size: int | None = Field(
        default=None,
        gt=0,
        description="hf_config.hidden_size: the activation per token a layer's collective carries between nodes "
        "(None: the internode link is not modelled for this target)",
    )
    num_layers: int | None = Field(default=None, gt=0, description="hf_config.num_hidden_layers")
    verify_knee_tokens: float = Field(
        default=256,
        gt=0,
        description="Tokens one forward pass of the target takes (all requests of the batch together) before it "
        "turns from memory-bound to compute-bound: the roofline knee the speculative settings model prices a "
        "verify pass of concurrency x draft tokens with (modelled)",
    )


class ServingSpec(_Strict):
    """How fast the host serves one target model: its autoregressive layouts and speculative configs."""

    target: TargetModel
    configs: list[ParallelConfig]
    speculative: list[SpeculativeConfig] = []

    @model_validator(mode="after")
    def _bases_exist(self) -> ServingSpec:
        names = {c.name for c in self.configs}
        if len(names) != len(self.configs):
            raise ValueError("parallel config names must be unique")
        for s in self.speculative:
            if s.base not in names:
                raise ValueError(f"speculative config {s.name}: unknown base {s.base!r}")
        if len({s.name for s in self.speculative}) != len(self.speculative):
            raise ValueError("speculative config names must be unique")
        if self.target.architecture is None:
            for s in self.speculative:
                if s.algorithm not in ("DFLASH", "NGRAM") and s.num_steps is None:
                    raise ValueError(
                        f"speculative config {s.name}: the target's architecture is not stated, so SGLang's "
                        "automatic settings are unknown: state num_steps, topk and num_draft_tokens"
                    )
        return self

    def config(self, name: str) -> ParallelConfig:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(name)


class InternodeLink(_Strict):
    """The fabric between this host and the other nodes of its cluster: what a layout spanning nodes pays per
    collective (sim/serving/internode.py)."""

    fabric: str = Field(description="e.g. 'InfiniBand NDR 400Gb/s, one NIC per GPU'")
    gb_s_per_gpu: float = Field(gt=0, description="Bandwidth each GPU has to the other nodes, GB/s (10^9 bytes)")
    latency_us: float = Field(ge=0, description="One small collective across the nodes, microseconds")


class SimSettings(_Strict):
    time_scale: float = Field(
        default=1.0,
        gt=0,
        description="Modelled seconds per wall-clock second: 10 runs the world ten times faster. "
        "Measured rates are then time_scale times the modelled ones.",
    )
    load_time_scale: float | None = Field(
        default=None,
        gt=0,
        description="Like time_scale, for model loading only (None: time_scale). Loading is waiting, not "
        "work, so a run can load far faster than it serves without the machine becoming the bottleneck.",
    )
    fast_time_scale: float = Field(
        default=8.0,
        gt=0,
        description="A quick run's time scale (`specops run` on a sim host without --time-scale)",
    )
    fast_load_time_scale: float = Field(default=400.0, gt=0, description="The load time scale of a quick run")
    byte_scale: int = Field(
        default=1024,
        ge=1,
        description="Modelled bytes per stored byte: a 8 GiB weight file is served and stored as "
        "8 MiB, while the Hub's listing and df report the modelled sizes.",
    )


class Profile(_Strict):
    name: str
    description: str
    provenance: str = Field(description="Where the figures come from")
    hostname: str
    kind: str = Field(default="bare metal", description="e.g. 'LXC container'")
    user: str = "root"
    gpus: GpuSpec
    cpu: CpuSpec
    memory_gib: float
    mounts: list[MountSpec]
    software: SoftwareSpec
    network: NetworkSpec
    models: list[HostModel] = []
    internode: InternodeLink | None = Field(
        default=None, description="The fabric to the other nodes of its cluster (None: a host on its own)"
    )
    serving: ServingSpec = Field(description="The primary target: the model the host is there to serve")
    additional_serving: list[ServingSpec] = Field(
        default=[],
        description="Other targets the host serves, each with its own layouts and speculative configs; a launch "
        "is served by the spec of the model it loads (sim/serving/launch.py)",
    )
    sim: SimSettings = SimSettings()

    @model_validator(mode="after")
    def _has_root(self) -> Profile:
        points = [m.mount_point for m in self.mounts]
        if "/" not in points:
            raise ValueError("a profile needs a / mount")
        if len(set(points)) != len(points):
            raise ValueError("mount points must be unique")
        repos = [s.target.repo_id for s in self.serving_specs]
        if len(set(repos)) != len(repos):
            raise ValueError("each target is served by one serving spec: repo ids must be unique")
        return self

    @property
    def serving_specs(self) -> tuple[ServingSpec, ...]:
        """Every target's serving spec, the primary first."""
        return (self.serving, *self.additional_serving)

    def serving_for(self, repo_id: str) -> ServingSpec | None:
        """The serving spec of the target with this Hub repo id (case-insensitive, as the Hub is); None: none."""
        wanted = repo_id.strip("/").lower()
        return next((s for s in self.serving_specs if s.target.repo_id.lower() == wanted), None)

    def mount(self, mount_point: str) -> MountSpec:
        for m in self.mounts:
            if m.mount_point == mount_point:
                return m
        raise KeyError(mount_point)


def _version_tuple(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


version_tuple = _version_tuple
