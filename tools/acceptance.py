"""The `acceptance` tool: acceptance length of a running speculative server, per dataset.

The prompts are the standard datasets drafters' model cards report on (GSM8K,
MATH-500, HumanEval, MBPP, MT-Bench first turns), fetched on the GPU host from the
Hub and formatted as z-lab/dflash's benchmark does (tools/datasets); a dataset the
host cannot fetch is replaced by the shipped prompt set of its kind
(prompts/acceptance: math, code, chat, the offline fallback), and the result says
so. Each prompt goes to the native `/generate` at temperature 0; SGLang's `meta_info` gives per request
`completion_tokens` and `spec_verify_ct` (tokens gained per verify step include
the bonus token, so tau >= 1). Reported per category and overall, both ways the
literature averages (acceptance_intervals.py): request mean and token weighted,
each with a 95% interval, plus a `method` line that says exactly what was done.
A warm-up request is discarded and the prefix cache flushed before the eval.
Requests run from here through host.forward(port): only meta_info matters, not timing.

Releases name the draft counts differently (spec_accept_token_num /
spec_draft_token_num in 0.5.10, spec_accepted_drafts / spec_proposed_drafts in
0.5.11, spec_num_correct_drafts / spec_num_proposed_drafts in 0.5.23); all three
are read (`spec_counts`). SGLang adds the speculative keys only to a request that
had a verify step: a reply without them is counted as such and reported, never
fatal; NotSpeculative is raised only when the server runs no drafter.

Thinking: a reasoning model's acceptance differs a lot with thinking on or off, so
when the served model's chat template has a thinking switch (chat_template.py), the
eval renders every prompt with that template twice, thinking on (the model's
default) and off, and reports each mode; `overall` is thinking on. Otherwise the
prompt text goes as it is (or through `prompt_template`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import httpx
import tenacity
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from specops.prompts.acceptance import Category, load_prompt_set

from .acceptance_intervals import (
    BOOTSTRAP_RESAMPLES,
    request_mean_interval,
    token_weighted_interval,
)
from .chat_template import ChatTemplate, ChatTemplateError, read_chat_template
from .context import ToolContext
from .datasets import DATASET_NAMES, load_standard_prompts, standard_dataset
from .errors import ErrorKind, ToolError
from .hosts import PortNotListening
from .inputs import Port
from .registry import tool
from .sglang.server_http import (  # /server_info first, /get_server_info as fallback
    SERVER_INFO_PATHS,
    raw_server_info,
)

# Below this a drafter hardly ever beats the same server without speculation (verify cost > gain).
DEFAULT_MIN_USEFUL_ACCEPT_LENGTH = 1.5
_TRANSIENT_STATUS = (429, 500, 502, 503, 504)
Thinking = Literal["auto", "raw", "on", "off", "both"]
# The standard datasets (fetched on the host) and the shipped offline sets.
PromptSetName = Literal["gsm8k", "math500", "humaneval", "mbpp", "mt-bench", "math", "code", "chat"]
ThinkingMode = Literal["on", "off"]


class NotSpeculative(ToolError):
    """The server answered, but without speculative metadata: it does not run a drafter."""

    kind = ErrorKind.NOT_SPECULATIVE


class AcceptanceServerUnreachable(ToolError):
    kind = ErrorKind.SERVER_NOT_REACHABLE


class AcceptanceRequestsFailed(ToolError):
    """Too many eval requests failed for the figures to mean anything."""

    kind = ErrorKind.ACCEPTANCE_REQUESTS_FAILED


class NoChatTemplate(ToolError):
    """Thinking on/off was asked for, but the served model has no chat template with a thinking switch."""

    kind = ErrorKind.NO_CHAT_TEMPLATE


class _Transient(Exception):
    pass


# A finished request's draft counts under each release's meta_info names: 0.5.23, 0.5.11, 0.5.10.post1.
ACCEPTED_DRAFT_KEYS = ("spec_num_correct_drafts", "spec_accepted_drafts", "spec_accept_token_num")
PROPOSED_DRAFT_KEYS = ("spec_num_proposed_drafts", "spec_proposed_drafts", "spec_draft_token_num")
# Per request, verify steps by the number of drafts they accepted (index k: k drafts): 0.5.12 on, 0.5.10-0.5.11.
HISTOGRAM_KEYS = ("spec_correct_drafts_histogram", "spec_accept_histogram")


class SpecCounts(BaseModel):
    """One finished /generate request's speculative figures, whatever its release calls them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    completion_tokens: int
    verify_ct: int = Field(gt=0)
    accepted_drafts: int | None = None
    proposed_drafts: int | None = None
    histogram: tuple[int, ...] | None = Field(None, description="Verify steps that accepted k drafts, at index k")

    @property
    def accept_length(self) -> float:
        return self.completion_tokens / self.verify_ct


