"""The names of the faults a scenario can inject (faults.py holds their typed records).

A module of its own, free of pydantic, so the sim host's executables can ask a
world for a fault by name without loading the records' schemas.
"""

from __future__ import annotations

from enum import StrEnum


class FaultName(StrEnum):
    FULL_DISK = "full_disk"
    BROKEN_CLI = "broken_cli"
    GATED_REPO = "gated_repo"
    MISSING_REPO = "missing_repo"
    DATASETS_MISSING = "datasets_missing"
    HUB_THROTTLE = "hub_throttle"
    SLOW_DOWNLOAD = "slow_download"
    DOWNLOAD_CUT = "download_cut"
    SERVER_CRASH_AT_START = "server_crash_at_start"
    SLOW_LOAD = "slow_load"
    LOAD_HANG = "load_hang"
    CRASH_UNDER_LOAD = "crash_under_load"
    CUDA_GRAPH_DRAFTER = "cuda_graph_drafter"
    PORT_IN_USE = "port_in_use"
    OUT_OF_MEMORY = "out_of_memory"
    SSH_DROP = "ssh_drop"
    OLD_SGLANG = "old_sglang"
    NO_SGLANG = "no_sglang"
    NVIDIA_SMI_OFF_PATH = "nvidia_smi_off_path"
    HUB_OFFLINE = "hub_offline"
    NODE_DIES = "node_dies"
    NODE_REBOOTS = "node_reboots"
    NETWORK_PARTITION = "network_partition"
    GPU_LOST = "gpu_lost"


# A cluster node's faults that strike mid-job, on the node they are given for (`NAME:node=I`), when rank 0 of a
# server over that node first runs `at_running` requests (serving/node_faults.py).
NODE_FAULTS = (FaultName.NODE_DIES, FaultName.NODE_REBOOTS, FaultName.NETWORK_PARTITION, FaultName.GPU_LOST)
