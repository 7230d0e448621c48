"""The download tools: a Hub repo to a directory on the host, detached, with progress and classified failures.

`tools.py` holds the registered tools (start_download, and wait_download, which with
timeout_s 0 only looks; download_status is that look, for callers in Python); `models.py` their arguments and results; `command.py` the
command that runs on the host; `causes.py` reading its log; `sizes.py` and
`target.py` what the target directory should and does hold.
"""

from .models import (
    DownloadCause,
    DownloadHandle,
    DownloadMethod,
    DownloadState,
    DownloadStatus,
    DownloadStatusArgs,
    StartDownloadArgs,
    WaitDownloadArgs,
    WaitDownloadResult,
)
from .tools import download_status, start_download, wait_download

__all__ = [
    "DownloadCause",
    "DownloadHandle",
    "DownloadMethod",
    "DownloadState",
    "DownloadStatus",
    "DownloadStatusArgs",
    "StartDownloadArgs",
    "WaitDownloadArgs",
    "WaitDownloadResult",
    "download_status",
    "start_download",
    "wait_download",
]
