"""Searching the Hugging Face Hub for models: how a goal that names no repo finds its drafter.

People name drafters by what they are for ("a DFlash drafter for Qwen3-8B"), not by repo id. The search is
huggingface_hub's `list_models` against the Hub the host downloads from (its HF_ENDPOINT: a mirror, or a simulated
host's emulator), so what it finds is what the host can fetch. A listing only says what a repo's name and tags
claim; the drafter's config (`read_drafter_config`) settles what it is, so each result carries the listing's
evidence (algorithm words in its name or tags, the base models it names) and nothing more.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import httpx
from huggingface_hub import HfApi, ModelInfo
from huggingface_hub.errors import HfHubHTTPError
from pydantic import BaseModel, ConfigDict, Field, field_validator
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from .context import ToolContext
from .errors import InvalidToolInput
from .hub import HubUnavailable, host_hub_endpoint, transient_hub_error
from .inputs import describe_char, first_unprintable
from .registry import tool

MAX_RESULTS = 50
SortKey = Literal["downloads", "likes", "recent", "created", "trending"]
_SORT_PARAM: dict[str, str] = {
    "downloads": "downloads",
    "likes": "likes",
    "recent": "last_modified",
    "created": "created_at",
    "trending": "trending_score",
}
# Words in a repo's name or tags that name a speculative algorithm (the listing's claim, not the config's).
_ALGORITHM_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("DFLASH", re.compile(r"d-?flash", re.IGNORECASE)),
    ("EAGLE3", re.compile(r"eagle[-_ ]?3", re.IGNORECASE)),
    ("EAGLE", re.compile(r"eagle(?![-_ ]?3)", re.IGNORECASE)),
    ("NEXTN", re.compile(r"\b(?:mtp|nextn)\b", re.IGNORECASE)),
    ("SPECULATIVE", re.compile(r"speculat|drafter|\bdraft\b", re.IGNORECASE)),
)
# Tags every listing carries that say nothing a planner needs.
_NOISE_TAGS = ("region:", "license:", "endpoints_compatible", "autotrain_compatible", "text-generation-inference")
_SEARCH_CHARS = re.compile(r"[A-Za-z0-9._/ -]+")


class SearchHubArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    search: str | None = Field(
        None,
        max_length=96,
        description="Text the repo id must contain (case-insensitive), e.g. 'Qwen3-8B' or 'dflash'. One name or word "
        "finds most: search the target's name, then filter by tags, or search the algorithm's name",
    )
    author: str | None = Field(
        None, max_length=96, description="Only this user's or organisation's repos, e.g. 'z-lab'"
    )
    tags: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="Tags every result must carry, e.g. 'base_model:Qwen/Qwen3-8B', 'eagle3', 'safetensors'",
    )
    sort: SortKey = Field(
        "downloads", description="Most downloaded, most liked, most recently updated or created, trending"
    )
    limit: int = Field(10, ge=1, le=MAX_RESULTS, description="At most this many results")

    @field_validator("search", "author")
    @classmethod
    def _plain_text(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        bad = first_unprintable(value)
        if bad is not None or not _SEARCH_CHARS.fullmatch(value or " "):
            ch = value[bad] if bad is not None else next(c for c in value if not _SEARCH_CHARS.fullmatch(c))
            raise ValueError(f"has {describe_char(ch)}: use letters, digits, '.', '_', '-', '/' and spaces")
        return value or None

    @field_validator("tags")
    @classmethod
    def _plain_tags(cls, values: list[str]) -> list[str]:
        for value in values:
            bad = first_unprintable(value)
            if bad is not None or not value.strip():
                raise ValueError("a tag is one word of printable text, e.g. 'base_model:Qwen/Qwen3-8B'")
        return [v.strip() for v in values]


class HubModel(BaseModel):
    """One repo as the Hub lists it."""

    model_config = ConfigDict(frozen=True)

    repo_id: str
    downloads: int = Field(description="Downloads in the last 30 days, as the Hub counts them")
    likes: int
    updated: str | None = Field(None, description="When it was last changed (YYYY-MM-DD)")
    gated: bool = Field(description="Downloading needs a token whose account was granted access")
    library: str | None = None
    base_models: list[str] = Field(
        default_factory=list,
        description="The models its card names as its base, with how it derives (finetune, quantized, adapter, merge)",
    )
    algorithm_words: list[str] = Field(
        default_factory=list,
        description="Speculative algorithms its name or tags mention: a claim; its config says what it is",
    )
    tags: list[str] = Field(default_factory=list, description="Its other tags (licence and region left out)")


class HubSearch(BaseModel):
    endpoint: str = Field(description="The Hub searched: the one the host downloads from")
    models: list[HubModel]
    more: bool = Field(description="The limit was reached: more repos match; narrow the search or raise the limit")


def search_view(result: HubSearch) -> dict[str, Any]:
    """The planner sees each repo in one short line of facts (the tags it already filtered on stay in the report)."""
    return {
        "models": [
            {
                "repo_id": m.repo_id,
                "downloads": m.downloads,
                "updated": m.updated,
                "gated": m.gated or None,
                "base_models": m.base_models,
                "algorithm_words": m.algorithm_words,
                "library": m.library,
            }
            for m in result.models
        ],
        "more": result.more or None,
    }


def _base_models(tags: list[str]) -> list[str]:
    """`base_model:ORG/NAME` and `base_model:RELATION:ORG/NAME` tags as 'ORG/NAME' or 'ORG/NAME (relation)'."""
    named: dict[str, str | None] = {}
    for tag in tags:
        if not tag.startswith("base_model:"):
            continue
        rest = tag.removeprefix("base_model:")
        relation, _, repo = rest.partition(":") if rest.count(":") == 1 else (None, "", rest)
        if repo and (relation is not None or repo not in named):
            named[repo] = relation
    return [f"{repo} ({relation})" if relation else repo for repo, relation in named.items()]


def _algorithm_words(repo_id: str, tags: list[str]) -> list[str]:
    text = " ".join([repo_id.split("/")[-1], *tags])
    found = [name for name, pattern in _ALGORITHM_WORDS if pattern.search(text)]
    # "speculative" alone only when no algorithm is named.
    return [w for w in found if w != "SPECULATIVE"] or found


def hub_model(info: ModelInfo) -> HubModel:
    """A repo as huggingface_hub's listing gives it, as a HubModel."""
    tags = list(info.tags or [])
    modified = info.last_modified or info.created_at
    return HubModel(
        repo_id=info.id,
        downloads=info.downloads or 0,
        likes=info.likes or 0,
        updated=modified.date().isoformat() if modified is not None else None,
        gated=bool(info.gated),
        library=info.library_name,
        base_models=_base_models(tags),
        algorithm_words=_algorithm_words(info.id, tags),
        tags=[t for t in tags if not t.startswith("base_model:") and not t.startswith(_NOISE_TAGS)],
    )


