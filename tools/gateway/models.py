"""The gateway's arguments and results: which workers go behind it, and the router that serves them."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..hosts import DetachedProcess
from ..inputs import HostPath, Port

# The router's --policy choices for a regular (not prefill/decode) deployment; `manual` (sticky routing keys) is
# left out: a benchmark sends no routing keys.
Policy = Literal["cache_aware", "round_robin", "random", "power_of_two"]

# http(s)://host:port, an IPv6 host in brackets; no path, no credentials, nothing a shell would read.
WORKER_URL_PATTERN = r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$"


class GatewayWorker(BaseModel):
    """One SGLang server behind the gateway: its URL as the router's host reaches it, and the GPUs it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(
        pattern=WORKER_URL_PATTERN,
        max_length=300,
        description="e.g. http://127.0.0.1:30000, as the host the router runs on reaches the server",
    )
    gpus: int = Field(ge=1, le=4096, description="GPUs the server occupies (tp x pp, x dp without DP attention)")


class GatewayArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workers: list[GatewayWorker] = Field(min_length=1, max_length=256, description="The servers to route to")
    port: Port = Field(default=30100, description="The port clients (and the benchmark) use on the router's host")
    metrics_port: Port | None = Field(
        default=None, description="The router's own Prometheus /metrics port (default: port + 1)"
    )
    policy: Policy = Field(
        default="cache_aware",
        description="How the router picks a worker; cache_aware is the router's default, round_robin the most even",
    )
    ready_timeout_s: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="How long every worker may take to answer the router's health check (the workers are "
        "expected to be up already); also the router's own --worker-startup-timeout-secs",
    )
    log_dir: HostPath = Field(default="~/.specops/logs", description="Where the router's log goes on the host")
    python: HostPath = Field(default="python3", description="The host interpreter that has sglang-router")

    @property
    def router_metrics_port(self) -> int:
        return self.metrics_port if self.metrics_port is not None else self.port + 1


class GatewayWorkerState(BaseModel):
    """A worker as the router lists it (GET /workers)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    healthy: bool
    model: str | None = None
    gpus: int = Field(description="As the caller gave it (the router does not know)")


class RunningGateway(BaseModel):
    """A ready router on a host: how to reach it, stop it, and the workers behind it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field("", description="Short handle (g1, g2, ...) for stop_gateway")
    host: str
    pid: int
    pgid: int
    started_at: datetime
    argv: list[str]
    log_path: str
    port: int = Field(description="The port clients use on the host: BenchmarkArgs(port=...) benchmarks through it")
    metrics_port: int = Field(description="The router's Prometheus /metrics (smg_* series), on the host")
    bound_port: int = Field(
        description="The loopback port the router itself binds: `port` on a real host; a simulated host maps its "
        "virtual port to it"
    )
    bound_metrics_port: int
    policy: Policy
    version: str | None = Field(description="sglang-router's version on the host")
    workers: list[GatewayWorkerState]
    ready_after_s: float

    @property
    def gpus(self) -> int:
        """GPUs behind the gateway: the sum over its workers."""
        return sum(w.gpus for w in self.workers)

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


class StopGatewayArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gateway: str = Field(max_length=16, description="The id start_gateway returned, e.g. 'g1'")
    grace_s: float = Field(default=15.0, gt=0, le=600, description="Seconds between TERM and KILL")


class GatewayStopResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gateway: str
    host: str
    pid: int
    was_running: bool
    port_free: bool = Field(description="Nothing answers on the gateway's port any more")
    seconds: float
