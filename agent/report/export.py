"""A finished run's chosen deployment (deployment.py), rebuilt with the code the launch tools use.

Which configuration: the report's recommendation (report.json, as the run wrote it). One server for every
measured load is its `single_config`; a report with a single load band names that band's configuration;
`concurrency` picks the band holding that level, `config` any configuration the run launched. The names are the
report's own (naming.py), handed out over the transcript's launches exactly as build_report does.

Which command: the configuration's last successful launch in the transcript (launch_server or restart_server)
holds the typed ServerConfig, the interpreter it was started with and the host's SGLang release (the server's own
/server_info). The argv is rendered again by tools/sglang/command.py with that release's flags, as launch.py
does; a server across nodes (RunningServer.ranks) gets each rank's node flags from tools/sglang/multinode.py;
replicas (RunningServer.replicas) are one command each, as they were placed (their node, --base-gpu-id and port),
with the gateway's (tools/gateway/command.py's router argv) after them. Where the rebuilt words differ from those the
run recorded, a note says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from specops.sglang_releases.facts import for_version
from specops.tools.gateway.command import router_argv
from specops.tools.gateway.models import GatewayArgs
from specops.tools.gateway.workers import normal_url
from specops.tools.sglang.command import launch_argv
from specops.tools.sglang.config import ServerConfig
from specops.tools.sglang.launch import LaunchArgs
from specops.tools.sglang.multinode import node_flags
from specops.transcripts import Event

from .deployment import Deployment, GatewayLaunch, NodeLaunch
from .evidence import Evidence, Launch, ToolExchange, gather_evidence
from .naming import ConfigNames
from .schema import LoadBand, Report

REPORT_FILE = "report.json"
_DEFAULT_PYTHON = str(LaunchArgs.model_fields["python"].default)


class ExportRefused(ValueError):
    """The run has nothing to export as asked: the message says why, in one line."""


@dataclass(frozen=True)
class _Choice:
    config: str
    because: str


def export_deployment(
    run_dir: Path, events: Sequence[Event], *, config: str | None = None, concurrency: int | None = None
) -> Deployment:
    """The deployment the run recommends (or `config`, or the winner at `concurrency`), from its transcript's
    events and its report.json. ExportRefused when there is none to give."""
    evidence = gather_evidence(events)
    names = ConfigNames(launch.config for launch in evidence.launches)  # the report's names, in its order
    launched = {names.name(launch.config): launch for launch in evidence.launches if launch.server is not None}
    if not launched:
        raise ExportRefused(f"run {run_dir.name} launched no server that came up: there is no command to export")
    if config is not None and concurrency is not None:
        raise ExportRefused("--config and --concurrency both pick the configuration: give one of them")
    if config is not None:
        if config not in launched:
            raise ExportRefused(
                f"run {run_dir.name} launched no configuration {config!r}; it launched: {_listed(launched)}"
            )
        choice = _Choice(config, "picked with --config")
    else:
        choice = _recommended(run_dir, _read_report(run_dir), concurrency)
        if choice.config not in launched:
            raise ExportRefused(
                f"the report recommends {choice.config}, which this run did not launch (its command is not known); "
                f"it launched: {_listed(launched)}"
            )
    return _deployment(evidence, names, launched[choice.config], choice, run_id=_run_id(evidence, run_dir))


def _read_report(run_dir: Path) -> Report:
    path = run_dir / REPORT_FILE
    try:
        return Report.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise ExportRefused(
            f"run {run_dir.name} has no {REPORT_FILE}: it never finished (continue it with `specops resume`)"
        ) from None
    except (OSError, ValueError, ValidationError) as exc:
        raise ExportRefused(f"{path} cannot be read as a report: {str(exc).splitlines()[0]}") from None


def _recommended(run_dir: Path, report: Report, concurrency: int | None) -> _Choice:
    bands = report.recommendation.bands
    if not bands:
        raise ExportRefused(f"run {run_dir.name} ended without a recommendation: {report.recommendation.text}")
    if concurrency is not None:
        band = next((b for b in bands if b.min_concurrency <= concurrency <= b.max_concurrency), None)
        if band is None:
            raise ExportRefused(
                f"--concurrency {concurrency} is not a measured load; the report's winners: {_bands(bands)}"
            )
        return _Choice(band.config, f"the fastest measured at {_load(band)}")
    single = report.recommendation.single_config
    if single is not None:
        return _Choice(single, f"recommended for every measured load ({_bands(bands)})")
    if len(bands) == 1:
        return _Choice(bands[0].config, f"recommended at {_load(bands[0])}")
    raise ExportRefused(
        f"the report recommends a configuration per load and none for all: {_bands(bands)}; pick with --concurrency"
    )


def _deployment(evidence: Evidence, names: ConfigNames, chosen: Launch, choice: _Choice, *, run_id: str) -> Deployment:
    server = chosen.server
    assert server is not None  # `launched` holds only launches that came up
    if server.replicas:
        return _replicated(evidence, chosen, choice, run_id=run_id)
    notes: list[str] = []
    return Deployment(
        run_id=run_id,
        config=choice.config,
        chosen_because=choice.because,
        sglang_version=server.info.version,
        nodes=_node_launches(evidence, chosen, notes),
        notes=notes,
    )


def _replicated(evidence: Evidence, chosen: Launch, choice: _Choice, *, run_id: str) -> Deployment:
    """Replicas launch_server started behind its own gateway (config.replicas > 1): each replica's command as
    it was placed (its node, GPUs and port), then the gateway's with the replicas' URLs as rank 0 reached them."""
    server = chosen.server
    assert server is not None and server.gateway is not None
    notes: list[str] = []
    call = _exchange(evidence, chosen.call_seq)
    python = str(call.args.get("python") or _DEFAULT_PYTHON) if call is not None else _DEFAULT_PYTHON
    flags = _release_flags(server.info.version)
    nodes = []
    for index, replica in enumerate(server.replicas):
        base_gpu = _flag_value(replica.argv, "--base-gpu-id")
        argv = launch_argv(replica.config, python=python, flags=flags) + (
            ["--base-gpu-id", base_gpu] if base_gpu else []
        )
        _compare(argv, replica.argv, f"replica {index} of server {server.id}", notes)
        nodes.append(NodeLaunch(host=replica.host, replica=index, argv=argv))
    gateway = server.gateway
    router = router_argv(
        python=python,
        worker_urls=[normal_url(worker.url) for worker in gateway.workers],
        port=gateway.bound_port,
        metrics_port=gateway.bound_metrics_port,
        policy=gateway.policy,
        startup_timeout_s=float(GatewayArgs.model_fields["ready_timeout_s"].default),
    )
    _compare(router, gateway.argv, f"gateway {gateway.id or gateway.pid}", notes)
    return Deployment(
        run_id=run_id,
        config=choice.config,
        chosen_because=choice.because,
        sglang_version=server.info.version,
        nodes=nodes,
        gateway=GatewayLaunch(host=gateway.host, argv=router),
        notes=notes,
    )


def _node_launches(evidence: Evidence, launch: Launch, notes: list[str]) -> list[NodeLaunch]:
    """Each process of the server: rank 0 alone on one host, every rank when it spans nodes."""
    server = launch.server
    assert server is not None
    call = _exchange(evidence, launch.call_seq)
    python = str(call.args.get("python") or _DEFAULT_PYTHON) if call is not None else _DEFAULT_PYTHON
    # The flags of the host's release, as launch.py passes read_capabilities' to launch_argv.
    flags = _release_flags(server.info.version)
    argv = launch_argv(server.config, python=python, flags=flags)
    # Launch tools pass no environment to start_detached: the command carries every setting.
    if not server.ranks:
        _compare(argv, server.argv, f"server {server.id or server.pid}", notes)
        return [NodeLaunch(host=server.host, argv=argv)]
    nodes = []
    for rank in server.ranks:
        on_node = launch_argv(_as_launched_on(server.config, rank.argv), python=python, flags=flags)
        rank_argv = on_node + node_flags(len(server.ranks), rank.node_rank, _dist_init_addr(rank.argv))
        _compare(rank_argv, rank.argv, f"rank {rank.node_rank} of server {server.id}", notes)
        nodes.append(NodeLaunch(host=rank.host, node_rank=rank.node_rank, nnodes=len(server.ranks), argv=rank_argv))
    return nodes


def _as_launched_on(config: ServerConfig, rank_argv: Sequence[str]) -> ServerConfig:
    """The config with the model and drafter paths this rank was started with: the same as rank 0's on real nodes,
    each node's own tree on simulated ones (tools/sglang/multinode.py moves them there)."""
    paths = {"model_path": _flag_value(rank_argv, "--model-path"), "drafter_path": None}
    if config.drafter_path is not None:
        paths["drafter_path"] = _flag_value(rank_argv, "--speculative-draft-model-path")
    return config.model_copy(update={key: value for key, value in paths.items() if value is not None})


