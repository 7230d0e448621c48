"""Error responses shaped like the real Hub's: a status, X-Error-Code/X-Error-Message, a JSON body.

huggingface_hub's `hf_raise_for_status` picks its exception from these headers
(RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError, GatedRepoError).
"""

from __future__ import annotations

import json

from aiohttp import web

INVALID_CREDENTIALS = "Invalid credentials in Authorization header"


def hub_error(
    status: int, message: str, code: str | None = None, headers: dict[str, str] | None = None
) -> web.Response:
    out = {"X-Error-Message": message, "Content-Type": "application/json; charset=utf-8"}
    if code is not None:
        out["X-Error-Code"] = code
    out.update(headers or {})
    return web.Response(status=status, text=json.dumps({"error": message}), headers=out)


def repo_not_found(authenticated: bool) -> web.Response:
    # The real Hub answers 401 to anonymous callers (it cannot tell a private repo
    # from a missing one) and 404 to authenticated ones; both carry RepoNotFound.
    return hub_error(404 if authenticated else 401, "Repository not found", "RepoNotFound")


def revision_not_found(revision: str) -> web.Response:
    return hub_error(404, f"Invalid rev id: {revision}", "RevisionNotFound")


def entry_not_found(path: str) -> web.Response:
    return hub_error(404, f"Entry not found: {path}", "EntryNotFound")


def gated_anonymous(repo_id: str, repo_type: str = "model") -> web.Response:
    return hub_error(
        401,
        f"Access to {repo_type} {repo_id} is restricted. You must have access to it and be authenticated to access it. "
        "Please log in.",
        "GatedRepo",
    )


def gated_not_granted(repo_id: str, repo_type: str = "model") -> web.Response:
    page = f"datasets/{repo_id}" if repo_type == "dataset" else repo_id
    return hub_error(
        403,
        f"Access to {repo_type} {repo_id} is restricted and you are not in the authorized list. "
        f"Visit https://huggingface.co/{page} to ask for access.",
        "GatedRepo",
    )


def bad_request(message: str) -> web.Response:
    """A query the Hub cannot read (an unknown sort key, a limit that is no number): 400, no error code."""
    return hub_error(400, message)


def invalid_credentials() -> web.Response:
    return hub_error(401, INVALID_CREDENTIALS)


def too_many_requests(retry_after_s: int) -> web.Response:
    return hub_error(
        429,
        "You have been rate-limited; you can retry this action in a few moments.",
        headers={"Retry-After": str(retry_after_s)},
    )