def spec_counts(meta: dict[str, Any]) -> SpecCounts | None:
    """The speculative counts of a reply's meta_info; None when it has none (no verify step, or no drafter)."""
    verify = meta.get("spec_verify_ct")
    if isinstance(verify, bool) or not isinstance(verify, (int, float)) or verify <= 0:
        return None

    def first(keys: tuple[str, ...]) -> int | None:
        return next((int(meta[k]) for k in keys if isinstance(meta.get(k), (int, float))), None)

    histogram = next((meta[k] for k in HISTOGRAM_KEYS if isinstance(meta.get(k), list)), None)
    return SpecCounts(
        completion_tokens=int(meta["completion_tokens"]),
        verify_ct=int(verify),
        accepted_drafts=first(ACCEPTED_DRAFT_KEYS),
        proposed_drafts=first(PROPOSED_DRAFT_KEYS),
        histogram=tuple(int(n) for n in histogram) if histogram else None,
    )


def pooled_histogram(rows: list[SpecCounts]) -> list[int] | None:
    """Verify steps by drafts accepted, summed over requests; None unless every request reported one."""
    if not rows or any(r.histogram is None for r in rows):
        return None
    pooled = [0] * max(len(r.histogram or ()) for r in rows)
    for r in rows:
        for k, steps in enumerate(r.histogram or ()):
            pooled[k] += steps
    return pooled


def position_accept_rates(histogram: list[int]) -> list[float]:
    """Per draft position k = 1, 2, ...: the share of verify steps that accepted at least k drafts."""
    steps = sum(histogram)
    return [sum(histogram[k:]) / steps for k in range(1, len(histogram))] if steps else []


class AcceptanceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    port: Port = 30000
    categories: list[PromptSetName] = Field(
        default_factory=lambda: list[PromptSetName](DATASET_NAMES),
        min_length=1,
        description="Standard datasets (fetched on the host) or shipped sets",
    )
    prompts_per_category: int | None = Field(None, ge=2, le=10_000, description="First N prompts of each")
    max_new_tokens: int = Field(1024, ge=16, le=65536)
    ignore_eos: bool = Field(False, description="True: every answer runs to max_new_tokens (long, uniform samples)")
    concurrency: int = Field(8, ge=1, le=256, description="Eval requests in flight at once")
    prompt_template: str = Field(
        "{prompt}",
        max_length=4000,
        description="How each prompt becomes /generate text, e.g. a chat template; {prompt} is replaced",
    )
    thinking: Thinking = Field(
        "auto",
        description="auto: on and off where the chat template switches thinking, else raw text",
    )
    break_even_accept_length: float | None = Field(
        None, ge=1.0, le=64.0, description="The tau the drafter needs to beat the baseline (e.g. from TPOT ratios)"
    )
    flush_cache: bool = True
    request_timeout_s: float = Field(600.0, gt=0, le=24 * 3600)

    @field_validator("categories")
    @classmethod
    def _unique(cls, value: list[PromptSetName]) -> list[PromptSetName]:
        if len(set(value)) != len(value):
            raise ValueError(f"categories repeat: {value}")
        return value

    @field_validator("prompt_template")
    @classmethod
    def _has_slot(cls, value: str) -> str:
        if value.count("{prompt}") != 1:
            raise ValueError("prompt_template must contain {prompt} exactly once")
        return value

    @model_validator(mode="after")
    def _one_template(self) -> AcceptanceArgs:
        if self.thinking in ("on", "off", "both") and self.prompt_template != "{prompt}":
            raise ValueError("thinking on/off renders the model's own chat template: leave prompt_template unset")
        return self


