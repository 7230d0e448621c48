"""A server this run started: its handle, and the record of it kept on the host.

The record (`~/.specops/sglang/<pgid>.json` on the host) is how stop and
restart know a server is one specops started: a process that merely listens on
the port, or a handle whose process id now belongs to something else, is not.
"""

from __future__ import annotations

import json
import posixpath
import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..context import ToolContext
from ..gateway.models import RunningGateway
from ..hosts import DetachedProcess, RemoteFileNotFound
from .config import ServerConfig
from .server_http import ServerInfoSummary

RECORDS_DIR = ".specops/sglang"
STOP_GRACE_S = 30.0  # a server's (or a failed start-up's) processes get this long after TERM, then KILL


class RankProcess(BaseModel):
    """One node's process of a server over several nodes (--node-rank)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_rank: int
    host: str = Field(description="Spec of the node it runs on")
    pid: int
    pgid: int
    log_path: str
    argv: list[str]
    started_at: datetime
    boot_id: str | None = Field(
        default=None, description="The node's kernel boot id at launch: another one later means the node rebooted"
    )
    started_on_host: float | None = Field(default=None, description="The node's clock just before the rank started")

    @property
    def process(self) -> DetachedProcess:
        return DetachedProcess(
            pid=self.pid,
            pgid=self.pgid,
            log_path=self.log_path,
            argv=self.argv,
            started_at=self.started_at,
            host=self.host,
            started_on_host=self.started_on_host,
        )


class RunningServer(BaseModel):
    """A ready SGLang server on a host: how to reach it, stop it, and what it runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field("", description="Short handle (s1, s2, ...) for server_status, stop_server, restart_server")
    host: str = Field(description="Spec of the host it runs on")
    pid: int
    pgid: int = Field(description="Its process group: stop signals the whole group (scheduler and detokenizer too)")
    started_at: datetime
    argv: list[str]
    log_path: str
    port: int
    base_url: str = Field(description="URL on the host; from here reach it through host.forward(port) (server_url)")
    config: ServerConfig
    info: ServerInfoSummary = Field(
        description="From /server_info (/get_server_info on releases without it) once ready"
    )
    ready_after_s: float = Field(description="Seconds from start to ready (load, CUDA graphs, warm-up)")
    warnings: list[str] = Field(
        default_factory=list, description="SGLang's start-up warnings (defaults it chose, overrides)"
    )
    ranks: list[RankProcess] = Field(
        default_factory=list,
        description="A server over several nodes: every node's process, rank 0 (this one) first; empty on one host",
    )
    replicas: list[RunningServer] = Field(
        default_factory=list,
        description="config.replicas > 1: every replica, on its node; this handle's process and port are then the "
        "gateway's",
    )
    gateway: RunningGateway | None = Field(default=None, description="SGLang's Model Gateway in front of the replicas")

    @property
    def process(self) -> DetachedProcess:
        return DetachedProcess(
            pid=self.pid,
            pgid=self.pgid,
            log_path=self.log_path,
            argv=self.argv,
            started_at=self.started_at,
            host=self.host,
        )


def record_path(ctx: ToolContext, pgid: int) -> str:
    return posixpath.join(ctx.home, RECORDS_DIR, f"{pgid}.json")


def write_record(ctx: ToolContext, proc: DetachedProcess) -> None:
    """Written as soon as the process exists, so a failed or interrupted launch can still be stopped."""
    ctx.host.write_file(record_path(ctx, proc.pgid), proc.model_dump_json().encode())


def started_by_us(ctx: ToolContext, proc: DetachedProcess) -> bool:
    """Whether the host's record for this process group names this very process (same pid, same start)."""
    try:
        recorded = DetachedProcess.model_validate(json.loads(ctx.host.read_file(record_path(ctx, proc.pgid))))
    except (RemoteFileNotFound, ValueError):
        return False
    return recorded.pid == proc.pid and recorded.started_at == proc.started_at and recorded.argv == proc.argv


def forget_record(ctx: ToolContext, pgid: int) -> None:
    ctx.host.run(["rm", "-f", "--", record_path(ctx, pgid)], timeout=30, idempotent=True)


def server_view(server: RunningServer) -> dict[str, Any]:
    """What a planner needs of a running server: its id and what it runs (argv, config and paths stay in the transcript;
    server_status gives its log)."""
    config, info = server.config, server.info
    sizes = [
        f"{name}{size}"
        for name, size in (("tp", config.tp), ("ep", config.ep), ("dp", config.dp), ("pp", config.pp))
        if size != 1 or name == "tp"
    ]  # tp always, the others where they are not 1
    layout = " ".join(sizes) + (" dp-attention" if config.enable_dp_attention else "")
    speculative = (
        f"{config.speculative_algorithm} block {config.block_size or info.block_size}"
        if config.speculative_algorithm
        else None
    )
    return {
        "id": server.id,
        "port": server.port,
        "layout": layout,  # the version is host_facts', the load time the transcript's
        "speculative": speculative,
        "cuda_graphs": None if config.cuda_graphs else False,  # said only when off
        "max_running_requests": info.max_running_requests,
        "max_total_num_tokens": info.max_total_num_tokens,
        "warnings": [_LOG_STAMP.sub("", w, count=1) for w in server.warnings],
        **({"nodes": len(server.ranks)} if server.ranks else {}),
        **({"replicas": [f"{r.host}:{r.port}" for r in server.replicas], "via": "gateway"} if server.replicas else {}),
    }


_LOG_STAMP = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:]+\]\s*")  # SGLang's "[2026-12-03 10:28:04] " line prefix