def search_models(args: SearchHubArgs, *, endpoint: str, token: str | None, attempts: int = 5) -> HubSearch:
    """The Hub's models matching `args`, most relevant first by `args.sort`. Raises HubUnavailable."""
    api = HfApi(endpoint=endpoint, token=token or False)

    @retry(
        retry=retry_if_exception(transient_hub_error),
        stop=stop_after_attempt(attempts),
        wait=wait_exponential(multiplier=0.5, max=8),
        reraise=True,
    )
    def fetch() -> list[HubModel]:
        found = api.list_models(
            search=args.search,
            author=args.author,
            filter=args.tags or None,
            sort=_SORT_PARAM[args.sort],  # type: ignore[arg-type]
            limit=args.limit + 1,  # one more says whether there is more
        )
        return [hub_model(info) for info in found]

    try:
        models = fetch()
    except (HfHubHTTPError, httpx.TransportError) as exc:
        raise HubUnavailable(
            f"the Hub at {endpoint} did not answer the search after {attempts} tries: {exc}",
            remedy="wait and retry; check the network and HF_ENDPOINT",
            details={"endpoint": endpoint},
        ) from None
    return HubSearch(endpoint=endpoint, models=models[: args.limit], more=len(models) > args.limit)


@tool("search_hub", mutates=False, view=search_view)
def search_hub(ctx: ToolContext, args: SearchHubArgs) -> HubSearch:
    """Search the Hub the host downloads from for models (by name, author, tags), e.g. to find a drafter for a target
    when the goal names none. A listing says what names and tags claim: read_drafter_config says what a repo is."""
    if not (args.search or args.author or args.tags):
        raise InvalidToolInput(
            "a search needs at least one of search, author or tags: the whole Hub is millions of repos",
            remedy="search for the target's name (e.g. 'Qwen3-8B') or an algorithm's (e.g. 'dflash')",
        )
    endpoint = host_hub_endpoint(ctx.host)
    token = ctx.hub_token.get_secret_value() if ctx.hub_token is not None else None
    return search_models(args, endpoint=endpoint, token=token)
