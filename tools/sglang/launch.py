"""The launch_server tool: check, start detached, wait for ready, and say why when it does not come up."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
from pydantic import BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..errors import HostUnavailable
from ..hosts import ConnectionDropped, HostError, PortNotListening
from ..inputs import HostPath
from ..registry import tool
from .capabilities import SglangCapabilities, read_capabilities
from .command import launch_argv
from .config import ServerConfig
from .errors import LaunchFailed
from .handle import STOP_GRACE_S, RunningServer, server_view, write_record
from .multinode import MultiNodeLaunch, dist_init_address, nodes_needed, start_across_nodes, stop_ranks
from .preflight import check_launch
from .readiness import Outcome, Wait, wait_for_start
from .replicas import launch_replicas
from .server_http import server_info

USUAL_START_S = 1800.0  # past this a start-up is slow: waited on while it shows progress, and said
# SGLang's start-up notes a planner should see: defaults it picked, settings it overrode.
_WARNING = re.compile(
    r"(?i)(defaulting to|is reset to|overriding|is deprecated|falling back|is disabled (when|because)|not supported)"
)


class LaunchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    config: ServerConfig
    ready_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=14400,
        description="The most loading, CUDA-graph capture and warm-up may take while the log shows progress "
        "(default: the run's --launch-wait)",
    )
    stall_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        description="A start-up whose log shows nothing new for this long is stuck: stopped, long before the timeout "
        "(default: the run's --stall-wait, 600 s)",
    )
    log_dir: HostPath = Field(default="~/.specops/logs", description="Where the server's log goes on the host")
    python: HostPath = Field(default="python3", description="The host interpreter that has SGLang")
    keep_on_timeout: bool = Field(
        default=False, description="Leave a server that is still loading at the timeout running (else it is stopped)"
    )


@tool("launch_server", mutates=True, view=server_view)
def launch_server(ctx: ToolContext, args: LaunchArgs) -> RunningServer:
    """Launch SGLang detached with this configuration and return once it is ready, with its id (s1, ...).

    Refused before anything starts when the host's SGLang would refuse it (see host_facts' `speculative`). A
    failed launch answers launch_failed with its cause (out_of_memory, port_in_use, crash, ...), the log lines
    that show it and a remedy; nothing is left running.
    """
    config = args.config
    caps = read_capabilities(ctx.host, python=args.python)
    check_launch(config, caps)
    if config.replicas > 1:
        return ctx.handles.add_server(launch_replicas(ctx, args, launch_one))
    nodes = nodes_needed(ctx, config)  # more GPUs than a node has, on a host group: over that many nodes
    if nodes > 1:
        return _launch_across_nodes(ctx, args, nodes)
    return ctx.handles.add_server(launch_one(ctx, args, caps))


def launch_one(
    ctx: ToolContext, args: LaunchArgs, caps: SglangCapabilities, extra_flags: Sequence[str] = ()
) -> RunningServer:
    """One server on ctx's host, waited for until ready (not yet given an id). `extra_flags` follow the config's
    (a replica's --base-gpu-id)."""
    config = args.config
    log_dir = ctx.writable(args.log_dir)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    log_path = posixpath.join(log_dir, f"sglang-{config.port}-{stamp}.log")
    argv = launch_argv(config, python=args.python, flags=caps.flags) + list(extra_flags)
    try:
        proc = ctx.host.start_detached(argv, log_path=log_path)
    except ConnectionDropped as exc:
        # Never started twice: a second server on the same GPUs is not harmless.
        raise HostUnavailable(
            f"the connection to {ctx.host.spec} dropped while starting the server; it may or may not be running",
            remedy="reconnect and check with server_status (or nvidia-smi) before launching again",
            details={"log_path": log_path, "may_have_run": exc.may_have_run},
        ) from exc
    launched_at = ctx.host.start_time(proc)  # its start-up is timed on the host's clock from here
    write_record(ctx, proc)
    wait, outcome = wait_for_start(
        ctx, proc, config.port, args.ready_timeout_s, args.stall_timeout_s, launched_at=launched_at
    )
    if not outcome.ready:
        stopped = False
        still_loading = outcome.diagnosis is None and not outcome.stalled
        if not outcome.exited and not (still_loading and args.keep_on_timeout):
            ctx.host.stop(proc, grace_s=STOP_GRACE_S)
            stopped = True
        raise _launch_failed(args, outcome, wait, proc.pid, log_path, stopped)
    try:
        info = server_info(ctx.host, config.port)
    except (httpx.HTTPError, PortNotListening, HostError) as exc:
        ctx.host.stop(proc, grace_s=STOP_GRACE_S)
        raise LaunchFailed(
            f"the server on port {config.port} said ready but its server info (/server_info) could not be read: {exc}",
            remedy="read the log tail; relaunch once, it may have died right after warm-up",
            details={"cause": "crash", "log_path": log_path, "log_tail": ctx.host.tail(log_path, 100)},
        ) from exc
    return RunningServer(
        host=ctx.host.spec,
        pid=proc.pid,
        pgid=proc.pgid,
        started_at=proc.started_at,
        argv=proc.argv,
        log_path=log_path,
        port=config.port,
        base_url=f"http://127.0.0.1:{config.port}",
        config=config,
        info=info,
        ready_after_s=outcome.took_s,
        warnings=_slow_start(wait, outcome) + _startup_warnings(ctx, log_path),
    )


def _launch_across_nodes(ctx: ToolContext, args: LaunchArgs, nodes: int) -> RunningServer:
    """The server over the run's first `nodes` nodes (multinode.py); ready when rank 0 is."""
    contexts = ctx.nodes[:nodes]
    launch = MultiNodeLaunch(
        config=args.config,
        dist_init_addr=dist_init_address(ctx),
        ready_timeout_s=args.ready_timeout_s,
        stall_timeout_s=args.stall_timeout_s,
        log_dir=args.log_dir,
        python=args.python,
    )
    ranks, wait, outcome = start_across_nodes(contexts, launch)
    head = ranks[0]
    try:
        info = server_info(ctx.host, args.config.port)
    except (httpx.HTTPError, PortNotListening, HostError) as exc:
        stop_ranks(contexts, ranks)
        raise LaunchFailed(
            f"rank 0 said ready on port {args.config.port} but its server info could not be read: {exc}",
            remedy="read rank 0's log tail; relaunch once, it may have died right after warm-up",
            details={"cause": "crash", "log_path": head.log_path, "log_tail": ctx.host.tail(head.log_path, 100)},
        ) from exc
    return ctx.handles.add_server(
        RunningServer(
            host=ctx.host.spec,
            pid=head.pid,
            pgid=head.pgid,
            started_at=head.started_at,
            argv=head.argv,
            log_path=head.log_path,
            port=args.config.port,
            base_url=f"http://127.0.0.1:{args.config.port}",
            config=args.config,
            info=info,
            ready_after_s=outcome.took_s,
            warnings=_slow_start(wait, outcome) + _startup_warnings(ctx, head.log_path),
            ranks=ranks,
        )
    )


def _slow_start(wait: Wait, outcome: Outcome) -> list[str]:
    took = outcome.took_s
    if took <= USUAL_START_S:
        return []
    return [
        f"start-up took {took:.0f} s, past the usual {USUAL_START_S:.0f} s: waited on while its log showed progress "
        f"(up to {wait.limit_s:.0f} s, --launch-wait)"
    ]


def _startup_warnings(ctx: ToolContext, log_path: str) -> list[str]:
    text = ctx.host.tail(log_path, 2000)
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if _WARNING.search(line)))[:20]


