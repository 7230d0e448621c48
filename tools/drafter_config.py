"""read_drafter_config: is this a DFlash drafter, and does it fit the target it is meant for?

Reads the drafter's and the target's config.json, from the host's disk (a
path) or from the Hub the host uses (a repo id; only config.json is fetched,
here, never the weights), and checks them the way SGLang's DFlash worker will
at load time (reference: shared/reference/sglang-dflash.md):

- `architectures` must name a DFlash-family drafter SGLang serves under DFLASH
  (DFlashDraftModel from 0.5.11; 0.5.23 adds DFlash2DraftModel and others, read from
  its wheel's `srt/models/dflash.py`);
- `block_size` and `target_layer_ids`, `mask_token`, `mask_token_id` may sit at
  the top level or in `dflash_config`; dflash_config wins;
- every target layer id must be a layer the target has (`num_hidden_layers`,
  nested in `text_config` for multimodal targets such as Kimi-K2.6);
- hidden size and vocabulary must match the target's.

It also says which model the drafter was trained for, when its config.json
names it (`target_model`, `target_model_name_or_path`, `verifier`,
`base_model`..., in dflash_config or at the top level) or, failing that, its
model card does (README.md's YAML front matter, `base_model:` as a string or a
list), and notes a target given under another name.

A repo that is not a drafter raises NotADrafter; one that does not fit its
target raises IncompatibleDrafter, saying what SGLang would do with it.
"""

from __future__ import annotations

import functools
import json
import posixpath
import tempfile
from typing import Any, Literal

import httpx
import yaml
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

from ..sglang_releases.facts import load, modelled_versions
from .context import ToolContext
from .disk import human_bytes, storage_scale, stored_files
from .errors import ErrorKind, ToolError
from .hosts import Host, RemoteFileNotFound
from .hub import HubUnavailable, RepoGated, RepoNotFound, RevisionNotFound, host_hub_endpoint, list_repo
from .inputs import HostPath, RepoId, Revision
from .registry import tool

DFLASH_ARCHITECTURE = "DFlashDraftModel"


@functools.cache
def dflash_family() -> dict[str, str]:
    """Each DFlash-family drafter architecture with the first modelled SGLang release that serves it."""
    first: dict[str, str] = {}
    for version in modelled_versions():
        for name in load(version).dflash_architectures:
            first.setdefault(name, version)
    return first


SGLANG_DEFAULT_BLOCK_SIZE = 16
DEFAULT_MASK_TOKEN = "<|MASK|>"
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")
# Keys of a drafter's config.json (in dflash_config, which wins, or at the top level) that name the model it drafts
# for, the most specific first. Training recipes spell it differently; none is standard.
TARGET_MODEL_KEYS = (
    "target_model_name_or_path",
    "target_model",
    "target_model_id",
    "target_model_name",
    "target_model_path",
    "target_name_or_path",
    "verifier_model_name_or_path",
    "verifier_model",
    "verifier",
    "base_model_name_or_path",
    "base_model",
)
MODEL_CARD = "README.md"


class NotADrafter(ToolError):
    kind = ErrorKind.NOT_A_DRAFTER


class IncompatibleDrafter(ToolError):
    kind = ErrorKind.INCOMPATIBLE_DRAFTER


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


class ReadDrafterConfigArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    drafter: ModelSource
    target: ModelSource | None = Field(
        default=None, description="The model it drafts for; without it nothing is cross-checked"
    )


class ModelConfigFacts(BaseModel):
    source: str
    architectures: list[str]
    model_type: str | None
    num_hidden_layers: int | None
    hidden_size: int | None
    vocab_size: int | None
    dtype: str | None
    weight_bytes: int | None = Field(description="Weights on disk / on the Hub; None when unknown")
    weight_size: str | None


class DrafterConfig(BaseModel):
    drafter: ModelConfigFacts
    target: ModelConfigFacts | None
    is_dflash: bool
    block_size: int = Field(description="What SGLang will use when --speculative-num-draft-tokens is not given")
    block_size_from: Literal["dflash_config", "top_level", "sglang_default"]
    target_layer_ids: list[int] | None = Field(
        description="None: SGLang spreads the draft layers evenly over the target"
    )
    target_layer_ids_from: Literal["dflash_config", "top_level", "absent"]
    mask_token: str
    mask_token_id: int | None
    draft_layers: int | None
    target_model: str | None = Field(
        default=None, description="The model the drafter was trained for, as its config or model card names it"
    )
    target_model_source: Literal["config", "model_card"] | None = Field(
        default=None, description="config: a key of config.json; model_card: base_model in README.md's front matter"
    )
    checks: list[str] = Field(description="What was checked against the target and held")
    notes: list[str]
    summary: str


