"""What failed during the run and how it was handled.

A failure is a tool call that answered with an error record, a download whose
status says it failed (the seed's CLI that printed its help), a disk check
whose verdict was does_not_fit (the seed's full disk), a deletion free_space
refused (not on a dry run), or a benchmark level the
server died in or stopped answering in (the benchmark answers, but that level
is not valid: kind server_died / server_not_answering, the cause from the
server's log). For each: the next call the run made, and the later call that
succeeded at the same thing (the same repo downloaded, a server of the same
kind up, the same tool answering, a valid level at the same concurrency), with
what it did differently; without one the failure is unresolved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specops.tools.download.models import DownloadState
from specops.tools.sglang.config import ServerConfig

from .evidence import Evidence, Launch, ToolExchange
from .schema import Failure

_LAUNCH_TOOLS = ("launch_server", "restart_server")
_DOWNLOAD_TOOLS = ("start_download", "download_status", "wait_download")


@dataclass(frozen=True)
class _Problem:
    seq: int
    tool: str
    kind: str
    cause: str | None
    what: str
    remedy: str | None
    goal: tuple[str, str | None]  # what a success must achieve: (family, key)


def _goal(exchange: ToolExchange, evidence: Evidence) -> tuple[str, str | None]:
    if exchange.tool in _LAUNCH_TOOLS:
        launch = next((launched for launched in evidence.launches if launched.seq == exchange.seq), None)
        speculative = launch is not None and launch.config.speculative_algorithm is not None
        return ("launch", "speculative" if speculative else "autoregressive")
    if exchange.tool in _DOWNLOAD_TOOLS:
        return ("download", exchange.args.get("repo_id") or _download_repo(evidence, exchange.args.get("download")))
    if exchange.tool == "check_disk":
        return ("disk", exchange.args.get("repo_id"))
    return (exchange.tool, None)


def _download_repo(evidence: Evidence, download_id: object) -> str | None:
    """The repo of the download a status or wait call named by its id (d1, ...)."""
    return next((h.value.repo_id for h in evidence.download_handles if h.value.id == download_id), None)


def _problems(evidence: Evidence) -> list[_Problem]:
    problems = []
    for x in evidence.exchanges:
        if not x.ok and x.error is not None:
            cause = x.error.details.get("cause") if x.error.kind == "launch_failed" else None
            problems.append(
                _Problem(
                    x.seq,
                    x.tool,
                    x.error.kind,
                    str(cause) if cause else None,
                    x.error.what,
                    x.error.remedy,
                    _goal(x, evidence),
                )
            )
    seen_downloads = set()
    for parsed in evidence.download_statuses:
        status = parsed.value
        if status.state is not DownloadState.FAILED or status.failure is None:
            continue
        # One download polled many times is one failure.
        identity = (status.repo_id, status.target_dir, status.failure.details.get("log_path"), status.failure.cause)
        if identity in seen_downloads:
            continue
        seen_downloads.add(identity)
        tool = next(x.tool for x in evidence.exchanges if x.seq == parsed.seq)
        problems.append(
            _Problem(
                parsed.seq,
                tool,
                status.failure.cause.value,
                None,
                status.failure.what,
                status.failure.remedy,
                ("download", status.repo_id),
            )
        )
    for checked in evidence.disk_checks:
        check = checked.value
        if check.verdict == "does_not_fit":
            room = ", ".join(o.mount.mount_point for o in check.alternatives if o.allowed)
            problems.append(
                _Problem(
                    checked.seq,
                    "check_disk",
                    "does_not_fit",
                    None,
                    check.summary,
                    f"mounts with room: {room}"
                    if room
                    else "free what specops itself created, or what the user approves (--allow-delete)",
                    ("disk", check.repo_id),
                )
            )
    problems += _refused_deletions(evidence)
    for benchmarked in evidence.benchmarks:
        for level in benchmarked.value.levels:
            if level.valid:
                continue
            failure = level.server_failure
            problems.append(
                _Problem(
                    benchmarked.seq,
                    "benchmark",
                    f"server_{failure.state}" if failure else "invalid_level",
                    (failure.cause or "unknown") if failure else None,
                    level.invalid_reason or f"C={level.concurrency}: the level is not valid",
                    level.remedy,
                    ("benchmark_level", str(level.concurrency)),
                )
            )
    return sorted(problems, key=lambda p: p.seq)


def _deletions(evidence: Evidence, key: str) -> list[tuple[ToolExchange, dict[str, Any]]]:
    """(call, item) for each item a free_space call that was not a dry run `deleted` or `refused`."""
    return [
        (x, item)
        for x in evidence.exchanges
        if x.tool == "free_space" and x.ok and isinstance(x.result, dict) and not x.result.get("dry_run", True)
        for item in x.result.get(key) or []
        if isinstance(item, dict)
    ]


def _refused_deletions(evidence: Evidence) -> list[_Problem]:
    """Each deletion free_space refused (not on a dry run): what the user did not approve, what is in use or
    what the goal needs."""
    return [
        _Problem(
            x.seq,
            x.tool,
            "deletion_refused",
            item.get("safety"),
            f"free_space did not delete {item.get('id')}: {item.get('reason')}",
            "only the user approves deleting what specops did not create: --allow-delete, or a yes in the "
            "--ask-once round"
            if item.get("safety") == "needs_approval"
            else "it stays: in use, needed by the goal, or outside the roots the run may delete in",
            ("deletion", str(item.get("id"))),
        )
        for x, item in _deletions(evidence, "refused")
    ]


def _successes(evidence: Evidence) -> list[tuple[int, tuple[str, str | None], str]]:
    """(seq, goal achieved, how) for every call that achieved something a failure may have blocked."""
    done: list[tuple[int, tuple[str, str | None], str]] = []
    for launch in evidence.launches:
        if launch.server is not None:
            kind = "speculative" if launch.config.speculative_algorithm is not None else "autoregressive"
            done.append((launch.seq, ("launch", kind), f"{launch.tool} ready on port {launch.server.port}"))
    for parsed in evidence.download_statuses:
        if parsed.value.state is DownloadState.FINISHED:
            done.append(
                (
                    parsed.seq,
                    ("download", parsed.value.repo_id),
                    f"download of {parsed.value.repo_id} finished into {parsed.value.target_dir}",
                )
            )
    for checked in evidence.disk_checks:
        if checked.value.verdict == "fits":
            done.append((checked.seq, ("disk", checked.value.repo_id), f"check_disk: fits in {checked.value.target}"))
    for parsed in evidence.download_statuses:
        if parsed.value.state is DownloadState.FINISHED:
            # A finished download proves the space problem was solved too.
            done.append(
                (parsed.seq, ("disk", parsed.value.repo_id), f"download finished into {parsed.value.target_dir}")
            )
    for benchmarked in evidence.benchmarks:
        for level in benchmarked.value.levels:
            if level.valid:
                done.append(
                    (
                        benchmarked.seq,
                        ("benchmark_level", str(level.concurrency)),
                        f"benchmark valid at C={level.concurrency} on port {benchmarked.value.port}",
                    )
                )
    for x, item in _deletions(evidence, "deleted"):
        done.append((x.seq, ("deletion", str(item.get("id"))), f"free_space deleted {item.get('id')}"))
    for x in evidence.exchanges:
        if x.ok and x.tool not in _LAUNCH_TOOLS + _DOWNLOAD_TOOLS + ("check_disk",):
            done.append((x.seq, (x.tool, None), f"{x.tool} succeeded"))
    return sorted(done, key=lambda d: d[0])


def config_changes(before: ServerConfig, after: ServerConfig) -> list[str]:
    a, b = before.model_dump(mode="json"), after.model_dump(mode="json")
    return [f"{k} {a[k]} -> {b[k]}" for k in b if a.get(k) != b[k]]


def _launch_change(evidence: Evidence, failed_seq: int, recovered_seq: int) -> str:
    by_seq: dict[int, Launch] = {launched.seq: launched for launched in evidence.launches}
    failed, recovered = by_seq.get(failed_seq), by_seq.get(recovered_seq)
    if failed is None or recovered is None:
        return ""
    changes = config_changes(failed.config, recovered.config)
    return f" with {', '.join(changes)}" if changes else " with the same configuration (a retry)"


def list_failures(evidence: Evidence) -> list[Failure]:
    successes = _successes(evidence)
    failures = []
    for problem in _problems(evidence):
        after = next((x for x in evidence.exchanges if x.call_seq > problem.seq), None)
        fix = next((s for s in successes if s[0] > problem.seq and s[1] == problem.goal), None)
        how = None
        if fix is not None:
            how = f"seq {fix[0]}: {fix[2]}"
            if problem.goal[0] == "launch":
                how += _launch_change(evidence, problem.seq, fix[0])
        failures.append(
            Failure(
                seq=problem.seq,
                tool=problem.tool,
                kind=problem.kind,
                cause=problem.cause,
                what=problem.what,
                remedy=problem.remedy,
                next_action=after.describe() if after else None,
                recovered_by=how,
                recovered_seq=fix[0] if fix else None,
                status="recovered" if fix else "unresolved",
            )
        )
    return failures
