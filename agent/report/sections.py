"""The descriptive sections of the report, each read from the results that establish it.

run: run_start/run_end events, and free_space's deletions; host: the last host_facts (else what
run_start recorded); drafters: each drafter's read_drafter_config and the download of it
(drafters.py says which is which); configs: every launch and restart; acceptance: every
acceptance eval, named by the server that answered and the drafter it serves; left
running: servers launched and never stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from specops.agent.final import FinalAnswer
from specops.tools.acceptance import CategoryAcceptance
from specops.tools.download.models import DownloadState
from specops.tools.drafters import DrafterConfig
from specops.tools.sglang.handle import RunningServer

from .deletions import list_deletions
from .drafters import Drafters, is_repo_id
from .evidence import Evidence, ToolExchange
from .naming import ConfigNames, stat_label
from .schema import (
    AcceptanceSection,
    AcceptanceStat,
    CardFigures,
    ConfigTried,
    DrafterSection,
    HostSection,
    LeftRunning,
    RunSection,
    Versions,
)
from .servers import ServerTimeline


def run_section(evidence: Evidence, final: FinalAnswer | None, status: str) -> RunSection:
    start, end = evidence.run_start, evidence.run_end
    started = start.ts if start else evidence.first_ts
    ended = end.ts if end else evidence.last_ts
    duration = end.duration_s if end else ((ended - started).total_seconds() if started and ended else None)
    first = start or end
    return RunSection(
        id=first.run_id if first else "unknown",
        goal=start.goal if start else None,
        status=status,
        policy=start.policy.name if start else None,
        policy_status=final.status if final else None,
        summary_text=final.summary if final else None,
        started_at=started,
        ended_at=ended,
        duration_s=duration,
        deletions=list_deletions(evidence),
    )


def _served_version(evidence: Evidence) -> str | None:
    versions = [
        launch.server.info.version
        for launch in evidence.launches
        if launch.server is not None and launch.server.info.version
    ]
    versions += [b.value.server_version for b in evidence.benchmarks if b.value.server_version]
    return versions[-1] if versions else None


def host_section(evidence: Evidence) -> HostSection:
    if evidence.host_facts:
        f = evidence.host_facts[-1].value
        return HostSection(
            spec=f.host,
            hostname=f.hostname,
            os=f.os,
            gpu_count=f.gpu_count,
            gpu_model=f.gpu_model,
            gpu_memory_total_bytes=f.gpu_memory_total_bytes,
            interconnect=f.interconnect.interconnect if f.interconnect else None,
            interconnect_summary=f.interconnect.summary if f.interconnect else None,
            cpu=f.cpu.model,
            cpu_cores=f.cpu.cores,
            memory_total=f.memory.total if f.memory else None,
            versions=Versions(
                sglang=f.sglang_version or _served_version(evidence),
                python=f.python_version,
                huggingface_hub=f.huggingface_hub_version,
                driver=f.driver_version,
                cuda=f.cuda_version,
            ),
            source="host_facts",
        )
    recorded = evidence.run_start.host if evidence.run_start else {}
    spec = recorded.get("spec")
    return HostSection(
        spec=str(spec) if spec else None,
        hostname=None,
        os=None,
        gpu_count=recorded.get("gpus") if isinstance(recorded.get("gpus"), int) else None,
        gpu_model=None,
        gpu_memory_total_bytes=None,
        interconnect=None,
        interconnect_summary=None,
        cpu=None,
        cpu_cores=None,
        memory_total=None,
        versions=Versions(sglang=_served_version(evidence), python=None, huggingface_hub=None, driver=None, cuda=None),
        source="run_start" if recorded else "none",
    )


def drafter_sections(
    evidence: Evidence, drafters: Drafters, serving: Mapping[str, str], benchmarked: Sequence[str]
) -> list[DrafterSection]:
    """A section per drafter read, in the order first read, each from that drafter's latest read (a config, or the
    refusal); `serving` maps configuration names to the drafter they serve, `benchmarked` lists the names measured."""
    sections = []
    for identity in drafters.identities:
        reads = [r for r in drafters.reads if r.identity == identity]
        # One drafter read: every speculative server served it (as when the report knew only one).
        served = [
            launch.server
            for launch in evidence.launches
            if launch.server is not None
            and launch.config.speculative_algorithm is not None
            and (len(drafters.identities) == 1 or drafters.serves(launch.config) == identity)
        ]
        served_block = served[-1].info.block_size if served else None
        latest = reads[-1]
        section = (
            _refused(latest.refusal, served_block)
            if latest.refusal is not None
            else _read(evidence, latest.config, served_block)
        )
        card = next((r.config.card_acceptance for r in reversed(reads) if r.config and r.config.card_acceptance), None)
        sections.append(
            section.model_copy(
                update={
                    "identity": identity,
                    "configs": [name for name in benchmarked if serving.get(name) == identity],
                    "card": CardFigures(figures=card.figures, label=card.label) if card else None,
                }
            )
        )
    return sections


def last_read(sections: Sequence[DrafterSection], drafters: Drafters) -> DrafterSection | None:
    """The section of the drafter read last: the report's `drafter`."""
    if not drafters.reads:
        return None
    identity = drafters.reads[-1].identity
    return next(s for s in sections if s.identity == identity)


