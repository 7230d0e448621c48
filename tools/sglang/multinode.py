"""One SGLang server across several nodes, with SGLang's own flags (--nnodes, --node-rank, --dist-init-addr).

launch_server comes here when the run's host is a group and the configuration needs more GPUs than one node has
(tp x pp = 16 on nodes of 8: two nodes). Every node runs the same command with its own --node-rank; contexts[0]
is rank 0, whose address is the dist-init address. What SGLang 0.5.23 does (sglang/srt/entrypoints/engine.py,
http_server.py): torch.distributed's rendezvous on rank 0 waits for every rank (--dist-timeout); rank 0 alone
serves the HTTP API, the other nodes only a health server on their own --port once their schedulers are ready;
rank 0's shutdown stops every rank.

So the server is ready when rank 0 is. A launch that does not come up is explained rank by rank: a rank whose
process exited says why (its log, diagnosed as one server's is); a rank still running when rank 0 gave up on the
rendezvous never joined (its log's last line says where it got to). Every rank is stopped on failure, rank 0 first.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..context import ToolContext
from ..errors import HostUnavailable, InvalidToolInput
from ..hosts import ConnectionDropped, HostUnreachable
from ..hosts.ssh import SshHost
from ..probing import probe
from .capabilities import SglangCapabilities, read_capabilities
from .command import launch_argv
from .config import ServerConfig
from .diagnosis import diagnose
from .errors import LaunchFailed
from .handle import STOP_GRACE_S, RankProcess, write_record
from .node_fault import BOOT_ID_PATH
from .preflight import check_launch
from .readiness import Outcome, Wait, wait_for_start

_ADDRESS = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9.\-]{0,252}|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})")
# torch's TCPStore on rank 0, when the rendezvous times out: "... waiting for clients. 8/16 clients joined."
RANK_NOT_JOINED = "rank_not_joined"  # LaunchFailed's cause when a rank is alive but never reached the rendezvous
SAID_CHARS = 240  # a rank's last log line as quoted in an error
_CLIENTS_JOINED = re.compile(r"\d+/\d+ clients joined")
# A free TCP port on rank 0 for the rendezvous: bound and released at once (SGLang binds it again at start).
_FREE_PORT = "import socket; s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[1]); s.close()"
_GPU_COUNT = ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"]


def node_flags(nnodes: int, node_rank: int, dist_init_addr: str) -> list[str]:
    """The flags that place one node's process in a server over `nnodes` nodes."""
    return ["--nnodes", str(nnodes), "--node-rank", str(node_rank), "--dist-init-addr", dist_init_addr]


def gpus_per_node(ctx: ToolContext) -> int:
    """The GPUs rank 0's node has (nvidia-smi): every node of a group has as many (cluster_facts checks it)."""
    done = probe(ctx.host, _GPU_COUNT, timeout=60)
    return sum(1 for line in done.stdout.splitlines() if line.strip()) if done.ok else 0


def nodes_needed(ctx: ToolContext, config: ServerConfig) -> int:
    """How many of the run's nodes `config` spans: 1 when rank 0's GPUs hold it, else its GPUs / GPUs per node.
    InvalidToolInput when that does not come out even or the group has too few nodes."""
    if not ctx.peers:
        return 1
    per_node = gpus_per_node(ctx)
    if per_node == 0 or config.gpus <= per_node:
        return 1
    nodes, rest = divmod(config.gpus, per_node)
    if rest or nodes > len(ctx.nodes):
        raise InvalidToolInput(
            f"the server needs {config.gpus} GPUs (tp x pp); the run's {len(ctx.nodes)} nodes have {per_node} each",
            remedy=f"choose tp x pp as {per_node} times a number of nodes up to {len(ctx.nodes)}",
            details={"gpus": config.gpus, "gpus_per_node": per_node, "nodes": len(ctx.nodes)},
        )
    return nodes


def node_address(ctx: ToolContext) -> str:
    """The address the other nodes reach ctx's host by: the name or address SSH reaches it at (whether given as
    ssh://..., an inventory name or an ssh_config alias); 127.0.0.1 for a local or simulated host, whose nodes share
    this machine."""
    if isinstance(ctx.host, SshHost):
        return ctx.host.target.hostname
    return "127.0.0.1"


def dist_init_address(ctx: ToolContext) -> str:
    """HOST:PORT of rank 0 as the other nodes reach it: the address the run reaches it by (an SSH node's host
    name; 127.0.0.1 for a local or simulated one, whose nodes share this machine), and a port free there now."""
    spec = ctx.host.spec
    address = node_address(ctx)
    done = probe(ctx.host, ["python3", "-c", _FREE_PORT], timeout=60)
    if not done.ok or not done.stdout.strip().isdigit():
        raise HostUnavailable(
            f"could not find a free port on rank 0 ({spec}) for the rendezvous: {(done.stderr or done.stdout)[-200:]}",
            remedy="check that python3 runs on rank 0's node",
        )
    return f"{address}:{done.stdout.strip()}"


