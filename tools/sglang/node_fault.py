"""Which node a server over several nodes lost, and how: read from every rank's log and from the node itself.

A server over several nodes dies as one. When one node's process goes (the node lost power, its GPU fell off the
bus, its link failed), every other rank's NCCL call fails with ncclRemoteError ("remote process exited or there was
a network error"), torch's watchdog raises it, and SGLang's SIGQUIT handler takes that rank's server down. Rank 0's
log therefore says only that a peer went away, and which (NCCL's `Last error:` line names the peer's address; the
simulator adds its node_rank and ranks there, as the address alone would on a real cluster with an address book).
What happened to that peer is on its node:

    the node does not answer at all                 it went down (power, kernel panic) or is rebooting
    it answers with another boot id than at launch   it rebooted (the kernel's boot_id changes at every boot)
    its kernel log has Xid 79                        a GPU fell off the bus (NVRM: "GPU has fallen off the bus")
    its own rank reports a network error naming us   the link between the nodes failed (a partition), both are up
    its rank exited with an error of its own         that error (a CUDA error, out of memory, ...)
    its rank exited without a word                   killed from outside (the OOM killer: dmesg)

None of these is load: fewer running requests will not help. The finding names the node (its rank and host) so
the tool result, the failure table and the report say where to look.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..hosts import ConnectionDropped, HostError, HostUnreachable
from .diagnosis import PEER_LOST, diagnose
from .handle import RankProcess

NodeFaultKind = Literal["node_down", "node_rebooted", "gpu_lost", "network", "rank_exited", "rank_killed"]

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"  # a new random id at every boot (Linux)
LOG_TAIL_LINES = 200
KERNEL_LOG_LINES = 200
CHECK_TIMEOUT_S = 30
# The peer a failed NCCL call names, with the node the log gives it: NCCL's socket line ("Connection closed by remote
# peer ADDR<PORT>") or its InfiniBand completion error ("Got completion from peer ADDR<PORT> with status=12 ...").
_PEER_NODE = re.compile(
    r"(?:Connection closed by remote peer|Got completion from peer) (?P<peer>\S+).*?\(node_rank (?P<node>\d+)"
)
_NETWORK_ERROR = re.compile(r"NET/IB : Got completion from peer|NET/Socket|IBV_WC_RETRY_EXC_ERR|status=12 ")
_XID = re.compile(r"NVRM: Xid \((?P<bus>PCI:[0-9a-fA-F:.]+)\): (?P<code>\d+),[^\n]*")
# Xid codes that take a GPU out until the node is reset (NVIDIA's Xid catalogue): 79 fell off the bus, 74 NVLink,
# 48 double-bit ECC, 94/95 contained / uncontained ECC, 119/120 GSP.
_GPU_GONE = {"79": "fell off the bus", "74": "NVLink error", "48": "double-bit ECC error", "95": "uncontained ECC"}
_CUDA_ERROR = re.compile(r"CUDA error: [^\n]*|Unable to determine the device handle[^\n]*")


class NodeFault(BaseModel):
    """The node a server over several nodes lost, how, and the lines that show it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_rank: int
    host: str = Field(description="Spec of the node")
    kind: NodeFaultKind
    words: str = Field(description="What happened, in one sentence that names the node")
    remedy: str
    evidence: list[str] = Field(default_factory=list, description="Log and kernel lines that show it")
    log_path: str | None = Field(default=None, description="That node's rank log")


def peer_lost(log_text: str) -> bool:
    """Whether a rank's log ends with NCCL's remote error: a peer went away."""
    return re.search(PEER_LOST, log_text) is not None


def named_peer(log_text: str) -> int | None:
    """The node_rank of the peer a failed NCCL call names (the first), or None."""
    found = _PEER_NODE.search(log_text)
    return int(found.group("node")) if found else None


def find_node_fault(ctx: ToolContext, ranks: Sequence[RankProcess], rank0_log: str) -> NodeFault | None:
    """Which node the server over `ranks` lost, from rank 0's log (`rank0_log`) and each other node; None when the
    logs show no lost peer (a failure of rank 0 itself, or load)."""
    if len(ranks) < 2 or not peer_lost(rank0_log):
        return None
    by_spec = {node.host.spec: node for node in ctx.nodes}
    named = named_peer(rank0_log)
    order = sorted(ranks[1:], key=lambda r: r.node_rank != named)  # the named node first, then the others
    findings = [_look_at(by_spec.get(rank.host), rank, rank0_log, named) for rank in order]
    found = [f for f in findings if f is not None]
    return found[0] if found else None