def _refused(refusal: ToolExchange, served_block: int | None) -> DrafterSection:
    error = refusal.error
    assert error is not None, "a refusal is an exchange that answered with an error"
    source = refusal.args.get("drafter") or {}
    target = refusal.args.get("target") or {}
    problems = error.details.get("problems") or [error.what]
    return DrafterSection(
        repo_id=source.get("repo_id"),
        revision=source.get("revision"),
        sha=None,
        path=source.get("path"),
        is_dflash=error.kind != "not_a_drafter",
        block_size=None,
        block_size_from=None,
        served_block_size=served_block,
        draft_layers=None,
        target_layer_ids=None,
        target=target.get("repo_id") or target.get("path"),
        target_compatible=False,
        checks=[],
        problems=[str(p) for p in problems],
        summary=error.what,
    )


def _read(evidence: Evidence, config: DrafterConfig | None, served_block: int | None) -> DrafterSection:
    assert config is not None, "a read that was not refused holds its config"
    # MTP heads and n-gram have no drafter of their own: the section names the algorithm and the target.
    repo, _, revision = config.drafter.source.partition("@") if config.drafter else ("", "", "")
    is_repo = is_repo_id(repo)
    handle = next((h.value for h in reversed(evidence.download_handles) if repo and h.value.repo_id == repo), None)
    if handle is None and repo and not is_repo:
        # Read from disk: the download that put it there names the repo.
        handle = next((h.value for h in reversed(evidence.download_handles) if h.value.target_dir == repo), None)
    return DrafterSection(
        repo_id=handle.repo_id if handle else (repo if is_repo else None),
        revision=handle.revision if handle else (revision or None),
        sha=handle.sha if handle else None,
        path=handle.target_dir if handle else (None if is_repo else repo or None),
        is_dflash=config.is_dflash,
        algorithm=config.algorithm.value,
        sglang_defaults=config.sglang_defaults.label() if config.sglang_defaults else None,
        block_size=config.block_size,
        block_size_from=config.block_size_from,
        served_block_size=served_block,
        draft_layers=config.draft_layers,
        target_layer_ids=config.target_layer_ids,
        target=config.target.source if config.target else None,
        target_compatible=True if config.target is not None else None,
        checks=config.checks,
        problems=[],
        summary=config.summary,
    )


