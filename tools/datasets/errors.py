"""Why a standard dataset did not load on the host, typed, and how a download's output says which.

Every failure names the way out the caller has in any case: measure on the
shipped prompt sets (specops.prompts.acceptance), the offline fallback.
"""

from __future__ import annotations

import re

from ..download.causes import cause_in, clean
from ..download.models import DownloadCause
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


# How a download's output reads (the `hf` CLI's one-line errors, the library's exceptions, 0.x to 2.x) is the
# download tool's knowledge (tools/download/causes.py); a dataset adds only the ways a host fails to reach the Hub
# at all (no name resolution, offline mode, a proxy or TLS failure) and a refused token.
_UNREACHABLE = re.compile(
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname|Network is unreachable"
    r"|No route to host|Local entry not found|LocalEntryNotFoundError|offline mode|HF_HUB_OFFLINE|ProxyError"
    r"|SSLError|CERTIFICATE_VERIFY_FAILED"
)
_BAD_TOKEN = re.compile(r"Invalid credentials|Invalid user token|401 Client Error: Unauthorized for url: \S+/whoami")
# Unlike a model download (causes.py), a 401 on a dataset the catalog names is read as "not found": the datasets
# are public, and the Hub answers 401 for a repo that does not exist to a caller without a token.
_GATED = re.compile(
    r"GatedRepoError|requires approval|is restricted|Cannot access gated repo|403 Forbidden|403 Client Error"
)
_NOT_FOUND = re.compile(
    r"RepositoryNotFoundError|RevisionNotFoundError|EntryNotFoundError|Repository Not Found|Entry not found"
    r"|(Dataset|Repository) '[^']+' not found|(File|Revision) not found in (dataset|repository)"
    r"|Revision not found|Invalid rev id|404 Client Error|401 Client Error"
)


def last_error_line(text: str) -> str:
    """The line a person reads first: the CLI's `Error: ...`, else the last non-empty line."""
    lines = [line.strip() for line in clean(text).splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith("Error:") or re.match(r"^\w+(Error|Exception):", line):
            return line
    return lines[-1] if lines else ""


def cli_unusable(output: str, exit_code: int | None) -> bool:
    """The download command is not there or does not download (help text, a stub, no such program)."""
    return cause_in(clean(output), exit_code) is DownloadCause.CLI_UNUSABLE


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
    if _UNREACHABLE.search(text) or cause_in(text, exit_code) in (DownloadCause.PARTIAL, DownloadCause.THROTTLED):
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