def _release_flags(version: str | None) -> frozenset[str] | None:
    if version is None:
        return None  # launch_argv falls back to the newest modelled release's flags
    return frozenset(name for flag in for_version(version).launch_flags for name in flag.names)


def _dist_init_addr(argv: Sequence[str]) -> str:
    """The rendezvous address a rank was started with: chosen on rank 0's node at launch time."""
    return _flag_value(argv, "--dist-init-addr") or "RANK0_HOST:PORT"


def _flag_value(argv: Sequence[str], flag: str) -> str | None:
    words = list(argv)
    return words[words.index(flag) + 1] if flag in words[:-1] else None


def _compare(rebuilt: list[str], recorded: list[str], what: str, notes: list[str]) -> None:
    if rebuilt != recorded:
        notes.append(f"{what} was launched as {' '.join(recorded)!r}; the command above is today's rendering")


def _exchange(evidence: Evidence, call_seq: int) -> ToolExchange | None:
    return next((x for x in evidence.exchanges if x.call_seq == call_seq), None)


def _run_id(evidence: Evidence, run_dir: Path) -> str:
    return evidence.run_start.run_id if evidence.run_start is not None else run_dir.name


def _listed(launched: dict[str, Launch]) -> str:
    return ", ".join(launched)


def _load(band: LoadBand) -> str:
    if band.min_concurrency == band.max_concurrency:
        return f"C={band.min_concurrency}"
    return f"C={band.min_concurrency}..{band.max_concurrency}"


def _bands(bands: Sequence[LoadBand]) -> str:
    return "; ".join(f"{_load(band)}: {band.config}" for band in bands)