def _look_at(node: ToolContext | None, rank: RankProcess, rank0_log: str, named: int | None) -> NodeFault | None:
    """What node `rank` shows; None when it shows nothing wrong (its rank went down with rank 0, not first)."""
    who = f"node {rank.node_rank} ({rank.host})"
    if node is None:
        return None

    def found(kind: NodeFaultKind, words: str, remedy: str, evidence: list[str]) -> NodeFault:
        return NodeFault(
            node_rank=rank.node_rank,
            host=rank.host,
            kind=kind,
            words=words,
            remedy=remedy,
            evidence=evidence,
            log_path=rank.log_path,
        )

    try:
        boot = node.host.run(["cat", BOOT_ID_PATH], timeout=CHECK_TIMEOUT_S, idempotent=True)
    except HostError as exc:
        return found(
            kind="node_down",
            words=f"{who} does not answer ({_no_answer(exc)}): it went down while the server ran "
            "(power, a kernel panic, or a reboot still under way)",
            remedy=f"bring {who} back (its console or BMC: power, kernel log), check its GPUs with nvidia-smi, then "
            "relaunch and measure again from this level",
            evidence=_peer_lines(rank0_log),
        )
    log = _quiet_tail(node, rank.log_path)
    kernel = _kernel_log(node)
    xid = _gpu_xid(kernel)
    if xid is not None:
        line, code = xid
        return found(
            kind="gpu_lost",
            words=f"a GPU of {who} {_GPU_GONE.get(code, f'failed (Xid {code})')} (Xid {code}) and its rank died "
            "with it",
            remedy=f"the GPU is gone until {who} is reset: reboot the node (or reset the GPU with nvidia-smi -r), "
            "check nvidia-smi lists every GPU, then relaunch; or launch on nodes whose GPUs all answer",
            evidence=[line, *_CUDA_ERROR.findall(log)[:1], *_peer_lines(rank0_log)[:1]],
        )
    if rank.boot_id and boot.ok and boot.stdout.strip() and boot.stdout.strip() != rank.boot_id:
        return found(
            kind="node_rebooted",
            words=f"{who} rebooted while the server ran (its boot id changed since the launch; its rank's process "
            "went with the reboot)",
            remedy=f"find why {who} rebooted (its kernel log from the last boot, the BMC's event log), then relaunch "
            "and measure again from this level",
            evidence=_peer_lines(rank0_log),
        )
    if _NETWORK_ERROR.search(log) and named_peer(log) == 0 and _NETWORK_ERROR.search(rank0_log):
        return found(
            kind="network",
            words=f"the link between node 0 and {who} failed: both sides report a network error naming the other, "
            "and both nodes are up",
            remedy=f"check the fabric between node 0 and {who} (ibstat and ibv_devinfo on both, the switch ports, "
            "NCCL_IB_HCA / NCCL_SOCKET_IFNAME), then relaunch and measure again from this level",
            evidence=[*_peer_lines(rank0_log)[:1], *_peer_lines(log)[:1]],
        )
    if node.host.is_running(rank.process) or (peer_lost(log) and named_peer(log) is not None):
        return None  # it went down because rank 0 did, or is still up: not the node at fault
    if named is not None and named != rank.node_rank:
        return None
    own = diagnose(log) if log.strip() else None
    if own is not None and own.lines and not peer_lost(log):
        return found(
            kind="rank_exited",
            words=f"the rank on {who} exited first: {own.lines[-1][:200]}",
            remedy=f"read that rank's log on {who}: {own.remedy}",
            evidence=own.lines[-2:],
        )
    return found(
        kind="rank_killed",
        words=f"the rank on {who} was killed without a word in its log (the OOM killer, or a kill from outside)",
        remedy=f"read {who}'s kernel log (dmesg) for the OOM killer and its host memory, then relaunch",
        evidence=_peer_lines(rank0_log),
    )


def _no_answer(exc: HostError) -> str:
    """How the node failed to answer, in a few words (the host layer's message is a paragraph)."""
    if isinstance(exc, ConnectionDropped):
        return "its connection dropped and could not be set up again"
    if isinstance(exc, HostUnreachable):
        return "no connection can be set up to it"
    return (str(exc).splitlines() or [type(exc).__name__])[0][:160]


def _peer_lines(log: str) -> list[str]:
    return [line.strip() for line in log.splitlines() if _PEER_NODE.search(line)][:2]


def _quiet_tail(node: ToolContext, path: str) -> str:
    try:
        return node.host.tail(path, LOG_TAIL_LINES)
    except HostError:
        return ""


def _kernel_log(node: ToolContext) -> str:
    """The node's kernel log, where this user may read it (dmesg needs root on hosts that restrict it)."""
    line = f"dmesg 2>/dev/null | tail -n {KERNEL_LOG_LINES}"
    try:
        done = node.host.run(["sh", "-c", line], timeout=CHECK_TIMEOUT_S, idempotent=True)
    except HostError:
        return ""
    return done.stdout if done.ok else ""


def _gpu_xid(kernel_log: str) -> tuple[str, str] | None:
    """The last Xid that takes a GPU out (its line and code), or None."""
    found = [m for m in _XID.finditer(kernel_log) if m.group("code") in _GPU_GONE]
    return (found[-1].group(0).strip(), found[-1].group("code")) if found else None