class MultiNodeLaunch(BaseModel):
    """How to start one server over the first `len(contexts)` nodes."""

    model_config = ConfigDict(extra="forbid")

    config: ServerConfig = Field(description="The whole server: tp/ep/pp over every node's GPUs together")
    dist_init_addr: str = Field(description="HOST:PORT of rank 0 as every node reaches it (--dist-init-addr)")
    ready_timeout_s: float | None = None
    stall_timeout_s: float | None = None  # None: the run's --stall-wait
    log_dir: str
    python: str = "python3"

    @field_validator("dist_init_addr")
    @classmethod
    def _address(cls, value: str) -> str:
        match = _ADDRESS.fullmatch(value)
        if match is None or not 0 < int(match["port"]) < 65536:
            raise ValueError(f"{value!r} is not HOST:PORT (e.g. 10.0.0.1:50000)")
        return value


class RankState(BaseModel):
    """How one rank stood when a multi-node launch did not come up."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_rank: int
    host: str
    state: str = Field(description="'exited', 'never joined' or 'running'")
    said: str = Field(description="Its diagnosed error line, or its log's last line")
    log_path: str


def start_across_nodes(
    contexts: Sequence[ToolContext], launch: MultiNodeLaunch
) -> tuple[list[RankProcess], Wait, Outcome]:
    """Start every rank (checked against each node's SGLang first) and wait for rank 0. On a failure to come up,
    every rank is stopped and LaunchFailed names the rank at fault."""
    capabilities = [read_capabilities(ctx.host, python=launch.python) for ctx in contexts]
    _same_release(contexts, capabilities)
    for caps in capabilities:
        check_launch(launch.config, caps)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    ranks: list[RankProcess] = []
    try:
        for rank, (ctx, caps) in enumerate(zip(contexts, capabilities, strict=True)):
            ranks.append(_start_rank(ctx, caps, launch, rank, len(contexts), stamp))
    except BaseException:
        stop_ranks(contexts, ranks)
        raise
    launched_at = contexts[0].host.start_time(ranks[0].process)  # rank 0's start-up is timed from here
    try:
        wait, outcome = wait_for_start(
            contexts[0],
            ranks[0].process,
            launch.config.port,
            launch.ready_timeout_s,
            launch.stall_timeout_s,
            launched_at=launched_at,
        )
    except BaseException:  # the host dropped or the run was interrupted mid-wait: no rank left behind
        with contextlib.suppress(Exception):  # a dead connection must not hide why the wait ended
            stop_ranks(contexts, ranks)
        raise
    if not outcome.ready:
        states = [_rank_state(ctx, rank) for ctx, rank in zip(contexts, ranks, strict=True)]
        stop_ranks(contexts, ranks)
        raise _not_up(launch, outcome, wait, states)
    return ranks, wait, outcome


def stop_ranks(
    contexts: Sequence[ToolContext], ranks: Sequence[RankProcess], *, grace_s: float = STOP_GRACE_S
) -> dict[int, str]:
    """Stop every rank still running, rank 0 first (its shutdown ends the others in SGLang). Returns the ranks on
    nodes that did not answer, by node rank, in words (a node that went down took its rank with it, or holds it
    still: said, not raised)."""
    by_host = {ctx.host.spec: ctx for ctx in contexts}
    unreached = {}
    for rank in ranks:
        ctx = by_host.get(rank.host)
        try:
            if ctx is not None and ctx.host.is_running(rank.process):
                ctx.host.stop(rank.process, grace_s=grace_s)
        except (ConnectionDropped, HostUnreachable) as exc:
            unreached[rank.node_rank] = (
                f"rank {rank.node_rank} on {rank.host} (pid {rank.pid}): its node did not answer ({exc})"
            )
    return unreached


def _same_release(contexts: Sequence[ToolContext], capabilities: list[SglangCapabilities]) -> None:
    versions = [caps.version for caps in capabilities]
    if len(set(versions)) > 1:
        said = ", ".join(
            f"rank {r} ({ctx.host.spec}): {v}" for r, (ctx, v) in enumerate(zip(contexts, versions, strict=True))
        )
        raise InvalidToolInput(
            f"the nodes run different SGLang releases ({said}): one server needs the same release on every node",
            remedy="install rank 0's SGLang release on every node (pip install sglang==VERSION), then launch again",
            details={"versions": versions},
        )


def _start_rank(
    ctx: ToolContext,
    caps: SglangCapabilities,
    launch: MultiNodeLaunch,
    rank: int,
    nnodes: int,
    stamp: str,
) -> RankProcess:
    log_path = posixpath.join(ctx.writable(launch.log_dir), f"sglang-{launch.config.port}-rank{rank}-{stamp}.log")
    argv = launch_argv(launch.config, python=launch.python, flags=caps.flags)
    argv += node_flags(nnodes, rank, launch.dist_init_addr)
    try:
        proc = ctx.host.start_detached(argv, log_path=log_path)
    except ConnectionDropped as exc:
        raise HostUnavailable(
            f"the connection to {ctx.host.spec} dropped while starting rank {rank}; it may or may not be running",
            remedy="reconnect and check every node with nvidia-smi before launching again",
            details={"log_path": log_path, "node_rank": rank, "may_have_run": exc.may_have_run},
        ) from exc
    write_record(ctx, proc)
    return RankProcess(
        node_rank=rank,
        host=ctx.host.spec,
        pid=proc.pid,
        pgid=proc.pgid,
        log_path=log_path,
        argv=proc.argv,
        started_at=proc.started_at,
        boot_id=_boot_id(ctx),
        started_on_host=proc.started_on_host,
    )


def _boot_id(ctx: ToolContext) -> str | None:
    """The node's boot id now (node_fault.py tells a reboot by it); None where the host does not show one."""
    done = ctx.host.run(["cat", BOOT_ID_PATH], timeout=30, idempotent=True)
    return done.stdout.strip() or None if done.ok else None


def _rank_state(ctx: ToolContext, rank: RankProcess) -> RankState:
    tail = ctx.host.tail(rank.log_path, 200)
    if not ctx.host.is_running(rank.process):
        diagnosis = diagnose(tail)
        said = diagnosis.lines[-1] if diagnosis.lines else "no error line"
        return RankState(node_rank=rank.node_rank, host=rank.host, state="exited", said=said, log_path=rank.log_path)
    last = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
    if len(last) > SAID_CHARS:
        last = last[:SAID_CHARS] + "…"  # SGLang's server_args line alone runs to 20k characters
    return RankState(node_rank=rank.node_rank, host=rank.host, state="running", said=last, log_path=rank.log_path)


def _not_up(launch: MultiNodeLaunch, outcome: Outcome, wait: Wait, states: list[RankState]) -> LaunchFailed:
    """Why the server over several nodes did not come up, naming the rank at fault when the logs show it."""
    joined = _CLIENTS_JOINED.search(outcome.log_tail)
    others = states[1:]
    exited = [s for s in others if s.state == "exited"]
    # Rank 0 timed out on the rendezvous, or stalled waiting for it: a rank still running never joined.
    waiting = joined is not None or outcome.stalled
    never = [s.model_copy(update={"state": "never joined"}) for s in others if s.state == "running"] if waiting else []
    if exited:
        at_fault, cause = exited, "rank_failed"
        what = "; ".join(f"rank {s.node_rank} ({s.host}) exited: {s.said}" for s in exited)
        remedy = "read that rank's log (log_paths): fix what it names on that node, then launch again"
    elif never:
        at_fault, cause = never, RANK_NOT_JOINED
        what = "; ".join(f"rank {s.node_rank} ({s.host}) never joined: its log stops at {s.said!r}" for s in never)
        what += f" (rank 0: {joined.group(0)})" if joined else " (rank 0 waited for it in silence)"
        remedy = (
            f"that node's process is alive but never reached rank 0's rendezvous at {launch.dist_init_addr} (a hang "
            "in NCCL or InfiniBand set-up, a firewall on that port, a wrong address): check the node, then launch "
            "again; if it hangs again, stop with its log as the evidence"
        )
    else:
        head = diagnose(outcome.log_tail) if outcome.exited or outcome.diagnosis else None
        at_fault = states[:1]
        cause = outcome.diagnosis.cause if outcome.diagnosis else "stalled" if outcome.stalled else "timeout"
        what = f"rank 0 ({states[0].host}): {head.lines[-1] if head and head.lines else outcome.last_line[-200:]}"
        remedy = head.remedy if head else "read rank 0's log tail; relaunch once, and if it fails again stop"
    states = [next((s for s in never if s.node_rank == state.node_rank), state) for state in states]
    return LaunchFailed(
        f"the server over {len(states)} nodes did not come up: {what}; every rank was stopped",
        remedy=remedy,
        details={
            "cause": cause,
            "ranks": [s.model_dump() for s in states],
            "at_fault": [s.node_rank for s in at_fault],
            "lines": [s.said for s in at_fault],
            "log_path": states[0].log_path,
            "log_paths": {str(s.node_rank): s.log_path for s in states},
            "elapsed_s": outcome.took_s,
            "stopped": True,
            "log_tail": "\n".join(outcome.log_tail.splitlines()[-40:]),
            "config": launch.config.model_dump(mode="json"),
            "dist_init_addr": launch.dist_init_addr,
        },
    )
