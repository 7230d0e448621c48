"""Downloading a Hub repo onto the host: start it detached, watch it, wait for it.

start_download lists the repo from the Hub the host uses (sizes, the commit),
asks each file's HEAD for the bytes that will land on disk, measures what the
target already holds, and starts the download detached on the host under a
small supervisor that retries transient failures (429, a cut connection) after
a backoff. It returns at once: the agent does other work meanwhile and asks
download_status (or wait_download) how far it got and, on failure, why.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from ..context import ToolContext
from ..hosts import HostError
from ..hub import host_hub_endpoint, list_repo
from ..registry import tool
from .causes import (
    REMEDIES,
    attempts_started,
    cause_in,
    clean,
    evidence,
    final_exit,
    last_attempt,
)
from .command import DOWNLOAD_ENV, downloader_argv, supervised_argv
from .ledger import record_download
from .models import (
    DownloadCause,
    DownloadFailure,
    DownloadHandle,
    DownloadState,
    DownloadStatus,
    DownloadStatusArgs,
    StartDownloadArgs,
    WaitDownloadArgs,
    WaitDownloadResult,
)
from .sizes import expected_files
from .target import (
    Progress,
    config_parses,
    free_space,
    human_bytes,
    measure,
    scan_target,
    snapshot,
)

LOG_DIR = "~/.specops/downloads"
_MISSING_SHOWN = 20


def download_view(handle: DownloadHandle) -> dict[str, object]:
    """The download's id and what it fetches; the command, the retry script and the file list stay in the transcript."""
    return {
        "id": handle.id,
        "repo_id": handle.repo_id,
        "sha": handle.sha,
        "method": handle.method,
        "target_dir": handle.target_dir,
        "files": len(handle.files),
        "expected": handle.expected_human,
        "already_present": f"{handle.already_present_files} files, {handle.already_present_human}",
        "log_path": handle.log_path,
    }


@tool("start_download", mutates=True, view=download_view)
def start_download(ctx: ToolContext, args: StartDownloadArgs) -> DownloadHandle:
    """Start downloading a Hub repo into target_dir on the host, detached, with retries; returns its id (d1, ...)
    for download_status / wait_download. Complete files already there are kept.
    """
    handle = _start(ctx, args)
    if not ctx.peers or _shared(ctx, handle.target_dir):
        return ctx.handles.add_download(handle)
    # A host group: every node needs the files at the same path (a launch over the nodes reads them there).
    peers: list[DownloadHandle] = []
    try:
        for node in ctx.peers:
            peers.append(_start(node, args))
    except BaseException:
        for started, node in zip([handle, *peers], ctx.nodes, strict=False):
            node.host.stop(started.process, grace_s=5)
        raise
    return ctx.handles.add_download(handle.model_copy(update={"peers": peers}))


def _shared(ctx: ToolContext, target: str) -> bool:
    """Whether `target` lies under the root every node of the group shares (host_facts found it)."""
    root = ctx.group_shared_root
    return root is not None and (target == root or target.startswith(root.rstrip("/") + "/"))


def _start(ctx: ToolContext, args: StartDownloadArgs) -> DownloadHandle:
    """The download started detached on ctx's host (not yet registered)."""
    target = ctx.writable(args.target_dir)
    endpoint = host_hub_endpoint(ctx.host)
    listing = list_repo(args.repo_id, endpoint=endpoint, revision=args.revision, token=ctx.hub_token)
    selected = listing.selected(args.include or None, args.exclude or None)
    files, sizes_source = expected_files(selected, token=ctx.hub_token)
    scan = scan_target(ctx.host, target)
    already = measure(files, scan)
    # Only a directory this download creates is specops' own. Anything the scan found means the target exists;
    # only an empty scan (no directory, or an empty one) needs the host asked.
    fresh = not (scan.sizes or scan.in_flight_bytes) and not ctx.host.exists(target)

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    log_path = ctx.resolve(f"{LOG_DIR}/{args.repo_id.replace('/', '--')}-{stamp}.log")
    # Pinned to the listed commit, so what lands matches the sizes measured against.
    command = downloader_argv(
        args.method,
        repo_id=args.repo_id,
        target_dir=target,
        revision=listing.sha or args.revision,
        include=args.include,
        exclude=args.exclude,
    )
    process = ctx.host.start_detached(
        supervised_argv(command, log_path=log_path, max_attempts=args.max_attempts, first_wait_s=args.retry_backoff_s),
        log_path=log_path,
        env={**DOWNLOAD_ENV, **ctx.command_env()},
    )
    if fresh:
        try:
            record_download(ctx, target, args.repo_id, listing.sha)
        except (OSError, HostError):  # a full disk, say: the download runs anyway; only the ledger misses it
            pass
    expected = sum(f.listed_bytes for f in files)
    return DownloadHandle(
        repo_id=args.repo_id,
        revision=args.revision,
        sha=listing.sha,
        method=args.method,
        target_dir=target,
        log_path=log_path,
        process=process,
        command=command,
        max_attempts=args.max_attempts,
        files=files,
        sizes_source=sizes_source,
        expected_bytes=expected,
        expected_human=human_bytes(expected),
        already_present_files=len(already.complete),
        already_present_bytes=already.listed_complete,
        already_present_human=human_bytes(already.listed_complete),
    )


