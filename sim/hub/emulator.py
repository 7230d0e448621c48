"""The Hub emulator: an aiohttp server speaking the part of the Hub API huggingface_hub uses.

Endpoints, for models and, under the Hub's dataset routes, for datasets (no spaces):
- GET  /api/models                                 model search: search, author, filter, sort, pages (search.py)
- GET  /api/models/{org}/{name}[/revision/{rev}]   model info (`blobs=true`: sizes and hashes)
- GET  /api/models/{org}/{name}/tree/{rev}[/{path}] tree listing, `recursive`, `expand`, cursor pages
- POST /api/models/{org}/{name}/paths-info/{rev}   entries for given paths
- GET  /api/models/{org}/{name}/refs               branches
- HEAD/GET /{org}/{name}/resolve/{rev}/{path}      file metadata / bytes, Range supported
- the same under /api/datasets/{org}/{name}/... (dataset info, tree, paths-info, refs)
  and HEAD/GET /datasets/{org}/{name}/resolve/{rev}/{path}
- GET  /api/whoami-v2                              token check
Model repos and dataset repos are two namespaces, as on the Hub: the emulator
serves `fixtures` (model repos) on the model routes and `datasets` (dataset repos,
by default the shipped ones: fixtures.load_dataset_fixtures) on the dataset routes.
Tokens follow the rule in tokens.py. Faults (specops.sim.faults) are applied here;
their counters (requests throttled, downloads cut) live as long as the emulator.
GatedRepo and MissingRepo name a repo id and apply in both namespaces; DatasetsMissing
applies to dataset repos only.
"""

from __future__ import annotations

import asyncio
import base64
import math
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from pydantic import BaseModel

from ..fault_names import FaultName
from ..faults import (
    DatasetsMissing,
    DownloadCut,
    Fault,
    GatedRepo,
    HubThrottle,
    MissingRepo,
    SlowDownload,
    find_fault,
)
from . import errors, listing, search
from .bandwidth import SharedLink, stored_bytes_per_second
from .fixtures import FixtureRepo, FixtureRevision, GatedMode, RepoType, load_dataset_fixtures
from .tokens import Caller, bearer_token, classify, user_name
from .transfer import send_file

PAGE_SIZE = 1000  # entries per tree page, as the Hub caps them
PAGE_SIZE_EXPANDED = 50
SEARCH_PAGE_SIZE = 1000  # models per search page, as the Hub caps them (smaller when `limit` is)
SHUTDOWN_GRACE_S = 1.0  # how long stopping waits for requests in flight before it cuts them


class HubRequest(BaseModel):
    """One request the emulator answered, for tests and evals to inspect."""

    method: str
    path: str
    query: str
    status: int
    range: str | None = None
    authenticated: bool
    at: datetime


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
RepoHandler = Callable[[web.Request, RepoType], Awaitable[web.StreamResponse]]