class CategoryAcceptance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    category: str = Field(description="The dataset (gsm8k, ...) or shipped set (math, code, chat), or overall")
    thinking: ThinkingMode | None = Field(
        None, description="on / off: rendered with the chat template so; None: raw text"
    )
    prompt_set: str
    prompts: int = Field(description="Requests that counted")
    request_mean: float = Field(description="Mean of per-request completion_tokens / spec_verify_ct")
    request_mean_ci95: tuple[float, float] | None = Field(description="Student-t 95% interval")
    token_weighted: float = Field(description="sum(completion_tokens) / sum(spec_verify_ct)")
    token_weighted_ci95: tuple[float, float] | None = Field(description="Percentile-bootstrap 95% interval")
    completion_tokens: int
    verify_steps: int
    min_request: float
    max_request: float
    draft_accept_rate: float | None = Field(
        None, description="sum(accepted drafts) / sum(proposed drafts) from the release's own meta_info counts"
    )
    no_verify: int = Field(0, description="Replies without speculative fields (no verify step): not in the figures")
    histogram: list[int] | None = Field(
        None, description="Verify steps that accepted k drafts, at index k, over every request (where reported)"
    )
    position_accept_rate: list[float] | None = Field(
        None, description="Per draft position 1, 2, ...: the share of verify steps that accepted at least that many"
    )


class AcceptanceResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str
    port: int
    speculative_algorithm: str | None
    block_size: int | None = Field(description="speculative_num_draft_tokens from /server_info")
    server_version: str | None
    max_new_tokens: int
    temperature: float
    categories: list[CategoryAcceptance] = Field(description="Per category, and per thinking mode when measured")
    overall: CategoryAcceptance = Field(description="Every request pooled; thinking on when both modes were measured")
    overall_by_thinking: list[CategoryAcceptance] = Field(
        default_factory=list, description="The overall figure of each thinking mode measured (empty: raw text only)"
    )
    failed_requests: int
    errors: list[str]
    no_verify_requests: int = Field(0, description="Answered without speculative fields (no verify step): not counted")
    notes: list[str] = Field(
        default_factory=list, description="What was left out and why (no-verify replies, empty categories)"
    )
    server_avg_accept_length: float | None = Field(
        description="internal_states[0].avg_spec_accept_length: the server's own since start (or its last flush), for comparison"
    )
    method: str
    warning: str | None = Field(description="Set when the measured acceptance is too low for the drafter to pay off")


def _summary(
    category: str, prompt_set: str, rows: list[SpecCounts], thinking: ThinkingMode | None = None, no_verify: int = 0
) -> CategoryAcceptance:
    completion = [r.completion_tokens for r in rows]
    verify = [r.verify_ct for r in rows]
    per_request = [r.accept_length for r in rows]
    mean, mean_ci = request_mean_interval(per_request)
    weighted, weighted_ci = token_weighted_interval(completion, verify)
    drafts = [(r.accepted_drafts, r.proposed_drafts) for r in rows]
    proposed = sum(p or 0 for _, p in drafts)
    rate = (
        sum(a or 0 for a, _ in drafts) / proposed if proposed and all(a is not None and p for a, p in drafts) else None
    )
    histogram = pooled_histogram(rows)
    return CategoryAcceptance(
        category=category,
        thinking=thinking,
        prompt_set=prompt_set,
        prompts=len(rows),
        request_mean=mean,
        request_mean_ci95=mean_ci,
        token_weighted=weighted,
        token_weighted_ci95=weighted_ci,
        completion_tokens=sum(completion),
        verify_steps=sum(verify),
        min_request=min(per_request),
        max_request=max(per_request),
        draft_accept_rate=rate,
        no_verify=no_verify,
        histogram=histogram,
        position_accept_rate=[round(r, 4) for r in position_accept_rates(histogram)] if histogram else None,
    )


