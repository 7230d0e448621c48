"""What the Hub will deliver for each file: its HEAD size, the bytes that will land on disk.

The listing declares sizes; HEAD of /resolve/ says what the body holds
(X-Linked-Size for LFS files, Content-Length otherwise). They agree on the
real Hub; a simulated Hub serves 1/byte_scale of each large file. Progress and
verification compare the disk with these. A gated repo refuses HEAD without a
granted token even though it lists fine, while the host may still download it
with its own login; then the listed sizes stand in (sizes_source "listing").
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
from huggingface_hub import get_hf_file_metadata, hf_hub_url
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError
from pydantic import SecretStr
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from ..hub import HubUnavailable, RepoListing, RepoNotFound, transient_hub_error
from .models import ExpectedFile

_PARALLEL_HEADS = 8


def _refused(exc: HfHubHTTPError) -> bool:
    return exc.response is not None and exc.response.status_code in (401, 403)


def _listed(listing: RepoListing) -> list[ExpectedFile]:
    return [ExpectedFile(path=f.path, listed_bytes=f.size, stored_bytes=f.size) for f in listing.files]


def _unavailable(listing: RepoListing, attempts: int, exc: Exception) -> HubUnavailable:
    return HubUnavailable(
        f"the Hub at {listing.endpoint} did not answer HEAD for {listing.repo_id}'s files after {attempts} tries: {exc}",
        remedy="wait and retry; check the network and HF_ENDPOINT",
        details={"repo_id": listing.repo_id, "endpoint": listing.endpoint},
    )


def expected_files(
    listing: RepoListing, *, token: SecretStr | None, attempts: int = 5
) -> tuple[list[ExpectedFile], str]:
    """(files with listed and stored sizes, sizes_source). Raises RepoNotFound, HubUnavailable."""
    secret = token.get_secret_value() if token is not None else False

    @retry(
        retry=retry_if_exception(transient_hub_error),
        stop=stop_after_attempt(attempts),
        wait=wait_exponential(multiplier=0.5, max=8),
        reraise=True,
    )
    def head(path: str) -> int | None:
        url = hf_hub_url(listing.repo_id, path, revision=listing.sha, endpoint=listing.endpoint)
        return get_hf_file_metadata(url, token=secret, endpoint=listing.endpoint).size

    try:
        with ThreadPoolExecutor(_PARALLEL_HEADS) as pool:
            sizes = list(pool.map(head, [f.path for f in listing.files]))
    except GatedRepoError:
        return _listed(listing), "listing"
    except RepositoryNotFoundError:
        raise RepoNotFound(
            f"{listing.repo_id} lists on {listing.endpoint} but its files cannot be read",
            remedy="check the repo id and the token's permissions",
            details={"repo_id": listing.repo_id},
        ) from None
    except HfHubHTTPError as exc:
        if _refused(exc):
            return _listed(listing), "listing"
        raise _unavailable(listing, attempts, exc) from None
    except httpx.TransportError as exc:
        raise _unavailable(listing, attempts, exc) from None
    files = [
        ExpectedFile(path=f.path, listed_bytes=f.size, stored_bytes=size if size is not None else f.size)
        for f, size in zip(listing.files, sizes, strict=True)
    ]
    return files, "head"
