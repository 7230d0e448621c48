"""What on a host, as host_facts found it, stops a drafter from being deployed there, and what to do about it.

One wording for both who ask: `specops doctor` lists every problem, and the
playbook stops a run on the first, right after host_facts, before anything
changes on the host. In the order a person fixes them: a GPU (nvidia-smi,
which every GPU reading goes through), SGLang, then the Hub (only when the run
downloads). A release too old for the algorithm is the playbook's and the
doctor's own check: it needs the algorithm, which host_facts does not know.
"""

from __future__ import annotations

import posixpath
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from ..sglang_releases.facts import LATEST, first_release_with
from .facts import HostFacts

# A host spec `--host` takes, for the line that says where to run instead.
GPU_HOST_EXAMPLE = "--host ssh://user@gpu-box"


class HostProblemKind(StrEnum):
    NO_GPU = "no_gpu"
    NVIDIA_SMI_NOT_ON_PATH = "nvidia_smi_not_on_path"
    NO_SGLANG = "no_sglang"
    HUB_UNREACHABLE = "hub_unreachable"


class HostProblem(BaseModel):
    """One thing missing on the host: what it is, and what to do (a command where there is one)."""

    model_config = ConfigDict(frozen=True)

    kind: HostProblemKind
    what: str
    remedy: str
    elsewhere: bool = False  # the remedy is another host: nothing to fix on this one and run again

    @property
    def line(self) -> str:
        """What a stopped run says: the problem, what to do, and (when it is fixed on this host) to run again."""
        return f"{self.what}: {self.remedy}{'' if self.elsewhere else ', then run again'}"


def gpu_problem(facts: HostFacts) -> HostProblem | None:
    """No GPU nvidia-smi lists: no nvidia-smi and no driver, a driver whose nvidia-smi is off PATH, or an
    nvidia-smi that lists none."""
    if facts.gpus:
        return None
    access = facts.gpu_access
    if access is not None and access.nvidia_smi is None and access.driver_present:
        signs = [f"kernel module {access.driver_version}"] if access.driver_version else []
        files = access.device_files
        if files:
            signs.append(files[0] + (f" and {len(files) - 1} more device files" if len(files) > 1 else ""))
        if access.off_path:
            signs.append(f"nvidia-smi at {access.off_path}")
            where = posixpath.dirname(access.off_path)
            remedy = (
                f"add {where} to the PATH of the host's non-interactive shells (the ones specops runs), or link it: "
                f"ln -s {access.off_path} /usr/local/bin/nvidia-smi"
            )
        else:
            major = access.driver_version.split(".")[0] if access.driver_version else "DRIVER"
            remedy = (
                f"install the driver's utilities (e.g. apt install nvidia-utils-{major}), or in a container start it "
                "with NVIDIA_DRIVER_CAPABILITIES=compute,utility"
            )
        return HostProblem(
            kind=HostProblemKind.NVIDIA_SMI_NOT_ON_PATH,
            what=f"nvidia-smi is not on the PATH of {facts.host}, but an NVIDIA driver is there "
            f"({'; '.join(signs)}): specops reads the GPUs with nvidia-smi",
            remedy=remedy,
        )
    if access is None or access.nvidia_smi is not None:  # None: a record from before gpu_access was kept
        said = f" ({access.listed_none})" if access is not None else ""
        return HostProblem(
            kind=HostProblemKind.NO_GPU,
            what=f"no NVIDIA GPU on {facts.host}: nvidia-smi lists none{said}",
            remedy=f"check the driver is loaded (run nvidia-smi on the host) and run again, or run on another GPU "
            f"host, e.g. {GPU_HOST_EXAMPLE}",
            elsewhere=True,
        )
    return HostProblem(
        kind=HostProblemKind.NO_GPU,
        what=f"no NVIDIA GPU on {facts.host} (nvidia-smi not found, no NVIDIA driver loaded)",
        remedy=f"run on a GPU host instead, e.g. {GPU_HOST_EXAMPLE}",
        elsewhere=True,
    )


def sglang_problem(facts: HostFacts) -> HostProblem | None:
    """No SGLang for the host's python3 (the one every launch runs)."""
    if facts.sglang_version is not None:
        return None
    dflash = first_release_with("DFLASH")
    return HostProblem(
        kind=HostProblemKind.NO_SGLANG,
        what=f"SGLang is not installed for the python3 of {facts.host}",
        remedy=f"install it there (pip install 'sglang>={LATEST}', the newest release specops knows"
        + (f"; DFLASH needs {dflash} or newer" if dflash else "")
        + "), or put the python3 that has it first on PATH",
    )


def hub_problem(facts: HostFacts) -> HostProblem | None:
    """The host cannot open a connection to the Hub it would download from."""
    hub = facts.hub
    if hub is None or hub.reached:
        return None
    via = f" through the proxy {hub.via}" if hub.via else ""
    return HostProblem(
        kind=HostProblemKind.HUB_UNREACHABLE,
        what=f"{facts.host} cannot reach the Hugging Face Hub at {hub.endpoint}{via} ({hub.detail}), "
        "so it cannot download the drafter",
        remedy="give the host a route to the Hub (or set HF_ENDPOINT to a mirror it reaches, or https_proxy to a "
        "proxy that answers)",
    )


def host_problems(facts: HostFacts, *, downloads: bool = True) -> list[HostProblem]:
    """Every problem found, in the order they are fixed; the Hub only when something is to be downloaded."""
    found = [gpu_problem(facts), sglang_problem(facts), hub_problem(facts) if downloads else None]
    return [p for p in found if p is not None]
