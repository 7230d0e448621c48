"""What a repo on the Hugging Face Hub holds, asked before anything is downloaded.

The agent's side talks to the Hub API (huggingface_hub's HfApi) for listings
and sizes; the host does the downloading. Both must see the same Hub, so the
endpoint is the one the host uses (its HF_ENDPOINT; a simulated host points
at its Hub emulator). 429 and 5xx answers are retried here with backoff; a
missing, gated or unknown repo is a typed error saying what to do.

This machine's Hub token is found as huggingface_hub finds it (`local_hub_token`):
HF_TOKEN, else the token file (HF_TOKEN_PATH, else $HF_HOME/token, by default
~/.cache/huggingface/token, where `hf auth login` writes it). It is a SecretStr:
nothing here prints it.
"""

from __future__ import annotations

import fnmatch
import os

import httpx
from huggingface_hub import HfApi, ModelInfo, constants, get_token
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from .errors import ErrorKind, HostCommandFailed, ToolError
from .hosts import Host

DEFAULT_ENDPOINT = "https://huggingface.co"


class RepoNotFound(ToolError):
    kind = ErrorKind.REPO_NOT_FOUND


class RepoGated(ToolError):
    kind = ErrorKind.REPO_GATED


class RevisionNotFound(ToolError):
    kind = ErrorKind.REVISION_NOT_FOUND


class HubUnavailable(ToolError):
    kind = ErrorKind.HUB_UNAVAILABLE


class RepoFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    size: int = Field(description="Bytes, as the Hub lists them")


class RepoListing(BaseModel):
    """A revision's files with their sizes: what a download will bring."""

    model_config = ConfigDict(frozen=True)

    repo_id: str
    revision: str = Field(description="The revision asked for (branch, tag or hash)")
    sha: str = Field(description="The commit it resolved to")
    files: list[RepoFile]
    gated: bool = False
    endpoint: str

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def selected(self, include: list[str] | None = None, exclude: list[str] | None = None) -> RepoListing:
        """The files `hf download --include/--exclude` would fetch."""
        files = [
            f
            for f in self.files
            if (not include or any(fnmatch.fnmatch(f.path, p) for p in include))
            and not any(fnmatch.fnmatch(f.path, p) for p in exclude or [])
        ]
        return self.model_copy(update={"files": files})


class HubTokenUnreadable(ToolError):
    """The Hub token file exists but cannot be read: a token the user saved would be silently left out."""


def local_hub_token() -> SecretStr | None:
    """This machine's Hub token, from huggingface_hub's own lookup (get_token); None when there is none.

    Raises HubTokenUnreadable when the token file is there but cannot be read (permissions, a directory).
    """
    try:
        token = get_token()
    except OSError as exc:
        raise HubTokenUnreadable(
            f"cannot read the Hub token file {constants.HF_TOKEN_PATH}: {exc.strerror or type(exc).__name__}",
            remedy="make it readable by this user (chmod 600), or set HF_TOKEN instead",
            details={"path": constants.HF_TOKEN_PATH},
        ) from None
    return SecretStr(token) if token else None


def local_hub_token_source() -> str | None:
    """Where local_hub_token() finds the token, as a user would look for it (never the token); None for none.

    The order is get_token's: OIDC (HF_OIDC_RESOURCE), HF_TOKEN, HUGGING_FACE_HUB_TOKEN, the token file.
    """
    if local_hub_token() is None:
        return None
    if os.environ.get("HF_OIDC_RESOURCE"):
        return "HF_OIDC_RESOURCE (an OIDC token)"
    named = "HF_TOKEN" if os.environ.get("HF_TOKEN") else "HUGGING_FACE_HUB_TOKEN"
    if (os.environ.get(named) or "").strip():
        return named
    return f"the token file {constants.HF_TOKEN_PATH}"


def host_hub_endpoint(host: Host) -> str:
    """The Hub the host downloads from: its HF_ENDPOINT, else huggingface.co. A host that could not be asked is an
    error, never the public Hub by default (its mirror would be silently bypassed)."""
    done = host.run(["sh", "-c", 'printf %s "${HF_ENDPOINT:-}"'], timeout=30, idempotent=True)
    if not done.ok:
        said = (done.stderr or done.stdout).strip()[-300:] or "nothing"
        raise HostCommandFailed(
            f"could not read HF_ENDPOINT on {host.spec}: the shell exited {done.exit_code} and said {said}",
            remedy="check that the host runs commands (host_facts), then try again",
            details={"exit_code": done.exit_code, "timed_out": done.timed_out},
        )
    return done.stdout.strip() or DEFAULT_ENDPOINT


def transient_hub_error(exc: BaseException) -> bool:
    """Whether a Hub call's failure is worth retrying: a 429, a 5xx, or a connection that failed."""
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


def list_repo(
    repo_id: str, *, endpoint: str, revision: str = "main", token: SecretStr | None = None, attempts: int = 5
) -> RepoListing:
    """The files and sizes of `repo_id` at `revision`. Raises RepoNotFound, RepoGated, RevisionNotFound, HubUnavailable."""
    api = HfApi(endpoint=endpoint, token=token.get_secret_value() if token else False)

    @retry(
        retry=retry_if_exception(transient_hub_error),
        stop=stop_after_attempt(attempts),
        wait=wait_exponential(multiplier=0.5, max=8),
        reraise=True,
    )
    def fetch() -> ModelInfo:
        return api.model_info(repo_id, revision=revision, files_metadata=True)

    try:
        info = fetch()
    except GatedRepoError:
        raise RepoGated(
            f"{repo_id} is gated on {endpoint}: it needs a token with access granted",
            remedy="set HF_TOKEN, in the environment specops runs in, to a token whose account was granted access, then retry",
            details={"repo_id": repo_id},
        ) from None
    except RepositoryNotFoundError:
        raise RepoNotFound(
            f"{repo_id} does not exist on {endpoint} (or is private to another account)",
            remedy="check the repo id's spelling and namespace; for a private repo set a token that can read it",
            details={"repo_id": repo_id},
        ) from None
    except RevisionNotFoundError:
        raise RevisionNotFound(
            f"{repo_id} has no revision {revision!r}",
            remedy="use a branch, tag or commit the repo has (main by default)",
            details={"repo_id": repo_id, "revision": revision},
        ) from None
    except (HfHubHTTPError, httpx.TransportError) as exc:
        raise HubUnavailable(
            f"the Hub at {endpoint} did not answer for {repo_id} after {attempts} tries: {exc}",
            remedy="wait and retry; check the host's network and HF_ENDPOINT",
            details={"repo_id": repo_id, "endpoint": endpoint},
        ) from None
    files = [RepoFile(path=s.rfilename, size=s.size or 0) for s in info.siblings or []]
    return RepoListing(
        repo_id=repo_id, revision=revision, sha=info.sha or "", files=files, gated=bool(info.gated), endpoint=endpoint
    )
