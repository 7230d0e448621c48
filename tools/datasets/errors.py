"""Why a standard dataset did not load on the host, typed, and how a download's output says which.

Every failure names the way out the caller has in any case: measure on the
shipped prompt sets (specops.prompts.acceptance), the offline fallback.
"""

from __future__ import annotations

import re

from ..errors import ErrorKind, ToolError

OFFLINE_FALLBACK = "or measure on the shipped prompt sets (math, code, chat: the offline fallback)"


class DatasetError(ToolError):
    """A standard dataset could not be fetched or read on the host."""

    kind = ErrorKind.DATASET_UNAVAILABLE


class DatasetNotFound(DatasetError):
    """The Hub has no such dataset repo, revision or file (or hides a private one)."""

    kind = ErrorKind.REPO_NOT_FOUND


class DatasetGated(DatasetError):
    """The dataset repo asks for approval or a token the host does not have."""

    kind = ErrorKind.REPO_GATED


class DatasetHubUnreachable(DatasetError):
    """The host could not reach the Hub (no network, a proxy, HF_HUB_OFFLINE, an endpoint that is down)."""

    kind = ErrorKind.HUB_UNAVAILABLE


class DatasetUnreadable(DatasetError):
    """The file arrived but could not be read: pyarrow missing, columns missing, not the format expected."""

    kind = ErrorKind.DATASET_UNREADABLE


class DatasetsIncomplete(DatasetError):
    """Some of the datasets asked for did not load (raised on request: StandardPrompts.raise_for_failures)."""


# What huggingface_hub prints (the `hf` CLI's one-line errors, the library's exception names), 0.x to 2.x.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_UNREACHABLE = re.compile(
    r"Connection refused|ConnectError|ConnectTimeout|Name or service not known|Temporary failure in name resolution"
    r"|nodename nor servname|Network is unreachable|No route to host|Local entry not found|LocalEntryNotFoundError"
    r"|offline mode|HF_HUB_OFFLINE|Max retries exceeded|ProxyError|SSLError|CERTIFICATE_VERIFY_FAILED"
    r"|5[0-9][0-9] Server Error|Bad Gateway|Service Unavailable|Gateway Timeout"
)
_GATED = re.compile(
    r"GatedRepoError|requires approval|is restricted|Cannot access gated repo|403 Forbidden|403 Client Error"
)
_BAD_TOKEN = re.compile(r"Invalid credentials|Invalid user token|401 Client Error: Unauthorized for url: \S+/whoami")
_NOT_FOUND = re.compile(
    r"RepositoryNotFoundError|RevisionNotFoundError|EntryNotFoundError|Repository Not Found|Entry not found"
    r"|(Dataset|Repository|Model) '[^']+' not found|(File|Revision) not found in (dataset|repository)"
    r"|Revision not found|Invalid rev id|404 Client Error|401 Client Error"
)
_CLI_UNUSABLE = re.compile(
    r"Usage: (hf|huggingface-cli)\b|Main commands:|no longer works|(hf|huggingface-cli|python3): not found"
    r"|(hf|huggingface-cli|python3): command not found|No such command 'download'|No module named '?huggingface_hub"
)


def clean(text: str) -> str:
    return _ANSI.sub("", text).replace("\r", "\n")


def last_error_line(text: str) -> str:
    """The line a person reads first: the CLI's `Error: ...`, else the last non-empty line."""
    lines = [line.strip() for line in clean(text).splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("Error:") or re.match(r"^\w+(Error|Exception):", line):
            return line
    return lines[-1] if lines else ""


def cli_unusable(output: str, exit_code: int | None) -> bool:
    """The download command is not there or does not download (help text, a stub, no such program)."""
    return exit_code == 127 or bool(_CLI_UNUSABLE.search(clean(output)))


def download_error(
    name: str, repo_id: str, path: str, output: str, exit_code: int | None, timed_out: bool, timeout_s: float
) -> DatasetError:
    """The typed error a failed download shows, with the evidence in details."""
    text = clean(output)
    evidence = last_error_line(text)
    details = {"dataset": name, "repo_id": repo_id, "path": path, "exit_code": exit_code, "output_tail": text[-1500:]}
    what = f"{name}: downloading {repo_id}/{path} on the host failed"
    if timed_out:
        return DatasetError(
            f"{name}: the download of {repo_id}/{path} did not finish within {timeout_s:.0f} s",
            remedy=f"raise timeout_s or check the host's link to the Hub, {OFFLINE_FALLBACK}",
            details=details,
        )
    if _GATED.search(text):
        return DatasetGated(
            f"{what}: the repo is gated ({evidence})",
            remedy=f"accept its terms on the Hub and give the run a token that has access, {OFFLINE_FALLBACK}",
            details=details,
        )
    if _BAD_TOKEN.search(text):
        return DatasetGated(
            f"{what}: the Hub refused the token ({evidence})",
            remedy=f"check the Hub token the run uses (or run without one: these datasets are public), {OFFLINE_FALLBACK}",
            details=details,
        )
    if _UNREACHABLE.search(text):
        return DatasetHubUnreachable(
            f"{what}: the Hub does not answer the host ({evidence})",
            remedy=f"check the host's network, proxy and HF_ENDPOINT (and that HF_HUB_OFFLINE is unset), {OFFLINE_FALLBACK}",
            details=details,
        )
    if _NOT_FOUND.search(text):
        return DatasetNotFound(
            f"{what}: not found on the Hub ({evidence})",
            remedy=f"check that the Hub the host uses (HF_ENDPOINT) serves {repo_id} with {path}, {OFFLINE_FALLBACK}",
            details=details,
        )
    return DatasetError(
        f"{what} (exit {exit_code}: {evidence or 'no output'})",
        remedy=f"read the output in details and retry, {OFFLINE_FALLBACK}",
        details=details,
    )
