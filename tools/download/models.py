"""The download tools' typed arguments, handle and status.

Sizes come in two units, kept apart on purpose:
- `listed` bytes are what the Hub's listing declares (what a planner reasons
  with: "8.21 GB to download");
- `stored` bytes are what the Hub actually delivers and what lands on disk,
  taken from each file's HEAD (X-Linked-Size / Content-Length).
On a real host the two are equal. A simulated host stores 1/byte_scale of each
large file while listing the full size, so progress and verification compare
stored with stored, and progress is reported back in listed units file by file.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..hosts import DetachedProcess
from ..inputs import HostPath, RepoId, Revision

# Glob patterns as `hf download --include/--exclude` take them: path characters and * ? [ ]; no shell meaning
# matters since they travel as argv words, but nothing a real repo path lacks is let through either.
_GLOB = re.compile(r"[A-Za-z0-9._/*?\[\]+@=,-]+")


def check_glob(value: str) -> str:
    if not _GLOB.fullmatch(value) or ".." in value.split("/"):
        raise ValueError(
            f"{value!r} is not a file pattern: use letters, digits, . _ / - and the glob characters * ? [ ] "
            "(e.g. *.safetensors)"
        )
    return value


GlobPattern = Annotated[str, AfterValidator(check_glob), Field(description="fnmatch pattern on repo paths")]


class DownloadMethod(StrEnum):
    HF = "hf"  # `hf download` (huggingface_hub >= 0.34)
    HUGGINGFACE_CLI = "huggingface-cli"  # the old CLI: works before 1.0, a stub on 1.x, absent on 2.x
    LIBRARY = "library"  # `python3 -c '... snapshot_download(...)'`: when no CLI works


class DownloadState(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"  # exited 0 and every expected file is on disk at its stored size
    FAILED = "failed"


class DownloadCause(StrEnum):
    """Why a download failed; stable names the policy matches on."""

    CLI_UNUSABLE = "cli_unusable"  # the CLI printed help or a deprecation notice, or is not installed
    NO_SPACE = "no_space"  # ENOSPC on the target's filesystem
    GATED = "gated"  # 401/403: the repo needs a token with access
    NOT_FOUND = "not_found"  # 404: repo, revision or file missing
    THROTTLED = "throttled"  # 429 on every attempt
    PARTIAL = "partial"  # the transfer was cut (or exited 0) and files are still missing
    KILLED = "killed"  # the process died without finishing (stopped, OOM killer, reboot)
    UNKNOWN = "unknown"  # it failed in a way not recognised: read log_tail


class StartDownloadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo_id: RepoId
    target_dir: HostPath = Field(description="Directory on the host for the files (created)")
    revision: Revision = "main"
    include: list[GlobPattern] = Field(default_factory=list, description="Only files matching one of these")
    exclude: list[GlobPattern] = Field(default_factory=list, description="Leave out files matching these")
    method: DownloadMethod = DownloadMethod.HF
    max_attempts: int = Field(
        default=3, ge=1, le=10, description="Attempts when an attempt fails transiently (429, a cut connection)"
    )
    retry_backoff_s: float = Field(
        default=30.0, ge=0, le=3600, description="Wait before the second attempt; doubled before each later one"
    )


class ExpectedFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    listed_bytes: int
    stored_bytes: int = Field(description="What the Hub delivers and the disk will hold (HEAD size)")


class DownloadHandle(BaseModel):
    """What start_download returns; download_status / wait_download take back its short `id`."""

    model_config = ConfigDict(frozen=True)

    id: str = Field("", description="Short handle (d1, d2, ...) for download_status and wait_download")
    repo_id: str
    revision: str
    sha: str = Field(description="The commit the revision resolved to; the download is pinned to it")
    method: DownloadMethod
    target_dir: str = Field(description="Absolute path on the host")
    log_path: str
    process: DetachedProcess
    command: list[str] = Field(description="The download command each attempt runs (no secret in it)")
    max_attempts: int
    files: list[ExpectedFile]
    sizes_source: str = Field(description="'head': stored sizes from each file's HEAD; 'listing': HEAD was refused")
    expected_bytes: int = Field(description="Listed bytes of the selected files")
    expected_human: str
    already_present_files: int = Field(description="Expected files already on disk at their stored size")
    already_present_bytes: int = Field(description="Listed bytes of those files")
    already_present_human: str
    peers: list[DownloadHandle] = Field(
        default_factory=list,
        description="On a host group: the same download on each other node (rank 1 on), unless a shared root holds it",
    )


class DownloadFailure(BaseModel):
    model_config = ConfigDict(frozen=True)

    cause: DownloadCause
    what: str
    remedy: str
    details: dict[str, Any] = {}


class DownloadStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    repo_id: str
    target_dir: str
    state: DownloadState
    attempts_started: int
    max_attempts: int
    files_total: int
    files_complete: int
    expected_bytes: int
    done_bytes: int = Field(description="Listed bytes done: complete files, plus in-flight bytes converted")
    fraction: float = Field(ge=0, le=1)
    progress_human: str = Field(description="e.g. '4.10 GB of 8.21 GB (50%)'")
    stored_expected_bytes: int
    stored_present_bytes: int = Field(description="Bytes on disk of complete files and in-flight partial files")
    missing_files: list[str] = Field(default_factory=list, description="Expected files not (yet) complete, first 20")
    config_json_ok: bool | None = Field(
        default=None, description="After finishing: config.json parses (None if not fetched)"
    )
    failure: DownloadFailure | None = None
    log_tail: str
    checked_at: datetime
    host: str | None = Field(default=None, description="The node it is on (a host group's downloads)")
    peers: list[DownloadStatus] = Field(default_factory=list, description="The other nodes' downloads, rank 1 on")


class DownloadStatusArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    download: str = Field(min_length=1, max_length=16, description="The id start_download returned, e.g. 'd1'")
    log_lines: int = Field(default=40, ge=1, le=500)


class WaitDownloadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    download: str = Field(min_length=1, max_length=16, description="The id start_download returned, e.g. 'd1'")
    timeout_s: float = Field(default=3600.0, ge=0, le=24 * 3600, description="0: the status now, without waiting")
    poll_s: float = Field(default=5.0, gt=0, le=300)
    log_lines: int = Field(default=40, ge=1, le=500)


class WaitDownloadResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: DownloadStatus
    timed_out: bool = Field(description="True when the wait ran out while the download still ran (it goes on)")
    waited_s: float
