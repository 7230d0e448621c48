"""The download tools: a Hub repo to a directory on the host, detached, with progress and classified failures.

`tools.py` holds the three registered tools (start_download, download_status,
wait_download); `models.py` their arguments and results; `command.py` the
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
