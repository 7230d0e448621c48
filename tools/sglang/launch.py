"""The launch_server tool: check, start detached, wait for ready, and say why when it does not come up."""

from __future__ import annotations

import posixpath
import re
from datetime import UTC, datetime

import httpx
from pydantic import BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..errors import HostUnavailable
from ..hosts import ConnectionDropped, HostError, PortNotListening
from ..inputs import HostPath
from ..registry import tool
from .capabilities import read_capabilities
from .command import launch_argv
from .config import ServerConfig
from .errors import LaunchFailed
from .handle import RunningServer, server_view, write_record
from .preflight import check_launch
from .readiness import Outcome, wait_until_ready
from .server_http import server_info

DEFAULT_READY_TIMEOUT_S = 1800.0  # a 1T-parameter MoE loads in 5-10 minutes; CUDA graphs and warm-up add more
STOP_GRACE_S = 30.0
# SGLang's start-up notes a planner should see: defaults it picked, settings it overrode.
_WARNING = re.compile(r"(?i)(defaulting to|overriding|is deprecated|falling back|is disabled when|not supported)")


class LaunchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    config: ServerConfig
    ready_timeout_s: float = Field(
        default=DEFAULT_READY_TIMEOUT_S,
        gt=0,
        le=14400,
        description="How long loading, CUDA-graph capture and warm-up may take before the launch counts as failed",
    )
    log_dir: HostPath = Field(default="~/.specops/logs", description="Where the server's log goes on the host")
    python: HostPath = Field(default="python3", description="The host interpreter that has SGLang")
    keep_on_timeout: bool = Field(
        default=False, description="Leave a server that is still loading at the timeout running (else it is stopped)"
    )


@tool("launch_server", mutates=True, view=server_view)
def launch_server(ctx: ToolContext, args: LaunchArgs) -> RunningServer:
    """Launch SGLang detached with this configuration and return once it is ready, with its id (s1, ...).

    Refused before anything starts when the host's SGLang would refuse it (host_facts' `speculative` says what
    DFLASH allows). A failed launch answers launch_failed with its cause (out_of_memory, port_in_use, crash, ...),
    the log lines that show it and a remedy; nothing is left running.
    """
    config = args.config
    caps = read_capabilities(ctx.host, python=args.python)
    check_launch(config, caps)
    log_dir = ctx.writable(args.log_dir)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    log_path = posixpath.join(log_dir, f"sglang-{config.port}-{stamp}.log")
    argv = launch_argv(config, python=args.python, flags=caps.flags)
    try:
        proc = ctx.host.start_detached(argv, log_path=log_path)
    except ConnectionDropped as exc:
        # Never started twice: a second server on the same GPUs is not harmless.
        raise HostUnavailable(
            f"the connection to {ctx.host.spec} dropped while starting the server; it may or may not be running",
            remedy="reconnect and check with server_status (or nvidia-smi) before launching again",
            details={"log_path": log_path, "may_have_run": exc.may_have_run},
        ) from exc
    write_record(ctx, proc)
    outcome = wait_until_ready(ctx.host, proc, config.port, timeout_s=args.ready_timeout_s)
    if not outcome.ready:
        stopped = False
        if not outcome.exited and not (outcome.diagnosis is None and args.keep_on_timeout):
            ctx.host.stop(proc, grace_s=STOP_GRACE_S)
            stopped = True
        raise _launch_failed(ctx, args, outcome, proc.pid, log_path, stopped)
    try:
        info = server_info(ctx.host, config.port)
    except (httpx.HTTPError, PortNotListening, HostError) as exc:
        ctx.host.stop(proc, grace_s=STOP_GRACE_S)
        raise LaunchFailed(
            f"the server on port {config.port} said ready but its server info (/server_info) could not be read: {exc}",
            remedy="read the log tail; relaunch once, it may have died right after warm-up",
            details={"cause": "crash", "log_path": log_path, "log_tail": ctx.host.tail(log_path, 100)},
        ) from exc
    return ctx.handles.add_server(
        RunningServer(
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
            ready_after_s=round(outcome.elapsed_s, 2),
            warnings=_startup_warnings(ctx, log_path),
        )
    )


def _startup_warnings(ctx: ToolContext, log_path: str) -> list[str]:
    text = ctx.host.tail(log_path, 2000)
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if _WARNING.search(line)))[:20]


def _launch_failed(
    ctx: ToolContext, args: LaunchArgs, outcome: Outcome, pid: int, log_path: str, stopped: bool
) -> LaunchFailed:
    tail = "\n".join(outcome.log_tail.splitlines()[-60:])
    common = {
        "log_path": log_path,
        "pid": pid,
        "elapsed_s": round(outcome.elapsed_s, 2),
        "stopped": stopped,
        "log_tail": tail,
        "config": args.config.model_dump(mode="json"),
    }
    if outcome.diagnosis is None:
        return LaunchFailed(
            f"the server on port {args.config.port} was not ready after {args.ready_timeout_s:.0f} s "
            f"(no error in its log){'; stopped' if stopped else '; still running'}",
            remedy="if the log shows loading progress, relaunch with a longer ready_timeout_s; if it is stuck, "
            "read the log tail (NCCL hangs, a download in progress)",
            details={"cause": "timeout", "lines": [], **common},
        )
    d = outcome.diagnosis
    how = "exited" if outcome.exited else "failed and was stopped"
    first = d.lines[-1] if d.lines else "no error line"
    return LaunchFailed(
        f"the SGLang server {how} before it was ready ({d.cause}): {first}",
        remedy=d.remedy,
        details={"cause": d.cause, "lines": d.lines, "memory": d.memory, **common},
    )


def ready_timeout_for(load_seconds: float, time_scale: float = 1.0) -> float:
    """A ready timeout for a model that loads in `load_seconds` (simulated at `time_scale`).

    Three times the load (CUDA graphs, warm-up, a slow disk), plus a minute of process start-up
    that no time scale shortens.
    """
    return 3 * load_seconds / time_scale + 60.0
