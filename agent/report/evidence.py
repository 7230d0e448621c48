"""The evidence a report is built from: the tools' recorded results, read back with the tools' own models.

A transcript records each tool call (`tool_call`) and its outcome
(`tool_result`: the result's JSON, or the typed error record). Here they are
paired by call id and parsed with the result model of the tool that produced
them (matched by tool name), so the report reads the same fields the tools
wrote. A result that no longer parses (a transcript from another version) is
skipped with a note, never guessed at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from specops.tools.acceptance import AcceptanceResult
from specops.tools.benchmark.models import BenchmarkResult
from specops.tools.disk import DiskCheck
from specops.tools.download.models import DownloadHandle, DownloadStatus, WaitDownloadResult
from specops.tools.drafters import DrafterConfig
from specops.tools.facts import HostFacts
from specops.tools.sglang.config import ServerConfig
from specops.tools.sglang.handle import RunningServer
from specops.tools.sglang.stop import RestartResult, StopResult
from specops.transcripts import (
    ErrorRecord,
    Event,
    HostOpenedEvent,
    HostTime,
    ModelResponseEvent,
    RunEndEvent,
    RunStartEvent,
    TodoChangeEvent,
    pair_tool_calls,
)

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ToolExchange:
    """One tool call and its outcome. `seq` is the result's (when the outcome was known)."""

    seq: int
    call_seq: int
    tool: str
    args: dict[str, Any]
    ok: bool
    result: Any
    error: ErrorRecord | None
    duration_s: float
    ts: datetime  # when the result came
    call_ts: datetime  # when the call was made
    host_time: HostTime | None = None  # the call on the host's own clock; None: not on the host, or not recorded

    def describe(self) -> str:
        """The call in one short line: tool(key=value, ...), long values cut."""
        parts = []
        for key, value in self.args.items():
            text = _short(value)
            if text:
                parts.append(f"{key}={text}")
        return f"{self.tool}({', '.join(parts)})"


def _short(value: Any, limit: int = 40) -> str:
    if isinstance(value, dict):
        # A nested record (a ServerConfig, a handle): its identifying fields only.
        keys = [
            k
            for k in (
                "repo_id",
                "port",
                "tp",
                "ep",
                "pp",
                "dp",
                "enable_dp_attention",
                "mem_fraction_static",
                "cuda_graphs",
                "speculative_algorithm",
                "pid",
            )
            if k in value
        ]
        if "config" in value and isinstance(value["config"], dict):
            return _short(value["config"], limit)
        text = ",".join(f"{k}={value[k]}" for k in keys if value[k] is not None)
        return "{" + text + "}" if text else ""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Launch:
    """A launch_server or restart_server outcome: the configuration tried and the server, or why not."""

    seq: int
    call_seq: int
    tool: str
    config: ServerConfig
    server: RunningServer | None
    error: ErrorRecord | None
    stopped_pid: int | None = None  # restart_server stops the old server first


@dataclass(frozen=True)
class Parsed(Generic[M]):
    seq: int
    call_seq: int
    value: M