async def _generate(client: httpx.AsyncClient, text: str, args: AcceptanceArgs) -> dict[str, Any]:
    body = {
        "text": text,
        "sampling_params": {"temperature": 0.0, "max_new_tokens": args.max_new_tokens, "ignore_eos": args.ignore_eos},
    }

    @tenacity.retry(
        retry=tenacity.retry_if_exception_type((httpx.TransportError, _Transient)),
        stop=tenacity.stop_after_attempt(3),
        wait=tenacity.wait_exponential(multiplier=0.5, max=5),
        reraise=True,
    )
    async def attempt() -> dict[str, Any]:
        response = await client.post("/generate", json=body)
        if response.status_code in _TRANSIENT_STATUS:
            raise _Transient(f"HTTP {response.status_code}: {response.text[:200]}")
        if response.status_code != 200:
            raise ValueError(f"HTTP {response.status_code}: {response.text[:300]}")
        meta_info: dict[str, Any] = response.json()["meta_info"]
        return meta_info

    return await attempt()


async def _server_info_async(client: httpx.AsyncClient) -> dict[str, Any]:
    for path in SERVER_INFO_PATHS:
        response = await client.get(path)
        if response.status_code == 200:
            info: dict[str, Any] = response.json()
            return info
        if response.status_code != 404:
            break
    return {}


Job = tuple[tuple[ThinkingMode | None, str], str]  # ((thinking mode, category), text to send)


async def _evaluate(
    base_url: str, args: AcceptanceArgs, warmup: str, jobs: list[Job]
) -> tuple[dict[str, Any], list[tuple[tuple[ThinkingMode | None, str], dict[str, Any]]], list[str]]:
    """(server info after the eval, [((mode, category), meta_info)], errors)."""
    info: dict[str, Any] = {}
    limits = httpx.Limits(max_connections=args.concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=args.request_timeout_s, limits=limits) as client:
        # Warm-up, discarded: the first request pays for graph capture and allocation on a real server.
        await _generate(client, warmup, args)
        if args.flush_cache:
            await client.post("/flush_cache")
        gate = asyncio.Semaphore(args.concurrency)
        results: list[tuple[tuple[ThinkingMode | None, str], dict[str, Any]]] = []
        errors: list[str] = []

        async def run(key: tuple[ThinkingMode | None, str], text: str) -> None:
            async with gate:
                try:
                    results.append((key, await _generate(client, text, args)))
                except (httpx.HTTPError, _Transient, ValueError, KeyError) as exc:
                    errors.append(f"{key[1]}{f' (thinking {key[0]})' if key[0] else ''}: {type(exc).__name__}: {exc}")

        await asyncio.gather(*(run(key, text) for key, text in jobs))
        info = await _server_info_async(client)
    return info, results, errors


def _modes(args: AcceptanceArgs, template: ChatTemplate | None, model_dir: str | None) -> list[ThinkingMode | None]:
    """The thinking modes to measure; [None] is raw text."""
    switchable = template is not None and template.has_thinking_switch
    if not _wants_template(args) or (args.thinking == "auto" and not switchable):
        return [None]
    if not switchable:
        raise NoChatTemplate(
            f"thinking {args.thinking} was asked for, but the served model ({model_dir or 'path unknown'}) has "
            f"{'no chat template' if template is None else 'a chat template without a thinking switch'}",
            remedy="measure with thinking 'raw' (and a prompt_template if the model needs one)",
            details={"model_path": model_dir},
        )
    asked: dict[str, list[ThinkingMode | None]] = {"on": ["on"], "off": ["off"]}
    return asked.get(args.thinking, ["on", "off"])


