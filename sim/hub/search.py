"""Model search, GET /api/models: which model repos a query lists, in what order, in what shape.

This is what huggingface_hub's `HfApi.list_models` sends and reads (its `paginate` follows
the Link header the emulator adds). The Hub's semantics, as far as a search for drafters
meets them:
- `search`: a case-insensitive substring of the repo id ("org/name"). Nothing is normalized,
  so "Qwen3-8B" does not find "qwen3_8b": a searcher that trusts one spelling misses repos,
  as on the Hub; tags (`filter`) are the reliable link from a drafter to its target.
- `author`: the org or user, exactly (case aside).
- `filter` (repeatable): every value must be one of the repo's tags (AND).
- `pipeline_tag`: exactly; `gated`: true lists gated repos only, false open ones only.
- `sort`: downloads, likes, lastModified, createdAt or trendingScore, always descending, as the
  Hub sorts lists (a `direction` parameter is not read); without one, the Hub's default order: trending, then downloads.
  Ties fall back to downloads, then to the repo id, so that pages are stable.
- what an item holds: the Hub's summary; `full` adds sha and siblings, `cardData` the card's
  front matter, `config` the config summary; `expand` asks for named properties only.
A repo the world's faults make missing is not listed; a gated one is, with its `gated` mode,
as the Hub lists gated repos (their files are what need access).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from . import listing
from .fixtures import FixtureRepo, GatedMode

# Sort keys the Hub takes (the client turns its snake_case names into these).
SORT_KEYS = ("downloads", "likes", "lastModified", "createdAt", "trendingScore")
_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")


@dataclass(frozen=True)
class Listed:
    """One repo a search may list, with its gated mode as the world's faults leave it."""

    repo: FixtureRepo
    gated: GatedMode


class ModelQuery(BaseModel):
    """The parameters of one GET /api/models, read from its query string."""

    model_config = ConfigDict(frozen=True)

    search: str | None = None
    author: str | None = None
    filters: tuple[str, ...] = ()
    pipeline_tag: str | None = None
    gated: bool | None = None
    sort: str | None = None
    limit: int | None = None
    full: bool = False
    card_data: bool = False
    config: bool = False
    expand: tuple[str, ...] = ()

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> ModelQuery:
        """Read a query string (a MultiDict: `filter` and `expand` repeat). ValueError: a bad value (400)."""
        sort = params.get("sort") or None
        if sort is not None and sort not in SORT_KEYS:
            raise ValueError(f"Invalid sort parameter {sort!r}: expected one of {', '.join(SORT_KEYS)}")
        return cls(
            search=params.get("search") or None,
            author=params.get("author") or None,
            filters=_all(params, "filter"),
            pipeline_tag=params.get("pipeline_tag") or None,
            gated=_optional_flag(params.get("gated"), "gated"),
            sort=sort,
            limit=_limit(params.get("limit")),
            full=bool(_optional_flag(params.get("full"), "full")),
            card_data=bool(_optional_flag(params.get("cardData"), "cardData")),
            config=bool(_optional_flag(params.get("config"), "config")),
            expand=_all(params, "expand"),
        )


def matching(candidates: Iterable[Listed], query: ModelQuery) -> list[Listed]:
    """The repos `query` lists, in the order the Hub gives them."""
    found = [c for c in candidates if _matches(c, query)]
    return sorted(found, key=_order(query.sort))


def list_item(listed: Listed, query: ModelQuery) -> dict[str, Any]:
    """One item of the answer, shaped as the Hub's so that huggingface_hub's ModelInfo(**item) reads it."""
    names: Iterable[str]
    if query.expand:
        names = query.expand  # only what was asked for, as the Hub answers an expand
    else:
        names = DEFAULT_PROPERTIES
        if query.full:
            names = (*names, *FULL_PROPERTIES)
        if query.card_data:
            names = (*names, "cardData")
        if query.config:
            names = (*names, "config")
    item: dict[str, Any] = {"_id": listing.model_object_id(listed.repo.repo_id), "id": listed.repo.repo_id}
    for name in names:
        read = _PROPERTIES.get(name)
        value = read(listed) if read is not None else None  # a property not modelled here is left out
        if value is not None:
            item[name] = value
    return item


