"""stop_server and restart_server: end a server this run started, and wait until its port and GPUs are free.

Stopping is TERM to the whole process group (SGLang's scheduler and detokenizer
processes too), KILL after a grace period. "Stopped" means more than the
processes gone: the port no longer answers and nvidia-smi no longer lists any
of its processes, so the next launch finds the memory free.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..context import ToolContext
from ..errors import InvalidToolInput, ToolError
from ..hosts import DetachedProcess, Host, PortNotListening
from ..registry import tool
from .capabilities import read_capabilities
from .config import ServerConfig
from .errors import ServerNotOurs, StopIncomplete
from .handle import RunningServer, forget_record, server_view, started_by_us
from .launch import LaunchArgs, launch_server
from .multinode import stop_ranks
from .preflight import check_launch
from .replicas import stop_deployment

RELEASE_POLL_S = 0.2


class StopArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str | None = Field(default=None, max_length=16, description="The id launch_server returned, e.g. 's1'")
    pid: int | None = Field(
        default=None, ge=2, description="Stop this process group leader instead (needs allow_foreign)"
    )
    allow_foreign: bool = Field(default=False, description="Allow stopping a server this run did not start")
    port: int | None = Field(default=None, ge=1, le=65535, description="With pid: the port to wait on")
    grace_s: float = Field(default=30.0, gt=0, le=600, description="Seconds between TERM and KILL")
    release_timeout_s: float = Field(default=60.0, gt=0, le=600, description="How long to wait for port and GPU memory")


class StopResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str | None = Field(None, description="The id of the server stopped; None when stopped by pid")
    host: str
    pid: int
    was_running: bool
    port: int | None
    port_free: bool
    gpu_mib_released: int = Field(description="GPU memory (MiB, all GPUs) its processes held before the stop")
    gpu_released: bool
    seconds: float
    unreached_ranks: list[str] = Field(
        default_factory=list,
        description="A server over several nodes: ranks on nodes that did not answer, so not stopped (check them "
        "when the node is back)",
    )


def _group_members(host: Host, pgid: int) -> set[int]:
    table = host.run(["ps", "-A", "-o", "pid=,pgid="], timeout=30, idempotent=True).check().stdout
    return {int(f[0]) for f in (line.split() for line in table.splitlines()) if len(f) == 2 and f[1] == str(pgid)}


def gpu_mib_by_pid(host: Host) -> dict[int, int]:
    """MiB each compute process holds over all GPUs, from nvidia-smi; empty when nvidia-smi is absent."""
    done = host.run(
        ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
        timeout=30,
        idempotent=True,
    )
    held: dict[int, int] = {}
    if not done.ok:
        return held
    for line in done.stdout.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
            held[int(fields[0])] = held.get(int(fields[0]), 0) + int(fields[1])
    return held


def _port_answers(host: Host, port: int) -> bool:
    try:
        with host.forward(port):
            return True
    except PortNotListening:
        return False


def _target(ctx: ToolContext, args: StopArgs) -> tuple[DetachedProcess, int | None]:
    if args.server is not None:
        server = ctx.handles.server(args.server)
        if server.host != ctx.host.spec:
            raise InvalidToolInput(
                f"the server {server.id} is on {server.host}, not {ctx.host.spec}",
                remedy="stop it through a context for its own host",
                details={"server_host": server.host},
            )
        proc, port = server.process, server.port
        if not args.allow_foreign and not started_by_us(ctx, proc):
            raise ServerNotOurs(
                f"no launch record on {ctx.host.spec} for pid {proc.pid} started {proc.started_at:%Y-%m-%d %H:%M:%S}: "
                "this run did not start it (or its process id was reused)",
                remedy="leave it, or pass allow_foreign=True if stopping it is intended",
                details={"pid": proc.pid, "pgid": proc.pgid},
            )
        return proc, port
    if args.pid is None:
        raise InvalidToolInput(
            "nothing to stop: give the server's id, or a pid with allow_foreign",
            remedy="pass server=<the id launch_server returned, e.g. 's1'>",
        )
    if not args.allow_foreign:
        raise ServerNotOurs(
            f"pid {args.pid} was not named by a handle this run holds",
            remedy="pass the server's id (e.g. 's1'), or allow_foreign=True to stop a server this run did not start",
            details={"pid": args.pid},
        )
    members = _group_members(ctx.host, args.pid)
    if args.pid not in members:
        raise InvalidToolInput(
            f"pid {args.pid} on {ctx.host.spec} does not lead its own process group (or is gone): signalling its group "
            "could hit unrelated processes",
            remedy="give the pid of the server's group leader (the process started with setsid/nohup)",
            details={"pid": args.pid},
        )
    proc = DetachedProcess(
        pid=args.pid, pgid=args.pid, log_path="", argv=[], started_at=datetime.now(UTC), host=ctx.host.spec
    )
    return proc, args.port


def _stop_other_ranks(ctx: ToolContext, server: RunningServer, grace_s: float) -> list[str]:
    """A server over several nodes: rank 0's shutdown ends the other ranks (SGLang's ShutdownReq); any still
    running is stopped on its node, and every node's launch record goes. Returns the ranks on nodes that did not
    answer (their records stay: the node may come back with them)."""
    others = server.ranks[1:]
    unreached = stop_ranks(ctx.nodes, others, grace_s=grace_s)
    by_host = {node.host.spec: node for node in ctx.nodes}
    for rank in others:
        if rank.host in by_host and rank.node_rank not in unreached:
            forget_record(by_host[rank.host], rank.pgid)
    return list(unreached.values())


def _stop_replicated(ctx: ToolContext, server: RunningServer, args: StopArgs) -> StopResult:
    """Replicas behind a gateway (replicas.py): the gateway, then every replica on its node, each waited for until
    its port and GPU memory are free."""
    start = time.monotonic()
    by_spec = {node.host.spec: node.host for node in ctx.nodes}
    hosts = {r.pid: by_spec.get(r.host, ctx.host) for r in server.replicas}  # each replica's node
    members = {r.pid: _group_members(hosts[r.pid], r.pgid) | {r.pid} for r in server.replicas}
    held = {r.pid: gpu_mib_by_pid(hosts[r.pid]) for r in server.replicas}
    released_mib = sum(mib for r in server.replicas for pid, mib in held[r.pid].items() if pid in members[r.pid])
    was_running = any(hosts[r.pid].is_running(r.process) for r in server.replicas)
    stop_deployment(ctx, server, grace_s=args.grace_s)
    deadline = time.monotonic() + args.release_timeout_s
    while True:
        port_free = not _port_answers(ctx.host, server.port) and not any(
            _port_answers(hosts[r.pid], r.port) for r in server.replicas
        )
        gpu_free = not any(set(gpu_mib_by_pid(hosts[r.pid])) & members[r.pid] for r in server.replicas)
        if (port_free and gpu_free) or time.monotonic() > deadline:
            break
        time.sleep(RELEASE_POLL_S)
    ctx.handles.mark_stopped(server.id)
    if not (port_free and gpu_free):
        raise StopIncomplete(
            f"the gateway and its replicas are stopped but {'a port still answers' if not port_free else ''}"
            f"{' and ' if not port_free and not gpu_free else ''}"
            f"{'nvidia-smi still lists GPU memory of a replica' if not gpu_free else ''}"
            f" after {args.release_timeout_s:.0f} s",
            remedy="check nvidia-smi and the ports on each node before launching again",
            details={"pid": server.pid, "port": server.port, "port_free": port_free, "gpu_released": gpu_free},
        )
    return StopResult(
        server=server.id,
        host=ctx.host.spec,
        pid=server.pid,
        was_running=was_running,
        port=server.port,
        port_free=port_free,
        gpu_mib_released=released_mib,
        gpu_released=gpu_free,
        seconds=round(time.monotonic() - start, 2),
    )


def stop_view(result: StopResult) -> dict[str, object]:
    """What a planner checks after a stop: one word when all went as meant; else the port, the GPUs and
    `was_running` (only when it had already died)."""
    unreached = {"unreached_ranks": result.unreached_ranks} if result.unreached_ranks else {}
    if result.port_free and result.gpu_released and result.was_running:
        return {"stopped": result.server, **unreached}
    return {
        "server": result.server,
        "port_free": result.port_free,
        "gpu_released": result.gpu_released,
        "was_running": False if not result.was_running else None,
        **unreached,
    }


@tool("stop_server", mutates=True, view=stop_view)
def stop_server(ctx: ToolContext, args: StopArgs) -> StopResult:
    """Stop a server this run started (TERM, then KILL) and wait until its port and GPU memory are free.

    Another's server only with allow_foreign.
    """
    if args.server is not None and ctx.handles.server(args.server).replicas:
        return _stop_replicated(ctx, ctx.handles.server(args.server), args)
    proc, port = _target(ctx, args)
    start = time.monotonic()
    host = ctx.host
    members = _group_members(host, proc.pgid) | {proc.pid}
    held_before = gpu_mib_by_pid(host)
    released_mib = sum(mib for pid, mib in held_before.items() if pid in members)
    was_running = host.is_running(proc)
    host.stop(proc, grace_s=args.grace_s)
    unreached = _stop_other_ranks(ctx, ctx.handles.server(args.server), args.grace_s) if args.server else []
    deadline = time.monotonic() + args.release_timeout_s
    while True:
        port_free = port is None or not _port_answers(host, port)
        gpu_free = not (set(gpu_mib_by_pid(host)) & members)
        if (port_free and gpu_free) or time.monotonic() > deadline:
            break
        time.sleep(RELEASE_POLL_S)
    if args.server is not None:  # its processes are gone, whatever still holds the port or the memory
        ctx.handles.mark_stopped(args.server)
    if not (port_free and gpu_free):
        raise StopIncomplete(
            f"the server's processes are gone but {'port ' + str(port) + ' still answers' if not port_free else ''}"
            f"{' and ' if not port_free and not gpu_free else ''}{'nvidia-smi still lists its GPU memory' if not gpu_free else ''}"
            f" after {args.release_timeout_s:.0f} s",
            remedy="check nvidia-smi and the port for what holds them before launching again",
            details={"pid": proc.pid, "port": port, "port_free": port_free, "gpu_released": gpu_free},
        )
    forget_record(ctx, proc.pgid)
    return StopResult(
        server=args.server,
        host=host.spec,
        pid=proc.pid,
        was_running=was_running,
        port=port,
        port_free=port_free,
        gpu_mib_released=released_mib,
        gpu_released=gpu_free,
        seconds=round(time.monotonic() - start, 2),
        unreached_ranks=unreached,
    )


class RestartArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(max_length=16, description="The id launch_server returned, e.g. 's1'")
    changes: dict[str, object] = Field(
        default_factory=dict, description="ServerConfig fields to change, e.g. {'cuda_graphs': false}"
    )
    ready_timeout_s: float | None = Field(default=None, gt=0, le=14400, description="As launch_server's")
    log_dir: str = LaunchArgs.model_fields["log_dir"].default
    python: str = LaunchArgs.model_fields["python"].default


class RestartResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stopped: StopResult
    server: RunningServer = Field(description="The new server, under a new id")


def restart_view(result: RestartResult) -> dict[str, object]:
    return {"stopped": stop_view(result.stopped), "server": server_view(result.server)}


@tool("restart_server", mutates=True, view=restart_view)
def restart_server(ctx: ToolContext, args: RestartArgs) -> RestartResult:
    """Stop a server this run started and launch it again with some configuration fields changed, under a new id.

    The change is checked against SGLang's rules first: a refused one leaves the server running. When the
    relaunch fails, the error says the old server was stopped (details.stopped_server).
    """
    old = ctx.handles.server(args.server)
    try:
        config = ServerConfig.model_validate({**old.config.model_dump(), **args.changes})
    except ValidationError as exc:
        raise InvalidToolInput(
            f"the changed configuration is not valid: {exc.errors()[0]['msg']}",
            remedy="change only ServerConfig fields, to values they accept",
            details={"errors": exc.errors(include_url=False, include_context=False)},
        ) from None
    launch = LaunchArgs(config=config, ready_timeout_s=args.ready_timeout_s, log_dir=args.log_dir, python=args.python)
    check_launch(config, read_capabilities(ctx.host, python=launch.python))
    stopped = stop_server(ctx, StopArgs(server=old.id))
    try:
        server = launch_server(ctx, launch)
    except ToolError as exc:
        # The old server is gone whatever the relaunch did: say so, or the caller would still count it running.
        exc.what = f"{old.id} was stopped, then its relaunch failed: {exc.what}"
        exc.details = {**exc.details, "stopped_server": old.id, "stopped": stopped.model_dump(mode="json")}
        raise
    return RestartResult(stopped=stopped, server=server)