def _launch_failed(
    args: LaunchArgs, outcome: Outcome, wait: Wait, pid: int, log_path: str, stopped: bool
) -> LaunchFailed:
    tail = "\n".join(outcome.log_tail.splitlines()[-60:])
    common = {
        "log_path": log_path,
        "pid": pid,
        "elapsed_s": outcome.took_s,
        "stopped": stopped,
        "log_tail": tail,
        "config": args.config.model_dump(mode="json"),
    }
    port, last, then = args.config.port, outcome.last_line[-200:], "stopped" if stopped else "still running"
    if outcome.stalled:
        return LaunchFailed(
            f"the server on port {port} was stuck while starting: nothing new in its log for "
            f"{outcome.silent_s:.0f} s "
            f"(last line: {last!r}); {then}",
            remedy="a silent start-up is a hang (NCCL, a filesystem), not a slow load: read the log tail; relaunch "
            "once, and if it stalls again stop with the evidence",
            details={"cause": "stalled", "lines": [last] if last else [], "silent_s": outcome.silent_s, **common},
        )
    if outcome.diagnosis is None:
        return LaunchFailed(
            f"the server on port {port} was still starting after {wait.limit_s:.0f} s, its log still moving "
            f"(last line: {last!r}); {then}",
            remedy=f"it was slow, not stuck: run again with a longer --launch-wait (now {wait.limit_s:.0f} s), or "
            "relaunch with a larger ready_timeout_s",
            details={"cause": "timeout", "lines": [last] if last else [], **common},
        )
    d = outcome.diagnosis
    how = "exited" if outcome.exited else "failed and was stopped"
    first = d.lines[-1] if d.lines else "no error line"
    return LaunchFailed(
        f"the SGLang server {how} before it was ready ({d.cause}): {first}",
        remedy=d.remedy,
        details={"cause": d.cause, "lines": d.lines, "memory": d.memory, **common},
    )