# -- reading config.json -------------------------------------------------------------------------


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, HfHubHTTPError) and exc.response is not None:
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


@retry(
    retry=retry_if_exception(_transient),
    stop=stop_after_attempt(5),
    wait=wait_exponential(multiplier=0.5, max=8),
    reraise=True,
)
def _hub_file(
    repo_id: str, filename: str, revision: str, endpoint: str, token: SecretStr | None, cache_dir: str
) -> str:
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
            open(_hub_file(repo_id, "config.json", revision, endpoint, token, cache_dir), encoding="utf-8") as f,
        ):
            return json.load(f)
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
        return json.loads(host.read_file(path))
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


def _card_from_hub(
    repo_id: str, revision: str, endpoint: str, token: SecretStr | None
) -> tuple[str | None, str | None]:
    """(the model card's text, None), (None, None) when the repo has none, or (None, why it could not be read)."""
    try:
        with (
            tempfile.TemporaryDirectory(prefix="specops-card-") as cache_dir,
            open(
                _hub_file(repo_id, MODEL_CARD, revision, endpoint, token, cache_dir), encoding="utf-8", errors="replace"
            ) as f,
        ):
            return f.read(), None
    except EntryNotFoundError:
        return None, None
    except (HfHubHTTPError, httpx.TransportError, OSError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return None, f"the model card ({repo_id}/{MODEL_CARD}) could not be read: {first_line}"


def _card_from_disk(host: Host, directory: str) -> str | None:
    try:
        return host.read_file(posixpath.join(directory, MODEL_CARD)).decode("utf-8", errors="replace")
    except RemoteFileNotFound:
        return None


def _front_matter(card: str) -> dict[str, Any]:
    """The YAML metadata at the top of a model card (between two `---` lines); {} when there is none or it is
    not valid YAML."""
    lines = card.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError:
        return {}
    return meta if isinstance(meta, dict) else {}


def card_base_models(card: str) -> list[str]:
    """The models a model card's `base_model:` names (a string or a list of them), in its order."""
    base = _front_matter(card).get("base_model")
    names = [base] if isinstance(base, str) else base if isinstance(base, list) else []
    return [name.strip() for name in names if isinstance(name, str) and name.strip()]


def config_target_model(config: dict[str, Any]) -> str | None:
    """The model a drafter's config.json names as its target (see TARGET_MODEL_KEYS), or None."""
    nested = config.get("dflash_config")
    for where in (nested if isinstance(nested, dict) else {}, config):
        for key in TARGET_MODEL_KEYS:
            value = where.get(key)
            if isinstance(value, str) and value.strip() and not any(c.isspace() for c in value.strip()):
                return value.strip()
    return None


def _target_model(
    ctx: ToolContext, source: ModelSource, config: dict[str, Any], endpoint: str, notes: list[str]
) -> tuple[str | None, Literal["config", "model_card"] | None]:
    """The drafter's target model from its config, else from its model card (read only then)."""
    named = config_target_model(config)
    if named is not None:
        return named, "config"
    if source.repo_id is not None:
        card, problem = _card_from_hub(source.repo_id, source.revision, endpoint, ctx.hub_token)
        if problem:
            notes.append(problem)
    else:
        card = _card_from_disk(ctx.host, ctx.resolve(str(source.path)))
    bases = card_base_models(card) if card else []
    if not bases:
        return None, None
    if len(bases) > 1:
        notes.append(
            f"the model card names {len(bases)} base models ({', '.join(bases)}): the first is taken as the target"
        )
    return bases[0], "model_card"


def _names_the_same_model(named: str, target: ModelSource) -> bool:
    """Whether the target given is the model the drafter names: the same repo id, or a directory or repo of the
    same name (models/Kimi-K2.6 for moonshotai/Kimi-K2.6)."""
    given = target.repo_id or str(target.path)

    def name(model: str) -> str:
        return model.rstrip("/").rsplit("/", 1)[-1].lower()

    return named.lower() == given.lower() or name(named) == name(given)


def _weights_on_disk(host: Host, directory: str) -> int | None:
    try:
        index = json.loads(host.read_file(posixpath.join(directory, "model.safetensors.index.json")))
        total = index.get("metadata", {}).get("total_size")
        if isinstance(total, int):
            return total
    except (RemoteFileNotFound, ValueError):
        pass
    files = stored_files(host, directory)
    if not files:
        return None
    scale = storage_scale(host, directory).factor
    return sum(size for rel, size in files.items() if rel.endswith(_WEIGHT_SUFFIXES) and "/" not in rel) * scale or None


def _weights_on_hub(repo_id: str, revision: str, endpoint: str, token: SecretStr | None) -> int | None:
    listing = list_repo(repo_id, endpoint=endpoint, revision=revision, token=token)
    return sum(f.size for f in listing.files if f.path.endswith(_WEIGHT_SUFFIXES)) or None


def _read(ctx: ToolContext, source: ModelSource, endpoint: str) -> tuple[dict[str, Any], int | None]:
    if source.repo_id is not None:
        config = _config_from_hub(source.repo_id, source.revision, endpoint, ctx.hub_token)
        return config, _weights_on_hub(source.repo_id, source.revision, endpoint, ctx.hub_token)
    directory = ctx.resolve(str(source.path))
    return _config_from_disk(ctx.host, directory), _weights_on_disk(ctx.host, directory)


def _field(config: dict[str, Any], name: str) -> Any:
    """A language-model field: from text_config when the model nests one (Kimi-K2.6, other multimodal models)."""
    text = config.get("text_config")
    if isinstance(text, dict) and name in text:
        return text[name]
    return config.get(name)


def _facts(label: str, config: dict[str, Any], weight_bytes: int | None) -> ModelConfigFacts:
    dtype = _field(config, "dtype") or _field(config, "torch_dtype")
    return ModelConfigFacts(
        source=label,
        architectures=list(config.get("architectures") or []),
        model_type=config.get("model_type"),
        num_hidden_layers=_field(config, "num_hidden_layers"),
        hidden_size=_field(config, "hidden_size"),
        vocab_size=_field(config, "vocab_size"),
        dtype=str(dtype) if dtype else None,
        weight_bytes=weight_bytes,
        weight_size=human_bytes(weight_bytes) if weight_bytes else None,
    )


def _dflash_value(config: dict[str, Any], name: str) -> tuple[Any, str]:
    nested = config.get("dflash_config")
    if isinstance(nested, dict) and nested.get(name) is not None:
        return nested[name], "dflash_config"
    if config.get(name) is not None:
        return config[name], "top_level"
    return None, "absent"


# -- the tool -------------------------------------------------------------------------------------


def drafter_config_view(config: DrafterConfig) -> dict[str, Any]:
    """The settings a launch derives and what was checked; the figures the summary states and where each setting
    came from stay in the transcript."""
    shown = config.model_dump(
        mode="json",
        include={
            "is_dflash",
            "block_size",
            "target_layer_ids",
            "mask_token",
            "target_model",
            "target_model_source",
            "checks",
            "notes",
            "summary",
        },
    )
    shown["architectures"] = config.drafter.architectures  # the target is the caller's; its checks say how it fits
    return shown


@tool("read_drafter_config", mutates=False, view=drafter_config_view)
def read_drafter_config(ctx: ToolContext, args: ReadDrafterConfigArgs) -> DrafterConfig:
    """The drafter's config (host disk or Hub): architecture, DFlash or not, the model it was trained for,
    block_size, target layers, mask token, sizes; checked against the target when one is given. NotADrafter and
    IncompatibleDrafter say what SGLang would do.
    """
    endpoint = host_hub_endpoint(ctx.host)
    config, weights = _read(ctx, args.drafter, endpoint)
    drafter = _facts(args.drafter.label(), config, weights)
    family = dflash_family()
    served = [a for a in drafter.architectures if a in family]
    if not served:
        raise NotADrafter(
            f"{drafter.source} is not a DFlash drafter: its architectures are {drafter.architectures or 'not given'}, "
            f"none of {', '.join(family)}. SGLang with --speculative-algorithm DFLASH would fail to load it as the draft model",
            remedy='pass a DFlash drafter repo (config.json architectures such as ["DFlashDraftModel"]); '
            "if this is the target model, pass it as the target",
            details={
                "source": drafter.source,
                "architectures": drafter.architectures,
                "model_type": drafter.model_type,
            },
        )

    notes: list[str] = []
    target_model, target_model_source = _target_model(ctx, args.drafter, config, endpoint, notes)
    block, block_from = _dflash_value(config, "block_size")
    layer_ids, layers_from = _dflash_value(config, "target_layer_ids")
    mask_token, _ = _dflash_value(config, "mask_token")
    mask_id, _ = _dflash_value(config, "mask_token_id")
    if served[0] != DFLASH_ARCHITECTURE:
        notes.append(
            f"{served[0]} is served under DFLASH from SGLang {family[served[0]]} (older releases serve only "
            f"{DFLASH_ARCHITECTURE}): check the host's SGLang version"
        )
    if block is None:
        notes.append(
            f"no block_size in the config: SGLang warns and uses {SGLANG_DEFAULT_BLOCK_SIZE} "
            "unless --speculative-num-draft-tokens is given"
        )
    if layer_ids is None:
        notes.append("no target_layer_ids: SGLang spreads the draft's inputs evenly over the target's layers")
    elif not (isinstance(layer_ids, list) and layer_ids and all(isinstance(i, int) for i in layer_ids)):
        raise IncompatibleDrafter(
            f"{drafter.source}: target_layer_ids must be a non-empty list of integers, got {layer_ids!r}; "
            "SGLang refuses it at load",
            remedy="use a drafter whose config lists the target layers it was trained on",
            details={"target_layer_ids": layer_ids},
        )

    target = None
    checks: list[str] = []
    if args.target is not None:
        target_config, target_weights = _read(ctx, args.target, endpoint)
        target = _facts(args.target.label(), target_config, target_weights)
        if target_model is not None and not _names_the_same_model(target_model, args.target):
            where = "config" if target_model_source == "config" else "model card"
            notes.append(
                f"the drafter's {where} names {target_model} as the model it was trained for; the target "
                f"given is {target.source}: check that it is that model"
            )
        problems: list[str] = []
        layers = target.num_hidden_layers
        if layer_ids and layers is not None:
            outside = [i for i in layer_ids if not 0 <= i < layers]
            if outside:
                problems.append(
                    f"target_layer_ids {outside} are outside the target's {layers} layers (0..{layers - 1}): "
                    "SGLang cannot capture those hidden states and the server fails at load"
                )
            else:
                checks.append(f"target_layer_ids {layer_ids} lie within the target's {layers} layers")
        declared = config.get("num_target_layers")
        if isinstance(declared, int) and layers is not None and declared != layers:
            notes.append(f"the drafter says it was trained for a {declared}-layer target; this target has {layers}")
        for name, mine, theirs, consequence in (
            (
                "hidden_size",
                drafter.hidden_size,
                target.hidden_size,
                "the drafter's input projection does not fit the target's hidden states: weight shapes mismatch at load",
            ),
            (
                "vocab_size",
                drafter.vocab_size,
                target.vocab_size,
                "draft tokens would not be the target's tokens: load fails or every draft is rejected",
            ),
        ):
            if mine is not None and theirs is not None:
                if mine != theirs:
                    problems.append(f"{name} {mine} differs from the target's {theirs}: {consequence}")
                else:
                    checks.append(f"{name} {mine} matches the target")
        if isinstance(mask_id, int) and target.vocab_size is not None and not 0 <= mask_id < target.vocab_size:
            problems.append(f"mask_token_id {mask_id} is outside the target's vocabulary of {target.vocab_size}")
        if problems:
            raise IncompatibleDrafter(
                f"{drafter.source} does not fit {target.source}: " + "; ".join(problems),
                remedy="use the drafter trained for this target (same model family and revision), "
                "or serve the target this drafter was trained for",
                details={
                    "problems": problems,
                    "target_layer_ids": layer_ids,
                    "target_layers": layers,
                    "drafter_hidden_size": drafter.hidden_size,
                    "target_hidden_size": target.hidden_size,
                    "drafter_vocab_size": drafter.vocab_size,
                    "target_vocab_size": target.vocab_size,
                },
            )
    else:
        notes.append("no target given: layer ids, hidden size and vocab were not checked")

    block_size = int(block) if isinstance(block, int) else SGLANG_DEFAULT_BLOCK_SIZE
    summary = (
        f"{drafter.source}: DFlash drafter{f' for {target_model}' if target_model else ''}, "
        f"{drafter.num_hidden_layers} draft layers, block_size {block_size}"
        f"{'' if block is not None else ' (SGLang default)'}, hidden {drafter.hidden_size}, vocab {drafter.vocab_size}, "
        f"{drafter.dtype or 'dtype unknown'}, weights {drafter.weight_size or 'unknown'}"
        + (f"; fits {target.source} ({len(checks)} checks)" if target else "")
    )
    return DrafterConfig(
        drafter=drafter,
        target=target,
        is_dflash=True,
        block_size=block_size,
        block_size_from=block_from if block is not None else "sglang_default",
        target_layer_ids=layer_ids,
        target_layer_ids_from=layers_from,
        mask_token=str(mask_token) if mask_token else DEFAULT_MASK_TOKEN,
        mask_token_id=mask_id if isinstance(mask_id, int) else None,
        draft_layers=drafter.num_hidden_layers,
        target_model=target_model,
        target_model_source=target_model_source,
        checks=checks,
        notes=notes,
        summary=summary,
    )