def _wants_template(args: AcceptanceArgs) -> bool:
    """Whether the model's chat template matters: not for raw text or a template of the caller's own."""
    return args.thinking != "raw" and not (args.thinking == "auto" and args.prompt_template != "{prompt}")


def _text(args: AcceptanceArgs, template: ChatTemplate | None, mode: ThinkingMode | None, prompt: str) -> str:
    if mode is None:
        return args.prompt_template.replace("{prompt}", prompt)
    assert template is not None
    return template.render(prompt, thinking=mode == "on")


class PromptSource(BaseModel):
    """One set of prompts the eval sends: a standard dataset as fetched on the host, or a shipped set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(description="The name figures are labelled with: the dataset repo, or the shipped set")
    prompts: list[str]
    described: str = Field(description="Where the prompts come from, for the method line")


def _shipped(category: Category, count: int | None) -> PromptSource:
    shipped = load_prompt_set(category)
    prompts = shipped.prompts[:count]
    return PromptSource(
        label=shipped.name,
        prompts=prompts,
        described=f"{shipped.name} (shipped with specops, original prompts in the style of the public benchmarks, "
        f"{len(prompts)} prompts)",
    )


def _named(name: str, what: str) -> str:
    """`what` led by the dataset's name once (the datasets' errors already start with it)."""
    return what if what.startswith(f"{name}:") else f"{name}: {what}"


def prompt_sources(ctx: ToolContext, args: AcceptanceArgs, notes: list[str]) -> dict[str, PromptSource]:
    """The prompts per set asked for: each standard dataset fetched on the host, or in its place (with a note) the
    shipped set of its kind; the shipped sets asked for by name."""
    asked_datasets = [c for c in args.categories if c in DATASET_NAMES]
    loaded = load_standard_prompts(ctx, asked_datasets, args.prompts_per_category) if asked_datasets else None
    if loaded is None:  # only shipped sets asked for
        return {name: _shipped(name, args.prompts_per_category) for name in args.categories}  # type: ignore[arg-type]
    fetched = loaded.by_name()
    stand_ins = {f.name: standard_dataset(f.name).category for f in loaded.failures}
    for failure in loaded.failures:
        notes.append(
            f"{_named(failure.name, failure.error.what)}; measured on the shipped {stand_ins[failure.name]} set instead "
            "(the offline fallback): its figures do not compare with a model card's"
        )
    sources: dict[str, PromptSource] = {}
    for name in args.categories:
        if name in fetched:
            d = fetched[name]
            sources[name] = PromptSource(
                label=f"{d.repo_id} ({d.config + ', ' if d.config else ''}{d.split})",
                prompts=d.prompts,
                described=d.source,
            )
        else:
            shipped: Category = stand_ins.get(name) or name  # type: ignore[assignment]
            if shipped not in sources:
                sources[shipped] = _shipped(shipped, args.prompts_per_category)
    return sources


def _method(
    args: AcceptanceArgs, sets: dict[str, PromptSource], template: ChatTemplate | None, modes: list[ThinkingMode | None]
) -> str:
    if modes != [None] and template is not None:
        both = " and ".join(f"thinking {m}" for m in modes)
        template_text = f"each prompt rendered with the model's chat template ({template.source}), {both}"
    elif args.prompt_template == "{prompt}":
        template_text = "raw prompt text (no chat template)"
    else:
        template_text = f"template {args.prompt_template!r}"
    return (
        f"Prompts: {'; '.join(s.described for s in sets.values())}; {template_text}, sent to native /generate at "
        "temperature 0, "
        f"max_new_tokens {args.max_new_tokens}, ignore_eos {args.ignore_eos}, {args.concurrency} in flight; one warm-up "
        f"request discarded{', /flush_cache before the eval' if args.flush_cache else ''}. Per request tau = "
        "meta_info.completion_tokens / meta_info.spec_verify_ct (accepted drafts + the bonus token per verify step); "
        "a reply without speculative fields (SGLang adds them only after a verify step) is counted apart, not in the "
        "figures. Draft accept rate = sum of accepted / proposed drafts (spec_num_correct_drafts / "
        "spec_num_proposed_drafts, spec_accepted_drafts / spec_proposed_drafts or spec_accept_token_num / "
        "spec_draft_token_num, as the release names them). "
        "Request mean = mean of per-request tau, 95% Student-t interval; token weighted = sum(completion_tokens) / "
        f"sum(spec_verify_ct), 95% percentile bootstrap over requests ({BOOTSTRAP_RESAMPLES} resamples). Overall pools "
        "every request, so datasets weigh by their number of prompts. Per draft position: the share of verify steps "
        "that accepted at least that many drafts (SGLang's per-request spec_correct_drafts_histogram, where reported)."
    )


ACCEPTANCE_COLUMNS = (
    "category",
    "thinking",
    "request_mean",
    "request_mean_ci95",
    "token_weighted",
    "prompts",
    "draft_accept_rate",
)


def acceptance_view(result: AcceptanceResult) -> dict[str, Any]:
    """Each dataset as a row of the figures compared, to two decimals (per-request extremes, counts, histograms and
    every digit stay in the transcript)."""

    def rounded(value: Any) -> Any:
        if isinstance(value, float):
            return round(value, 2)
        return [rounded(v) for v in value] if isinstance(value, tuple | list) else value

    def row(c: CategoryAcceptance) -> list[Any]:
        return [rounded(getattr(c, column)) for column in ACCEPTANCE_COLUMNS]

    shown = result.model_dump(
        mode="json",
        exclude={
            "categories",
            "overall",
            "overall_by_thinking",
            "method",
            "host",
            "port",
            "max_new_tokens",
            "temperature",
        },
    )  # what the caller set
    return {
        **shown,
        "columns": " ".join(ACCEPTANCE_COLUMNS),
        "categories": [row(c) for c in result.categories],
        "overall": [row(c) for c in result.overall_by_thinking or [result.overall]],
    }  # overall is one of them


@tool("acceptance", mutates=False, view=acceptance_view)
def measure_acceptance(ctx: ToolContext, args: AcceptanceArgs) -> AcceptanceResult:
    """Acceptance length (tau) of the speculative server on `port` per dataset and overall (request mean and token
    weighted, 95% intervals; thinking on and off apart); warns when tau is too low to pay off.
    """
    notes: list[str] = []
    sets = prompt_sources(ctx, args, notes)
    try:
        with ctx.host.forward(args.port) as (address, local_port):
            base_url = f"http://{address}:{local_port}"
            try:
                info = raw_server_info(ctx.host, args.port)
            except httpx.HTTPStatusError:
                info = {}
            model_dir = info.get("model_path") if isinstance(info.get("model_path"), str) else None
            template = read_chat_template(ctx.host, model_dir) if model_dir and _wants_template(args) else None
            modes = _modes(args, template, model_dir)
            jobs: list[Job] = [
                ((mode, c), _text(args, template, mode, p))
                for mode in modes
                for c, s in sets.items()
                for p in s.prompts
            ]
            warmup = _text(args, template, modes[0], "Hello.")
            after, results, errors = asyncio.run(_evaluate(base_url, args, warmup, jobs))
    except PortNotListening as exc:
        raise AcceptanceServerUnreachable(
            str(exc), remedy="start the speculative server and wait until /health answers 200"
        ) from None
    except ChatTemplateError as exc:
        raise NoChatTemplate(str(exc), remedy="measure with thinking 'raw', or fix the model's chat template") from None
    except (httpx.HTTPError, _Transient, ValueError, KeyError) as exc:
        raise AcceptanceServerUnreachable(
            f"the server on port {args.port} did not answer the warm-up request: {exc}",
            remedy="check that it is ready (GET /health) and serves SGLang's native /generate",
        ) from None
    rows: dict[tuple[ThinkingMode | None, str], list[SpecCounts]] = {(m, c): [] for m in modes for c in sets}
    no_verify: dict[tuple[ThinkingMode | None, str], int] = {key: 0 for key in rows}
    for key, meta in results:
        counts = spec_counts(meta)
        if counts is None:
            no_verify[key] += 1
        else:
            rows[key].append(counts)
    counted = sum(len(r) for r in rows.values())
    speculative = after.get("speculative_algorithm") or info.get("speculative_algorithm")
    if counted == 0 and results and not speculative:
        raise NotSpeculative(
            f"the server on port {args.port} returns no spec_verify_ct and runs no speculative algorithm "
            "(server_info.speculative_algorithm is unset)",
            remedy="launch it with --speculative-algorithm and a draft model, then measure again",
            details={"speculative_algorithm": speculative},
        )
    if len(errors) > len(jobs) // 10 or counted == 0:
        raise AcceptanceRequestsFailed(
            f"{len(errors)} of {len(jobs)} eval requests failed and {sum(no_verify.values())} had no verify step, "
            f"e.g. {errors[0] if errors else 'none counted'}",
            remedy="check the server log; a drafter that rejects requests (grammar, logprobs) or crashes under load cannot be measured",
            details={"errors": errors[:10]},
        )
    if sum(no_verify.values()):
        notes.append(
            f"{sum(no_verify.values())} replies carried no speculative fields (no verify step, e.g. an answer "
            "that ended at its first token): counted apart, not in the figures"
        )
    empty = [key for key, r in rows.items() if not r]
    for mode, category in empty:
        notes.append(f"{category}{f' (thinking {mode})' if mode else ''}: no request with a verify step, left out")
    names = {c: s.label for c, s in sets.items()}
    categories = [
        _summary(c, names[c], rows[(m, c)], m, no_verify[(m, c)]) for m in modes for c in sets if rows[(m, c)]
    ]
    overalls = [
        _summary(
            "overall",
            " + ".join(sets),
            [row for c in sets for row in rows[(m, c)]],
            m,
            sum(no_verify[(m, c)] for c in sets),
        )
        for m in modes
        if any(rows[(m, c)] for c in sets)
    ]
    floor = max(DEFAULT_MIN_USEFUL_ACCEPT_LENGTH, args.break_even_accept_length or 0.0)
    low = min(min(o.request_mean, o.token_weighted) for o in overalls)
    warning = None
    if low < floor:
        reason = (
            f"the break-even {args.break_even_accept_length:g} given"
            if args.break_even_accept_length and args.break_even_accept_length >= DEFAULT_MIN_USEFUL_ACCEPT_LENGTH
            else f"{DEFAULT_MIN_USEFUL_ACCEPT_LENGTH:g}, below which a drafter rarely beats no speculation"
        )
        warning = (
            f"acceptance length {low:.2f} is below {reason}: the speculative server is likely slower than the baseline. "
            "Check the drafter matches the target, the CUDA-graph mode (tau 1.00 means drafts are never accepted), "
            "and thinking/chat-template settings."
        )
    states = after.get("internal_states") or info.get("internal_states") or [{}]
    server_tau = states[0].get("avg_spec_accept_length") if isinstance(states[0], dict) else None
    return AcceptanceResult(
        host=ctx.host.spec,
        port=args.port,
        speculative_algorithm=info.get("speculative_algorithm"),
        block_size=info.get("speculative_num_draft_tokens"),
        server_version=info.get("version"),
        max_new_tokens=args.max_new_tokens,
        temperature=0.0,
        categories=categories,
        overall=overalls[0],
        overall_by_thinking=overalls if modes != [None] else [],
        failed_requests=len(errors),
        errors=errors[:5],
        no_verify_requests=sum(no_verify.values()),
        notes=notes,
        server_avg_accept_length=float(server_tau) if server_tau is not None else None,
        method=_method(args, sets, template, modes),
        warning=warning,
    )