def configs_tried(evidence: Evidence, names: ConfigNames, drafters: Drafters) -> list[ConfigTried]:
    last_block = evidence.drafter_configs[-1].value.block_size if evidence.drafter_configs else None
    tried = []
    for launch in evidence.launches:
        c = launch.config
        error = launch.error
        algorithm = c.speculative_algorithm
        drafter = drafters.serves(c)
        # DFLASH's default is the block size of the drafter it serves (the last read, when that one was not read).
        config = drafters.latest_config(drafter) if drafter else None
        drafter_block = config.block_size if config else last_block
        at_defaults = (
            None
            if algorithm is None
            else c.block_size in (None, drafter_block)
            if algorithm.value == "DFLASH"
            else c.block_size is None and c.speculative_num_steps is None and c.speculative_eagle_topk is None
        )
        tried.append(
            ConfigTried(
                name=names.name(c),
                speculative=c.speculative_algorithm is not None,
                algorithm=c.speculative_algorithm.value if c.speculative_algorithm else None,
                tp=c.tp,
                ep=c.ep,
                dp=c.dp,
                pp=c.pp,
                replicas=c.replicas,
                nodes=_nodes(launch.server),
                dp_attention=c.enable_dp_attention,
                cuda_graphs=c.cuda_graphs,
                drafter_path=c.drafter_path,
                drafter=drafter,
                block_size=launch.server.info.block_size if launch.server else c.block_size,
                model_path=c.model_path,
                num_steps=c.speculative_num_steps,
                eagle_topk=c.speculative_eagle_topk,
                sglang_defaults=at_defaults,
                port=c.port,
                launched=launch.server is not None,
                failure_cause=(str(error.details.get("cause") or error.kind)) if error else None,
                failure=error.what if error else None,
                ready_after_s=launch.server.ready_after_s if launch.server else None,
                seq=launch.seq,
            )
        )
    return tried


def _nodes(server: RunningServer | None) -> int | None:
    """The nodes a server ran on: its ranks' (one server across nodes) or its replicas' hosts; None: not up."""
    if server is None:
        return None
    return len({p.host for p in (server.ranks or server.replicas)}) or 1


def _stat(c: CategoryAcceptance) -> AcceptanceStat:
    return AcceptanceStat(
        category=c.category,
        thinking=c.thinking,
        prompt_set=c.prompt_set,
        prompts=c.prompts,
        request_mean=c.request_mean,
        request_mean_ci95=c.request_mean_ci95,
        token_weighted=c.token_weighted,
        token_weighted_ci95=c.token_weighted_ci95,
        histogram=c.histogram,
        position_accept_rate=c.position_accept_rate,
    )


def acceptance_sections(evidence: Evidence, timeline: ServerTimeline, drafters: Drafters) -> list[AcceptanceSection]:
    sections = []
    for parsed in evidence.acceptance:
        a = parsed.value
        served = timeline.at(a.port, parsed.call_seq, a.speculative_algorithm)
        if served.server_config is not None:
            drafter = drafters.serves(served.server_config)
        else:  # a server this run did not launch: the drafter read, when it read one
            drafter = drafters.identities[0] if len(drafters.identities) == 1 and served.speculative else None
        sections.append(
            AcceptanceSection(
                config=served.config,
                drafter=drafter,
                overall=_stat(a.overall),
                categories=[_stat(c) for c in a.categories],
                overall_by_thinking=[_stat(o) for o in a.overall_by_thinking],
                prompt_counts={stat_label(c): c.prompts for c in a.categories},
                method=a.method,
                block_size=a.block_size,
                server_avg_accept_length=a.server_avg_accept_length,
                warning=a.warning,
                failed_requests=a.failed_requests,
                seq=parsed.seq,
            )
        )
    return sections


def left_running(evidence: Evidence, timeline: ServerTimeline, final: FinalAnswer | None) -> LeftRunning:
    last: dict[tuple[str, str], DownloadState] = {}
    for parsed in evidence.download_statuses:
        last[(parsed.value.repo_id, parsed.value.target_dir)] = parsed.value.state
    return LeftRunning(
        servers=timeline.left_running(),
        downloads=[f"{repo} -> {target}" for (repo, target), state in last.items() if state is DownloadState.RUNNING],
        policy_text=list(final.left_running) if final else [],
    )
