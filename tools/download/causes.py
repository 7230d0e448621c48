"""Reading a download's log: which failure it shows, and what the caller can do about it.

The patterns are the messages real huggingface_hub prints (the `hf` CLI's
one-line errors, the library's tracebacks, the old `huggingface-cli`'s
notices, the shell's "not found"), across versions 0.x to 2.x. They are plain
text alternations valid both as Python regexes and as `grep -E` patterns: the
supervisor on the host greps TRANSIENT to decide whether to try again.
"""

from __future__ import annotations

import re

from .models import DownloadCause

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Failures a new attempt may get past: rate limits, cut or refused connections, 5xx.
THROTTLE = "429 Too Many Requests|Too Many Requests|rate-limited|rate limit"
NETWORK = (
    "peer closed connection|RemoteProtocolError|ConnectError|ConnectTimeout|ReadTimeout|TimeoutException"
    "|Connection reset|Connection refused|Connection aborted|IncompleteRead|ChunkedEncodingError"
    "|Consistency check failed|Max retries exceeded|5[0-9][0-9] Server Error|Bad Gateway|Service Unavailable"
    "|Gateway Timeout"
)
TRANSIENT = f"{THROTTLE}|{NETWORK}"

# What the CLIs print when they do not download: help text, a dead entry point, no such program or module.
_CLI_UNUSABLE = re.compile(
    r"Usage: (hf|huggingface-cli)\b|Main commands:|no longer works|is deprecated and no longer works"
    r"|: (hf|huggingface-cli|python3): not found|(hf|huggingface-cli|python3): command not found"
    r"|No module named '?huggingface_hub|invalid choice: 'download'|No such command 'download'"
)
_NO_SPACE = re.compile(r"No space left on device|Errno 28|ENOSPC|Disk quota exceeded|Errno 122")
_GATED = re.compile(
    r"GatedRepoError|Access denied\.|requires approval|is restricted|Cannot access gated repo"
    r"|401 Client Error|403 Client Error|403 Forbidden|Invalid credentials|Invalid user token"
)
_NOT_FOUND = re.compile(
    r"RepositoryNotFoundError|RevisionNotFoundError|EntryNotFoundError|Repository Not Found"
    r"|(Model|Repository) '[^']+' not found|Revision not found|Invalid rev id|404 Client Error|Entry not found"
)
_THROTTLE = re.compile(THROTTLE)
_NETWORK = re.compile(NETWORK)

# Markers the supervisor writes (command.SUPERVISOR).
_ATTEMPT = re.compile(r"^\[specops-download\] attempt (\d+) of (\d+)$", re.M)
_FINAL = re.compile(r"^\[specops-download\] finished: exit (\d+)$", re.M)


def clean(text: str) -> str:
    """The log as a person reads it: colours gone, progress-bar carriage returns as line breaks."""
    return _ANSI.sub("", text).replace("\r", "\n")


def attempts_started(log: str) -> int:
    return len(_ATTEMPT.findall(log))


def final_exit(log: str) -> int | None:
    """The supervisor's exit status, once it has finished."""
    found = _FINAL.findall(log)
    return int(found[-1]) if found else None


def last_attempt(log: str) -> str:
    """The output of the latest attempt: what decides the cause."""
    starts = [m.start() for m in _ATTEMPT.finditer(log)]
    return log[starts[-1] :] if starts else log


def cause_in(text: str, exit_code: int | None) -> DownloadCause | None:
    """The failure `text` (one attempt's output) shows, most specific first; None when it shows none."""
    if _CLI_UNUSABLE.search(text) or exit_code == 127:
        return DownloadCause.CLI_UNUSABLE
    if _NO_SPACE.search(text):
        return DownloadCause.NO_SPACE
    if _GATED.search(text):
        return DownloadCause.GATED
    if _NOT_FOUND.search(text):
        return DownloadCause.NOT_FOUND
    if _THROTTLE.search(text):
        return DownloadCause.THROTTLED
    if _NETWORK.search(text):
        return DownloadCause.PARTIAL
    return None


def evidence(text: str, cause: DownloadCause) -> str:
    """The log line that shows the cause, for the failure's `what`."""
    pattern = {
        DownloadCause.CLI_UNUSABLE: _CLI_UNUSABLE,
        DownloadCause.NO_SPACE: _NO_SPACE,
        DownloadCause.GATED: _GATED,
        DownloadCause.NOT_FOUND: _NOT_FOUND,
        DownloadCause.THROTTLED: _THROTTLE,
        DownloadCause.PARTIAL: _NETWORK,
    }.get(cause)
    if pattern is None:
        return ""
    for line in text.splitlines():
        if pattern.search(line):
            return line.strip()[:300]
    return ""


REMEDIES: dict[DownloadCause, str] = {
    DownloadCause.CLI_UNUSABLE: (
        "the CLI did not download: use method='hf' (`hf download`, huggingface_hub >= 0.34), or method='library' "
        "(python3 -c 'from huggingface_hub import snapshot_download; ...'), or upgrade huggingface_hub on the host"
    ),
    DownloadCause.NO_SPACE: (
        "free space on the target's filesystem (see the space tool) or choose a target on a mount with room, "
        "then start the download again: files already complete are kept"
    ),
    DownloadCause.GATED: (
        "the repo is gated: request access on the Hub and set a token whose account was granted access "
        "(HF_TOKEN in the environment specops runs in), then start again"
    ),
    DownloadCause.NOT_FOUND: "check the repo id, revision and include patterns; a private repo needs a token that can read it",
    DownloadCause.THROTTLED: "the Hub rate-limited every attempt: wait a few minutes (or use a token) and start again",
    DownloadCause.PARTIAL: (
        "start the download again over the same directory: complete files are kept and only the rest is fetched; "
        "check the host's network if it keeps failing"
    ),
    DownloadCause.KILLED: "the download process died before finishing: start it again over the same directory to resume",
    DownloadCause.UNKNOWN: "read log_tail for the error; fix it and start the download again",
}