class HubEmulator:
    def __init__(
        self,
        fixtures: dict[str, FixtureRepo],
        *,
        datasets: dict[str, FixtureRepo] | None = None,
        faults: Iterable[Fault] = (),
        byte_scale: int = 1024,
        time_scale: float = 1.0,
        download_mb_s: float = 1000.0,
    ) -> None:
        self.fixtures = fixtures
        self.datasets = load_dataset_fixtures() if datasets is None else datasets
        self.faults: list[Fault] = list(faults)
        self.byte_scale = byte_scale
        self.time_scale = time_scale
        slow = find_fault(self.faults, FaultName.SLOW_DOWNLOAD)
        self.download_mb_s = slow.mb_s if isinstance(slow, SlowDownload) else download_mb_s
        self.link = SharedLink(stored_bytes_per_second(self.download_mb_s, time_scale, byte_scale))
        self.requests: list[HubRequest] = []
        self.search_page_size = SEARCH_PAGE_SIZE  # tests lower it to see a search span pages
        self.throttled = 0
        self.cuts = 0
        self._runner: web.AppRunner | None = None
        self.url: str | None = None

    # ------------------------------------------------------------------ running

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on host:port (0: any free port); returns the base URL (what HF_ENDPOINT takes)."""
        if self._runner is not None:
            raise RuntimeError("the emulator is already running")
        # Stopping cuts the downloads still streaming after a moment, as a Hub that goes away does (aiohttp's default
        # waits 60 s for them, past the thread's stop timeout: a world closed mid-download failed to close).
        self._runner = web.AppRunner(
            self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=SHUTDOWN_GRACE_S
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        bound_host, bound_port = self._runner.addresses[0][:2]
        self.url = f"http://{bound_host}:{bound_port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._log_and_throttle])
        repo = "/{org}/{name}"
        routes = [web.get("/api/whoami-v2", self._whoami), web.get("/api/models", self._search_models)]
        namespaces: tuple[tuple[RepoType, str, str], ...] = (
            ("dataset", "/api/datasets", "/datasets"),
            ("model", "/api/models", ""),
        )
        for repo_type, api, files in namespaces:
            routes += [
                web.get(f"{api}{repo}", self._typed(repo_type, self._repo_info)),
                web.get(f"{api}{repo}/revision/{{rev}}", self._typed(repo_type, self._repo_info)),
                web.get(f"{api}{repo}/tree/{{rev}}", self._typed(repo_type, self._tree)),
                web.get(f"{api}{repo}/tree/{{rev}}/{{path:.+}}", self._typed(repo_type, self._tree)),
                web.post(f"{api}{repo}/paths-info/{{rev}}", self._typed(repo_type, self._paths_info)),
                web.get(f"{api}{repo}/refs", self._typed(repo_type, self._refs)),
                # A HEAD route is added with each GET route by aiohttp.
                web.get(f"{files}{repo}/resolve/{{rev}}/{{path:.+}}", self._typed(repo_type, self._resolve)),
                web.get(f"{api}/{{name}}", self._single_name_repo),
            ]
        app.add_routes(routes)
        return app

    @staticmethod
    def _typed(repo_type: RepoType, handler: RepoHandler) -> Handler:
        """`handler` for the routes of one namespace (model or dataset repos)."""

        async def typed(request: web.Request) -> web.StreamResponse:
            return await handler(request, repo_type)

        return typed

    # ------------------------------------------------------------------ middleware

    @web.middleware
    async def _log_and_throttle(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        throttle = find_fault(self.faults, FaultName.HUB_THROTTLE)
        response: web.StreamResponse
        if isinstance(throttle, HubThrottle) and self.throttled < throttle.requests:
            self.throttled += 1
            response = errors.too_many_requests(math.ceil(throttle.retry_after_s))
        else:
            try:
                response = await handler(request)
            except web.HTTPException as exc:  # aiohttp's own answers (no such route, wrong method)
                self._record(request, exc.status)
                raise
            except asyncio.CancelledError:
                self._record(request, 499)  # the client went away mid-answer (nginx's code for it)
                raise
        self._record(request, response.status)
        return response

    def _record(self, request: web.Request, status: int) -> None:
        self.requests.append(
            HubRequest(
                method=request.method,
                path=request.path,
                query=request.query_string,
                status=status,
                range=request.headers.get("Range"),
                authenticated=bearer_token(request.headers.get("Authorization")) is not None,
                at=datetime.now(UTC),
            )
        )

    # ------------------------------------------------------------------ lookups

    def _caller(self, request: web.Request) -> Caller:
        return classify(bearer_token(request.headers.get("Authorization")))

    def _is_gated(self, repo: FixtureRepo) -> bool:
        return bool(self._gated_mode(repo))

    def _gated_mode(self, repo: FixtureRepo) -> GatedMode:
        """The repo's own gating, else "manual" where a GatedRepo fault gates it (approval the caller lacks)."""
        if repo.gated_mode:
            return repo.gated_mode
        return "manual" if any(isinstance(f, GatedRepo) and f.repo_id == repo.repo_id for f in self.faults) else False

    def _is_missing(self, repo_id: str, repo_type: RepoType) -> bool:
        return any(
            (isinstance(f, MissingRepo) and f.repo_id == repo_id)
            or (isinstance(f, DatasetsMissing) and repo_type == "dataset" and f.covers(repo_id))
            for f in self.faults
        )

    def _find(self, request: web.Request, repo_type: RepoType) -> tuple[FixtureRepo, FixtureRevision] | web.Response:
        """The repo and revision a request names, or the error the Hub answers."""
        caller = self._caller(request)
        if caller is Caller.INVALID:
            return errors.invalid_credentials()
        repo_id = f"{request.match_info['org']}/{request.match_info['name']}"
        repos = self.datasets if repo_type == "dataset" else self.fixtures
        repo = repos.get(repo_id)
        if repo is None or self._is_missing(repo_id, repo_type):
            return errors.repo_not_found(authenticated=caller is not Caller.ANONYMOUS)
        rev = request.match_info.get("rev")
        try:
            return repo, repo.revision(rev)
        except KeyError:
            return errors.revision_not_found(rev or "main")

    # ------------------------------------------------------------------ handlers

    async def _whoami(self, request: web.Request) -> web.Response:
        token = bearer_token(request.headers.get("Authorization"))
        caller = classify(token)
        if token is None or caller is Caller.INVALID:
            return errors.invalid_credentials()
        name = user_name(token)
        return web.json_response(
            {
                "type": "user",
                "id": name,
                "name": name,
                "fullname": "Simulated User",
                "isPro": False,
                "orgs": [],
                "auth": {"type": "access_token", "accessToken": {"displayName": "specops-sim", "role": "read"}},
            }
        )

    async def _single_name_repo(self, request: web.Request) -> web.Response:
        # Canonical one-part names (gpt2) exist on the real Hub; none among the fixtures.
        return errors.repo_not_found(authenticated=self._caller(request) is not Caller.ANONYMOUS)

    async def _repo_info(self, request: web.Request, repo_type: RepoType) -> web.Response:
        found = self._find(request, repo_type)
        if isinstance(found, web.Response):
            return found
        repo, revision = found
        blobs = request.query.get("blobs", "").lower() in ("1", "true")
        info = await asyncio.to_thread(
            listing.dataset_info if repo.repo_type == "dataset" else listing.model_info,
            repo,
            revision,
            gated=self._gated_mode(repo),
            files_metadata=blobs,
            byte_scale=self.byte_scale,
        )
        return web.json_response(info)

    async def _refs(self, request: web.Request, repo_type: RepoType) -> web.Response:
        found = self._find(request, repo_type)
        if isinstance(found, web.Response):
            return found
        repo, _ = found
        branches = [
            {"name": ref, "ref": f"refs/heads/{ref}", "targetCommit": r.sha} for r in repo.revisions for ref in r.refs
        ]
        return web.json_response({"branches": branches, "converts": [], "tags": []})

    async def _tree(self, request: web.Request, repo_type: RepoType) -> web.Response:
        found = self._find(request, repo_type)
        if isinstance(found, web.Response):
            return found
        _, revision = found
        path = request.match_info.get("path", "").strip("/")
        expand = _flag(request.query.get("expand"))
        entries = await asyncio.to_thread(
            listing.tree_entries,
            revision,
            path,
            recursive=_flag(request.query.get("recursive")),
            expand=expand,
            byte_scale=self.byte_scale,
        )
        if entries is None:
            return errors.entry_not_found(path)
        page, headers = _page(request, entries, PAGE_SIZE_EXPANDED if expand else PAGE_SIZE)
        return web.json_response(page, headers=headers)

    async def _search_models(self, request: web.Request) -> web.Response:
        """GET /api/models: the model repos a search lists (dataset repos never), a page at a time."""
        if self._caller(request) is Caller.INVALID:
            return errors.invalid_credentials()
        try:
            query = search.ModelQuery.from_params(request.query)
        except ValueError as exc:
            return errors.bad_request(str(exc))
        candidates = [
            search.Listed(repo, self._gated_mode(repo))
            for repo in self.fixtures.values()
            if not self._is_missing(repo.repo_id, "model")
        ]
        found = search.matching(candidates, query)
        page, headers = _page(request, found, min(query.limit or self.search_page_size, self.search_page_size))
        items = await asyncio.to_thread(lambda: [search.list_item(listed, query) for listed in page])
        return web.json_response(items, headers=headers)

    async def _paths_info(self, request: web.Request, repo_type: RepoType) -> web.Response:
        found = self._find(request, repo_type)
        if isinstance(found, web.Response):
            return found
        _, revision = found
        form = await request.post()
        paths = [str(p) for p in form.getall("paths", [])]
        expand = _flag(str(form.get("expand", "")))
        entries = await asyncio.to_thread(
            listing.paths_info, revision, paths, expand=expand, byte_scale=self.byte_scale
        )
        return web.json_response(entries)

    async def _resolve(self, request: web.Request, repo_type: RepoType) -> web.StreamResponse:
        found = self._find(request, repo_type)
        if isinstance(found, web.Response):
            return found
        repo, revision = found
        caller = self._caller(request)
        if self._is_gated(repo):
            if caller is Caller.ANONYMOUS:
                return errors.gated_anonymous(repo.repo_id, repo.repo_type)
            if caller is not Caller.GRANTED_USER:
                return errors.gated_not_granted(repo.repo_id, repo.repo_type)
        path = request.match_info["path"]
        try:
            f = revision.file(path)
        except KeyError:
            return errors.entry_not_found(path)
        if f.is_lfs:
            await asyncio.to_thread(f.sha256, self.byte_scale)  # hashing a large file must not stall the loop
        return await send_file(
            request,
            f,
            revision,
            byte_scale=self.byte_scale,
            link=self.link,
            # Cuts are for generated weight files: a dataset's small parquet never uses one up.
            cut_after_fraction=self._claim_cut(request, f.is_lfs and f.content is None),
        )

    def _claim_cut(self, request: web.Request, is_lfs: bool) -> float | None:
        """The fraction after which this body is cut, if a DownloadCut is still due."""
        cut = find_fault(self.faults, FaultName.DOWNLOAD_CUT)
        if not isinstance(cut, DownloadCut) or request.method != "GET" or not is_lfs or self.cuts >= cut.times:
            return None
        self.cuts += 1
        return cut.after_fraction

    # ------------------------------------------------------------------ for tests and evals

    def requests_to(self, fragment: str) -> list[HubRequest]:
        return [r for r in self.requests if fragment in r.path]

    def snapshot(self) -> dict[str, Any]:
        return {"throttled": self.throttled, "cuts": self.cuts, "requests": len(self.requests)}


def _page(request: web.Request, entries: list[Any], page_size: int) -> tuple[list[Any], dict[str, str]]:
    """The page of `entries` the request's cursor points at, and the Link header to the next one if any.

    The next URL repeats the request's query with a new cursor, which is how huggingface_hub's
    paginate() follows it (it sends no parameters of its own after the first page).
    """
    offset = _decode_cursor(request.query.get("cursor"))
    headers = {}
    if offset + page_size < len(entries):
        next_url = request.url.update_query({"cursor": _encode_cursor(offset + page_size)})
        headers["Link"] = f'<{next_url}>; rel="next"'
    return entries[offset : offset + page_size], headers


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _decode_cursor(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        kind, _, value = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        return int(value) if kind == "offset" else 0
    except (ValueError, UnicodeDecodeError):
        return 0