# ---------------------------------------------------------------------- matching and order


def _matches(listed: Listed, query: ModelQuery) -> bool:
    repo = listed.repo
    if query.search is not None and query.search.lower() not in repo.repo_id.lower():
        return False
    if query.author is not None and query.author.lower() != repo.author.lower():
        return False
    if query.filters and not set(query.filters) <= set(repo.tags):
        return False
    if query.pipeline_tag is not None and query.pipeline_tag != repo.listing.pipeline_tag:
        return False
    return query.gated is None or query.gated == bool(listed.gated)


def _order(sort: str | None) -> Callable[[Listed], tuple[Any, ...]]:
    """A sort key: descending by `sort` (default: trending score), then downloads, then repo id."""
    first = _SORT_VALUES[sort or "trendingScore"]

    def key(listed: Listed) -> tuple[Any, ...]:
        return (-first(listed.repo), -listed.repo.listing.downloads, listed.repo.repo_id)

    return key


def _timestamp(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


_SORT_VALUES: dict[str, Callable[[FixtureRepo], float]] = {
    "downloads": lambda r: r.listing.downloads,
    "likes": lambda r: r.listing.likes,
    "trendingScore": lambda r: r.listing.trending_score,
    "lastModified": lambda r: _timestamp(r.last_modified),
    "createdAt": lambda r: _timestamp(r.created_at),
}


# ---------------------------------------------------------------------- item properties

# What a list item holds without `full` or `expand`.
DEFAULT_PROPERTIES = (
    "modelId",
    "author",
    "likes",
    "downloads",
    "trendingScore",
    "private",
    "gated",
    "tags",
    "pipeline_tag",
    "library_name",
    "createdAt",
    "lastModified",
)
# What `full=true` adds: the commit and the file names (no sizes, as the Hub's listing).
FULL_PROPERTIES = ("sha", "disabled", "siblings")


def _siblings(listed: Listed) -> list[dict[str, str]]:
    return [{"rfilename": f.path} for f in listed.repo.revision().files]


_PROPERTIES: dict[str, Callable[[Listed], Any]] = {
    "modelId": lambda x: x.repo.repo_id,
    "author": lambda x: x.repo.author,
    "likes": lambda x: x.repo.listing.likes,
    "downloads": lambda x: x.repo.listing.downloads,
    "trendingScore": lambda x: x.repo.listing.trending_score,
    "private": lambda x: False,
    "disabled": lambda x: False,
    "gated": lambda x: x.gated,
    "tags": lambda x: x.repo.tags,
    "pipeline_tag": lambda x: x.repo.listing.pipeline_tag,
    "library_name": lambda x: x.repo.listing.library_name,
    "createdAt": lambda x: x.repo.created_at,
    "lastModified": lambda x: x.repo.last_modified,
    "sha": lambda x: x.repo.revision().sha,
    "siblings": _siblings,
    "usedStorage": lambda x: x.repo.revision().total_size(),
    "cardData": lambda x: listing.card_data(x.repo.revision()),
    "config": lambda x: listing.config_summary(x.repo.revision()),
}


# ---------------------------------------------------------------------- query string


def _all(params: Mapping[str, str], name: str) -> tuple[str, ...]:
    """Every value of a repeatable parameter, under `name` or `name[]` (both spellings reach the Hub)."""
    getall = getattr(params, "getall", None)
    values: list[str] = []
    for key in (name, f"{name}[]"):
        if getall is not None:
            values += getall(key, [])
        elif key in params:
            values.append(params[key])
    return tuple(v for v in values if v)


def _optional_flag(value: str | None, name: str) -> bool | None:
    if value is None or value == "":
        return None
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ValueError(f"Invalid {name} parameter {value!r}: expected true or false")


def _limit(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        limit = int(value)
    except ValueError:
        raise ValueError(f"Invalid limit parameter {value!r}: expected a positive integer") from None
    if limit < 1:
        raise ValueError(f"Invalid limit parameter {value!r}: expected a positive integer")
    return limit