def download_status(ctx: ToolContext, args: DownloadStatusArgs) -> DownloadStatus:
    """How far a download got, whether it still runs, and on failure its cause (cli_unusable, no_space, gated,
    not_found, throttled, partial, killed) with the log tail. (The model asks through wait_download, timeout_s 0.)
    """
    return _status(ctx, ctx.handles.download(args.download), args.log_lines)


def wait_view(result: WaitDownloadResult) -> dict[str, object]:
    """Where the download stands in a planner's words; byte counts, repo and target stay in the transcript."""
    status = result.status
    running = status.state is DownloadState.RUNNING
    return {
        "state": status.state.value,
        "progress": status.progress_human,
        "files": f"{status.files_complete} of {status.files_total} complete",
        "attempt": f"{status.attempts_started} of {status.max_attempts}",
        "missing_files": status.missing_files[:5] if running else status.missing_files,
        "config_json_ok": status.config_json_ok,
        "failure": status.failure.model_dump(mode="json") if status.failure else None,
        "log_tail": None if running and not status.failure else status.log_tail,
        "timed_out": result.timed_out or None,
        "waited_s": round(result.waited_s, 1),
        **({"nodes": [f"{p.host}: {p.state.value}, {p.progress_human}" for p in status.peers]} if status.peers else {}),
    }


@tool("wait_download", mutates=False, view=wait_view)
def wait_download(ctx: ToolContext, args: WaitDownloadArgs) -> WaitDownloadResult:
    """How far a download got, waiting until it finishes or fails or timeout_s passes (0: look now; it keeps
    running after a timeout). On failure: its cause (cli_unusable, no_space, gated, not_found, throttled, partial,
    killed) with the log tail.
    """
    handle = ctx.handles.download(args.download)
    started = time.monotonic()
    deadline = started + args.timeout_s
    while True:
        status = _status(ctx, handle, args.log_lines)
        if status.state is not DownloadState.RUNNING:
            return WaitDownloadResult(status=status, timed_out=False, waited_s=time.monotonic() - started)
        left = deadline - time.monotonic()
        if left <= 0:
            return WaitDownloadResult(status=status, timed_out=True, waited_s=time.monotonic() - started)
        time.sleep(min(args.poll_s, left))


def _status(ctx: ToolContext, handle: DownloadHandle, log_lines: int) -> DownloadStatus:
    """The download's status; on a host group, the group's: failed when a node's failed (its failure, naming the
    node, first), running while any node's runs, finished when every node's has."""
    own = _node_status(ctx, handle, log_lines)
    if not handle.peers:
        return own
    by_host = {node.host.spec: node for node in ctx.nodes}
    peers = [_node_status(by_host[p.process.host], p, log_lines) for p in handle.peers]
    every = [own, *peers]
    failed = next((s for s in every if s.state is DownloadState.FAILED), None)
    if failed is not None:
        assert failed.failure is not None
        failure = failed.failure.model_copy(update={"what": f"on {failed.host}: {failed.failure.what}"})
        return own.model_copy(update={"state": DownloadState.FAILED, "failure": failure, "peers": peers})
    if any(s.state is DownloadState.RUNNING for s in every):
        return own.model_copy(update={"state": DownloadState.RUNNING, "peers": peers})
    return own.model_copy(update={"peers": peers})


