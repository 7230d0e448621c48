"""A cluster node's faults that strike mid-job, acted out by that node's SGLang process when rank 0 says "now".

A node that carries one (`node_dies`, `node_reboots`, `network_partition`, `gpu_lost`; fault_names.NODE_FAULTS)
says so when it joins rank 0's rendezvous, and rank 0 tells it to strike once its engine runs the fault's
`at_running` requests (multinode.RankZeroStore.load_changed). Each strikes once per world (hardware.mark_fired):
a relaunch after it meets the node as the fault left it.

What a real cluster shows, and so what the node shows here:
- node_dies / node_reboots: power lost. The rank has no last words (its log just ends); the machine stops answering
  (hardware.power_off: the sshd session wrapper drops every connection, SimHost refuses commands) for good or until
  it has rebooted with a new boot id. Rank 0's NCCL sees the socket close: ncclRemoteError naming the node.
- network_partition: the InfiniBand link fails. Both sides' NCCL report the IB completion error naming the other
  (multinode.ib_completion_line) and their watchdogs take them down; both machines stay up.
- gpu_lost: Xid 79. The kernel logs NVRM's lines, the GPU is gone for nvidia-smi and for any later launch until a
  reboot, and the rank on it dies with a CUDA error in SGLang's words for a scheduler exception.
"""

from __future__ import annotations

import contextlib
import os
import signal

from ..fault_names import NODE_FAULTS, FaultName
from ..faults import GpuLost, NodeReboots
from ..host.gpu.devices import host_gpus
from ..host.process_view import world_processes
from ..host.ssh_gateway import kill_sshd
from ..world import hardware
from ..world.layout import WorldLayout
from ..world.state import WorldState
from .errors import SGLANG_SRC, python_traceback
from .logs import ServerLog
from .multinode import NodePlacement, ib_completion_line, remote_exit_lines

SSH_DIR = "ssh"  # the world's sshd files, under its .sim directory (world.py: SimWorld.start_ssh)
SIGQUIT_LINE = "Received sigquit from a child process. It usually means the child failed."


def pending(world: WorldState, layout: WorldLayout) -> tuple[str, int] | None:
    """The node fault this node carries and has not struck yet: (its name, the load it strikes at)."""
    for name in NODE_FAULTS:
        fault = world.fault(name)
        if fault is not None and not hardware.fired(layout, name.value):
            return name.value, int(fault.at_running)
    return None


def strike(
    name: str,
    *,
    world: WorldState,
    layout: WorldLayout,
    log: ServerLog,
    placement: NodePlacement,
    rank_zero: str,
    pid: int,
) -> None:
    """Act out the fault `name` on this node (the caller then dies as the fault leaves it: at once, SIGKILL)."""
    hardware.mark_fired(layout, name)
    fault = world.fault(FaultName(name))
    if name == FaultName.NODE_DIES:
        lose_power(layout)
    elif name == FaultName.NODE_REBOOTS and isinstance(fault, NodeReboots):
        lose_power(layout, back_after_s=fault.down_s)
    elif name == FaultName.NETWORK_PARTITION:
        own = placement.ranks.start
        local = rank_zero.split("<")[0]  # every node of a simulated cluster is on this machine's loopback
        line = ib_completion_line(rank_zero, local, 0, range(placement.ranks_per_node))
        log.raw(remote_exit_lines(own, 0, range(placement.ranks_per_node), rank_zero, log.stamp(), last_error=line))
        log.server(SIGQUIT_LINE)
    elif name == FaultName.GPU_LOST and isinstance(fault, GpuLost):
        bus = host_gpus(world.profile, [])[fault.gpu].bus_id.lower()[
            4:
        ]  # nvidia-smi's 00000000:3B:00.0 -> 0000:3b:00.0
        hardware.kernel_message(
            layout, f"NVRM: Xid (PCI:{bus.rsplit('.', 1)[0]}): 79, pid={pid}, name=python3, GPU has fallen off the bus."
        )
        hardware.kernel_message(layout, f"NVRM: GPU {bus}: GPU has fallen off the bus.")
        hardware.lose_gpu(layout, fault.gpu)
        trace = python_traceback(
            [
                (
                    f"{SGLANG_SRC}/srt/managers/scheduler.py",
                    3093,
                    "run_scheduler_process",
                    "scheduler.event_loop_overlap()",
                ),
                (
                    f"{SGLANG_SRC}/srt/managers/scheduler.py",
                    1036,
                    "event_loop_overlap",
                    "batch_result = self.run_batch(batch)",
                ),
            ],
            "RuntimeError: CUDA error: unspecified launch failure\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
            "be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n",
        )
        log.scheduler(f"Scheduler hit an exception: {trace.rstrip()}")
        log.server(SIGQUIT_LINE)


def lose_power(layout: WorldLayout, *, back_after_s: float | None = None) -> None:
    """The node's power goes: its sshd and every connection it serves first (clients see them drop, new ones are
    refused), then every process of the node's world but this one, which its caller kills last (SIGKILL: nothing
    gets to say a word)."""
    hardware.power_off(layout, back_after_s=back_after_s)
    kill_sshd(layout.sim_dir / SSH_DIR, layout.root)
    for pid in sorted(int(p) for p in world_processes(str(layout.root))):
        if pid != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
