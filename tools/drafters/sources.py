"""Where a model's config comes from: a Hub repo at a revision (only config.json and README.md are fetched, never
the weights) or a directory on the host; and what its weights weigh there."""

from __future__ import annotations

import json
import posixpath
import tempfile
from typing import Any

import httpx
from huggingface_hub import hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from ..context import ToolContext
from ..disk import space_on_disk
from ..errors import ErrorKind, ToolError
from ..hosts import Host, RemoteFileNotFound
from ..hub import HubUnavailable, RepoGated, RepoNotFound, RevisionNotFound, list_repo, transient_hub_error
from ..inputs import HostPath, RepoId, Revision

MODEL_CARD = "README.md"
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")


class ConfigNotFound(ToolError):
    kind = ErrorKind.CONFIG_NOT_FOUND


class ModelSource(BaseModel):
    """Where a model is: a Hub repo (at a revision) or a directory on the host. Exactly one."""

    model_config = ConfigDict(extra="forbid")

    repo_id: RepoId | None = None
    revision: Revision = "main"
    path: HostPath | None = Field(default=None, description="A model directory on the host holding config.json")

    @model_validator(mode="after")
    def _one(self) -> ModelSource:
        if (self.repo_id is None) == (self.path is None):
            raise ValueError("give a repo_id or a path, not both and not neither")
        return self

    def label(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.repo_id else str(self.path)


@retry(
    retry=retry_if_exception(transient_hub_error),
    stop=stop_after_attempt(5),
    wait=wait_exponential(multiplier=0.5, max=8),
    reraise=True,
)
def hub_file(repo_id: str, filename: str, revision: str, endpoint: str, token: SecretStr | None, cache_dir: str) -> str:
    return hf_hub_download(
        repo_id,
        filename,
        revision=revision,
        endpoint=endpoint,
        cache_dir=cache_dir,
        token=token.get_secret_value() if token else False,
    )


def _config_from_hub(repo_id: str, revision: str, endpoint: str, token: SecretStr | None) -> dict[str, Any]:
    try:
        with (
            tempfile.TemporaryDirectory(prefix="specops-config-") as cache_dir,
            open(hub_file(repo_id, "config.json", revision, endpoint, token, cache_dir), encoding="utf-8") as f,
        ):
            config: dict[str, Any] = json.load(f)
            return config
    except GatedRepoError:
        raise RepoGated(
            f"{repo_id} is gated on {endpoint}",
            remedy="set HF_TOKEN to a token granted access, then retry",
            details={"repo_id": repo_id},
        ) from None
    except RepositoryNotFoundError:
        raise RepoNotFound(
            f"{repo_id} does not exist on {endpoint}",
            remedy="check the repo id's spelling and namespace",
            details={"repo_id": repo_id},
        ) from None
    except RevisionNotFoundError:
        raise RevisionNotFound(
            f"{repo_id} has no revision {revision!r}",
            remedy="use a branch, tag or commit the repo has",
            details={"repo_id": repo_id, "revision": revision},
        ) from None
    except EntryNotFoundError:
        raise ConfigNotFound(
            f"{repo_id}@{revision} has no config.json: it is not a transformers model repo",
            remedy="check the repo id; a drafter repo carries config.json beside its weights",
            details={"repo_id": repo_id},
        ) from None
    except (HfHubHTTPError, httpx.TransportError) as exc:
        raise HubUnavailable(
            f"the Hub at {endpoint} did not hand over {repo_id}/config.json: {exc}",
            remedy="wait and retry; check the host's HF_ENDPOINT",
            details={"repo_id": repo_id},
        ) from None
    except ValueError as exc:
        raise ConfigNotFound(
            f"{repo_id}/config.json is not valid JSON: {exc}", remedy="check the repo", details={"repo_id": repo_id}
        ) from None


def _config_from_disk(host: Host, directory: str) -> dict[str, Any]:
    path = posixpath.join(directory, "config.json")
    try:
        config: dict[str, Any] = json.loads(host.read_file(path))
        return config
    except RemoteFileNotFound:
        raise ConfigNotFound(
            f"{path} does not exist on {host.spec}",
            remedy="give the model directory (the one holding config.json), or the Hub repo id",
            details={"path": path},
        ) from None
    except ValueError as exc:
        raise ConfigNotFound(
            f"{path} is not valid JSON: {exc}",
            remedy="the download may be incomplete: re-download it",
            details={"path": path},
        ) from None


def card_from_hub(repo_id: str, revision: str, endpoint: str, token: SecretStr | None) -> tuple[str | None, str | None]:
    """(the model card's text, None), (None, None) when the repo has none, or (None, why it could not be read)."""
    try:
        with (
            tempfile.TemporaryDirectory(prefix="specops-card-") as cache_dir,
            open(
                hub_file(repo_id, MODEL_CARD, revision, endpoint, token, cache_dir), encoding="utf-8", errors="replace"
            ) as f,
        ):
            return f.read(), None
    except EntryNotFoundError:
        return None, None
    except (HfHubHTTPError, httpx.TransportError, OSError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return None, f"the model card ({repo_id}/{MODEL_CARD}) could not be read: {first_line}"


def card_from_disk(host: Host, directory: str) -> str | None:
    try:
        return host.read_file(posixpath.join(directory, MODEL_CARD)).decode("utf-8", errors="replace")
    except RemoteFileNotFound:
        return None


def _weights_on_disk(host: Host, directory: str) -> int | None:
    try:
        index = json.loads(host.read_file(posixpath.join(directory, "model.safetensors.index.json")))
        total = index.get("metadata", {}).get("total_size")
        if isinstance(total, int):
            return total
    except (RemoteFileNotFound, ValueError):
        pass
    taken = space_on_disk(host, directory)
    if not taken:
        return None
    return sum(size for rel, size in taken.items() if rel.endswith(_WEIGHT_SUFFIXES) and "/" not in rel) or None


def _weights_on_hub(repo_id: str, revision: str, endpoint: str, token: SecretStr | None) -> int | None:
    listing = list_repo(repo_id, endpoint=endpoint, revision=revision, token=token)
    return sum(f.size for f in listing.files if f.path.endswith(_WEIGHT_SUFFIXES)) or None


def read_config(ctx: ToolContext, source: ModelSource, endpoint: str) -> tuple[dict[str, Any], int | None]:
    """The model's config.json and the bytes of its weights (None when unknown)."""
    if source.repo_id is not None:
        config = _config_from_hub(source.repo_id, source.revision, endpoint, ctx.hub_token)
        return config, _weights_on_hub(source.repo_id, source.revision, endpoint, ctx.hub_token)
    directory = ctx.resolve(str(source.path))
    return _config_from_disk(ctx.host, directory), _weights_on_disk(ctx.host, directory)