@dataclass
class Evidence:
    run_start: RunStartEvent | None = None
    run_end: RunEndEvent | None = None
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    exchanges: list[ToolExchange] = field(default_factory=list)
    todo_changes: list[TodoChangeEvent] = field(default_factory=list)
    model_time_s: float = 0.0
    host_opened_seqs: list[int] = field(default_factory=list)  # each time the run opened its host (again on resume)
    host_facts: list[Parsed[HostFacts]] = field(default_factory=list)
    disk_checks: list[Parsed[DiskCheck]] = field(default_factory=list)
    drafter_configs: list[Parsed[DrafterConfig]] = field(default_factory=list)
    download_handles: list[Parsed[DownloadHandle]] = field(default_factory=list)
    download_statuses: list[Parsed[DownloadStatus]] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    stops: list[Parsed[StopResult]] = field(default_factory=list)
    benchmarks: list[Parsed[BenchmarkResult]] = field(default_factory=list)
    acceptance: list[Parsed[AcceptanceResult]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def pair_tool_events(events: Sequence[Event]) -> list[ToolExchange]:
    """Every tool call that has a result, in the order the results came (calls may overlap)."""
    exchanges = [
        ToolExchange(
            seq=p.result.seq,
            call_seq=p.call.seq,
            tool=p.result.tool,
            args=p.call.args,
            ok=p.result.ok,
            result=p.result.result,
            error=p.result.error,
            duration_s=p.result.duration_s,
            ts=p.result.ts,
            call_ts=p.call.ts,
            host_time=p.result.host_time,
        )
        for p in pair_tool_calls(events)
        if p.result is not None
    ]
    return sorted(exchanges, key=lambda x: x.seq)


def gather_evidence(events: Sequence[Event]) -> Evidence:
    evidence = Evidence()
    for event in events:
        evidence.first_ts = evidence.first_ts or event.ts
        evidence.last_ts = event.ts
        if isinstance(event, RunStartEvent):
            evidence.run_start = event
        elif isinstance(event, RunEndEvent):
            evidence.run_end = event
        elif isinstance(event, TodoChangeEvent):
            evidence.todo_changes.append(event)
        elif isinstance(event, ModelResponseEvent):
            evidence.model_time_s += event.duration_s
        elif isinstance(event, HostOpenedEvent):
            evidence.host_opened_seqs.append(event.seq)
    evidence.exchanges = pair_tool_events(events)
    for exchange in evidence.exchanges:
        _read(evidence, exchange)
    return evidence


def _parse(evidence: Evidence, exchange: ToolExchange, model: type[M], value: Any | None = None) -> M | None:
    try:
        return model.model_validate(exchange.result if value is None else value)
    except ValidationError as exc:
        evidence.notes.append(
            f"seq {exchange.seq}: the {exchange.tool} result does not read as {model.__name__} "
            f"({exc.error_count()} problems, first: {exc.errors()[0]['msg']}); left out"
        )
        return None


def _add(evidence: Evidence, target: list[Parsed[M]], exchange: ToolExchange, model: type[M]) -> M | None:
    value = _parse(evidence, exchange, model)
    if value is not None:
        target.append(Parsed(exchange.seq, exchange.call_seq, value))
    return value


def _read(evidence: Evidence, exchange: ToolExchange) -> None:
    tool = exchange.tool
    if tool in ("launch_server", "restart_server"):
        _read_launch(evidence, exchange)
        return
    if not exchange.ok:
        return
    if tool == "host_facts":
        _add(evidence, evidence.host_facts, exchange, HostFacts)
    elif tool == "check_disk":
        _add(evidence, evidence.disk_checks, exchange, DiskCheck)
    elif tool == "read_drafter_config":
        _add(evidence, evidence.drafter_configs, exchange, DrafterConfig)
    elif tool == "start_download":
        _add(evidence, evidence.download_handles, exchange, DownloadHandle)
    elif tool == "download_status":
        _add(evidence, evidence.download_statuses, exchange, DownloadStatus)
    elif tool == "wait_download":
        waited = _parse(evidence, exchange, WaitDownloadResult)
        if waited is not None:
            evidence.download_statuses.append(Parsed(exchange.seq, exchange.call_seq, waited.status))
    elif tool == "stop_server":
        _add(evidence, evidence.stops, exchange, StopResult)
    elif tool == "benchmark":
        _add(evidence, evidence.benchmarks, exchange, BenchmarkResult)
    elif tool == "acceptance":
        _add(evidence, evidence.acceptance, exchange, AcceptanceResult)


def _read_launch(evidence: Evidence, exchange: ToolExchange) -> None:
    if exchange.ok:
        if exchange.tool == "launch_server":
            server = _parse(evidence, exchange, RunningServer)
            stopped = None
        else:
            restart = _parse(evidence, exchange, RestartResult)
            server, stopped = (restart.server, restart.stopped.pid) if restart else (None, None)
        if server is not None:
            evidence.launches.append(
                Launch(exchange.seq, exchange.call_seq, exchange.tool, server.config, server, None, stopped)
            )
        return
    config = _attempted_config(evidence, exchange)
    stopped = exchange.error.details.get("stopped") if exchange.error is not None else None
    stopped_pid = stopped.get("pid") if isinstance(stopped, dict) else None  # a restart stops before it relaunches
    if config is None:
        evidence.notes.append(
            f"seq {exchange.seq}: a failed {exchange.tool} whose configuration cannot be read; "
            "it is listed among failures only"
        )
        return
    evidence.launches.append(
        Launch(exchange.seq, exchange.call_seq, exchange.tool, config, None, exchange.error, stopped_pid)
    )


def _attempted_config(evidence: Evidence, exchange: ToolExchange) -> ServerConfig | None:
    """The configuration a failed launch tried: from its arguments, else from the error's details."""
    candidates: list[Any] = []
    if exchange.tool == "launch_server":
        candidates.append(exchange.args.get("config"))
    else:  # a restart names its server by id: the configuration is that server's, with the changes
        old = next(
            (
                launch.server
                for launch in evidence.launches
                if launch.server is not None and launch.server.id == exchange.args.get("server")
            ),
            None,
        )
        if old is not None:
            candidates.append({**old.config.model_dump(), **(exchange.args.get("changes") or {})})
    if exchange.error is not None:
        candidates.append(exchange.error.details.get("config"))
    for candidate in candidates:
        if isinstance(candidate, dict):
            try:
                return ServerConfig.model_validate(candidate)
            except ValidationError:
                continue
    return None