def _node_status(ctx: ToolContext, handle: DownloadHandle, log_lines: int) -> DownloadStatus:
    seen = snapshot(ctx.host, handle.process, handle.target_dir)
    running, log = seen.running, clean(seen.log)
    progress = measure(handle.files, seen.scan)
    exit_code = final_exit(log)
    attempts = attempts_started(log)
    failure: DownloadFailure | None = None
    config_ok: bool | None = None
    if running:
        state = DownloadState.RUNNING
    elif exit_code is None:
        state = DownloadState.FAILED
        failure = _failure(
            DownloadCause.KILLED, handle, progress, log, attempts, "the download process ended without finishing"
        )
    else:
        failure = _diagnose(ctx, handle, progress, log, attempts, exit_code)
        if failure is None:
            config_ok = config_parses(ctx.host, handle.target_dir, handle.files)
            if config_ok is False:
                failure = _failure(
                    DownloadCause.PARTIAL, handle, progress, log, attempts, "config.json is on disk but does not parse"
                )
        state = DownloadState.FAILED if failure is not None else DownloadState.FINISHED

    fraction = (
        min(progress.stored_present / total, 1.0) if (total := sum(f.stored_bytes for f in handle.files)) else 1.0
    )
    return DownloadStatus(
        repo_id=handle.repo_id,
        target_dir=handle.target_dir,
        state=state,
        attempts_started=attempts,
        max_attempts=handle.max_attempts,
        files_total=len(handle.files),
        files_complete=len(progress.complete),
        expected_bytes=handle.expected_bytes,
        done_bytes=min(progress.done_listed, handle.expected_bytes),
        fraction=fraction,
        progress_human=f"{human_bytes(progress.done_listed)} of {handle.expected_human} ({fraction:.0%})",
        stored_expected_bytes=total,
        stored_present_bytes=progress.stored_present,
        missing_files=[f.path for f in progress.missing[:_MISSING_SHOWN]],
        config_json_ok=config_ok,
        failure=failure,
        log_tail=_tail(log, log_lines),
        checked_at=datetime.now(UTC),
        host=ctx.host.spec,
    )


def _diagnose(
    ctx: ToolContext, handle: DownloadHandle, progress: Progress, log: str, attempts: int, exit_code: int
) -> DownloadFailure | None:
    """The failure a finished supervisor's log and the disk show; None when the download is complete."""
    attempt = last_attempt(log)
    if exit_code == 0:
        # Exit 0 is not proof: a broken CLI prints its help and exits 0 having fetched nothing.
        if cause_in(attempt, exit_code) is DownloadCause.CLI_UNUSABLE:
            return _failure(
                DownloadCause.CLI_UNUSABLE, handle, progress, attempt, attempts, "it exited 0 without downloading"
            )
        if progress.missing:
            return _failure(
                DownloadCause.PARTIAL, handle, progress, attempt, attempts, "it exited 0 but files are missing"
            )
        return None
    cause = cause_in(attempt, exit_code)
    if cause is None:
        # 128+N: a signal ended the downloader (OOM killer, someone's kill).
        cause = DownloadCause.KILLED if exit_code > 128 else DownloadCause.UNKNOWN
    details = free_space(ctx.host, handle.target_dir) if cause is DownloadCause.NO_SPACE else {}
    return _failure(cause, handle, progress, attempt, attempts, f"it exited {exit_code}", details)


def _failure(
    cause: DownloadCause,
    handle: DownloadHandle,
    progress: Progress,
    log: str,
    attempts: int,
    how: str,
    details: dict[str, object] | None = None,
) -> DownloadFailure:
    """`log`: the output that shows the cause (the last attempt's); `attempts`: how many were made."""
    line = evidence(log, cause)
    what = f"downloading {handle.repo_id} to {handle.target_dir} failed ({cause.value}): {how}"
    if line:
        what += f": {line}"
    if cause is DownloadCause.NO_SPACE and details:
        what += f" ({details['avail_human']} left on {details['mount_point']})"
    if cause in (DownloadCause.THROTTLED, DownloadCause.PARTIAL) and attempts > 1:
        what += f"; {attempts} attempts made"
    missing_bytes = sum(f.listed_bytes for f in progress.missing)
    return DownloadFailure(
        cause=cause,
        what=what,
        remedy=REMEDIES[cause],
        details={
            **(details or {}),
            "files_missing": len(progress.missing),
            "missing_bytes": missing_bytes,
            "missing_human": human_bytes(missing_bytes),
            "log_path": handle.log_path,
        },
    )


def _tail(log: str, lines: int) -> str:
    kept = [line for line in log.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])
