"""read_drafter_config: which speculative algorithm serves this drafter, and does it fit the target it is meant for?

Reads the drafter's and the target's config.json, from the host's disk (a path) or
from the Hub the host uses (a repo id; only config.json and the model card are
fetched, here, never the weights), and settles the algorithm from the evidence:

- the drafter's `architectures`, by the draft classes the SGLang releases load
  (DFlash family, EAGLE-3 such as Eagle3DeepseekV2ForCausalLM, EAGLE, MTP checkpoints);
- no drafter, a target with `num_nextn_predict_layers` > 0: its own MTP heads (NEXTN);
- the goal's words (`algorithm`): NGRAM needs no drafter; STANDALONE takes a plain
  model of the target's family; a request that contradicts the drafter is refused.

Then checks the drafter against the target as that algorithm's SGLang worker will at
load time (dflash.py, eagle.py, mtp.py, standalone.py), says which model the drafter
was trained for (trained_for.py) and what SGLang would use for steps, top-k and draft
tokens when the launch passes none (defaults.py), by the host's SGLang release.

A repo no algorithm can use raises NotADrafter; one that does not fit its target
raises IncompatibleDrafter, saying what SGLang would do with it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...sglang_releases.facts import LATEST, ReleaseFacts, load
from ..context import ToolContext
from ..errors import ErrorKind, InvalidToolInput, ToolError
from ..hub import host_hub_endpoint
from ..registry import tool
from ..sglang.capabilities import read_capabilities
from ..sglang.config import SpeculativeAlgorithm
from .card_acceptance import CardAcceptance, card_acceptance
from .defaults import DraftSettings, sglang_defaults
from .dflash import SGLANG_DEFAULT_BLOCK_SIZE, check_dflash, dflash_notes, layer_ids_problem, read_dflash
from .eagle import check_eagle, eagle_notes, read_eagle
from .families import DFLASH_ARCHITECTURE, SPOKEN_NAMES, algorithm_of, family, served_by
from .fit import Fit
from .model_facts import ModelConfigFacts, model_facts
from .mtp import check_mtp_in_target
from .sources import ModelSource, read_config
from .standalone import check_standalone
from .trained_for import TargetModelSource, names_the_same_model, read_card, trained_for

Algorithm = SpeculativeAlgorithm
# The algorithms that run a separate draft model the goal names.
_WITH_DRAFTER = (Algorithm.DFLASH, Algorithm.EAGLE3, Algorithm.EAGLE, Algorithm.STANDALONE)


class NotADrafter(ToolError):
    kind = ErrorKind.NOT_A_DRAFTER


class IncompatibleDrafter(ToolError):
    kind = ErrorKind.INCOMPATIBLE_DRAFTER


class ReadDrafterConfigArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    drafter: ModelSource | None = Field(default=None, description="None for NEXTN (MTP heads) or NGRAM")
    target: ModelSource | None = Field(default=None, description="The model it drafts for: checked against it")
    algorithm: SpeculativeAlgorithm | None = Field(default=None, description="As the goal asks; None: from the configs")

    @model_validator(mode="after")
    def _something_to_read(self) -> ReadDrafterConfigArgs:
        if self.drafter is None and self.target is None and self.algorithm is not Algorithm.NGRAM:
            raise ValueError("give the drafter, or the target for its own MTP heads (or algorithm NGRAM)")
        return self


LayerIdsFrom = Literal["dflash_config", "top_level", "eagle_config", "absent"]


class DrafterConfig(BaseModel):
    algorithm: SpeculativeAlgorithm = Field(description="The --speculative-algorithm that serves this drafter")
    identified_by: str = Field(description="The evidence the algorithm was settled from")
    drafter: ModelConfigFacts | None = Field(
        description="None: no separate draft model (MTP heads in the target, n-gram)"
    )
    target: ModelConfigFacts | None
    sglang_version: str | None = Field(
        description="The SGLang release whose rules and defaults were applied; None in a record from before"
    )
    sglang_defaults: DraftSettings | None = Field(
        description="Steps, top-k and draft tokens SGLang uses when the launch passes none; None: the release has "
        "no such choice"
    )
    block_size: int | None = Field(
        default=None, description="DFLASH: what SGLang will use when --speculative-num-draft-tokens is not given"
    )
    block_size_from: Literal["dflash_config", "top_level", "sglang_default"] | None = None
    target_layer_ids: list[int] | None = Field(
        default=None,
        description="The target layers the drafter reads hidden states from (DFLASH target_layer_ids, EAGLE-3 aux "
        "layers); None: SGLang picks them",
    )
    target_layer_ids_from: LayerIdsFrom = "absent"
    mask_token: str | None = Field(default=None, description="DFLASH's mask token")
    mask_token_id: int | None = None
    draft_vocab_size: int | None = Field(default=None, description="EAGLE-3: the drafter's reduced vocabulary")
    draft_layers: int | None = None
    target_model: str | None = Field(
        default=None, description="The model the drafter was trained for, as its config or model card names it"
    )
    target_model_source: TargetModelSource | None = Field(
        default=None, description="config: a key of config.json; model_card: base_model in README.md's front matter"
    )
    card_acceptance: CardAcceptance | None = Field(
        default=None, description="Acceptance length per dataset as the drafter's model card states it"
    )
    checks: list[str] = Field(description="What was checked against the target and held")
    notes: list[str]
    summary: str

    @property
    def is_dflash(self) -> bool:
        return self.algorithm is Algorithm.DFLASH

    @model_validator(mode="before")
    @classmethod
    def _from_an_older_record(cls, data: Any) -> Any:
        """A transcript recorded when specops knew only DFlash says `is_dflash` and no algorithm: read it as DFLASH."""
        if isinstance(data, dict) and "algorithm" not in data and data.get("is_dflash"):
            data = {k: v for k, v in data.items() if k != "is_dflash"}
            data.update(
                algorithm=Algorithm.DFLASH.value,
                identified_by="is_dflash, in a record from before specops read other algorithms",
                sglang_version=None,
                sglang_defaults=None,
            )
        return data


def drafter_config_view(config: DrafterConfig) -> dict[str, Any]:
    """The algorithm, the settings a launch derives and what was checked; the figures the summary states (the model
    it was trained for among them), the layer ids the checks name and where each setting came from stay in the
    transcript."""
    shown = config.model_dump(
        mode="json",
        include={"algorithm", "sglang_defaults", "block_size", "checks", "notes", "summary"},
        exclude_none=True,
    )
    if config.drafter is not None:  # the target is the caller's; its checks say how it fits
        shown["architectures"] = config.drafter.architectures
    return shown


def _host_release(ctx: ToolContext, notes: list[str]) -> ReleaseFacts:
    """The host's SGLang release (its rules and defaults); the newest modelled one when it cannot be read."""
    try:
        return read_capabilities(ctx.host).release
    except ToolError as exc:
        notes.append(f"the host's SGLang could not be read ({exc.what}): SGLang {LATEST}'s rules were applied")
        return load(LATEST)


def _not_a_drafter(drafter: ModelConfigFacts, asked: Algorithm | None) -> NotADrafter:
    known = ", ".join(
        f"{a.value}: {', '.join(family(a))}" for a in (Algorithm.DFLASH, Algorithm.EAGLE3, Algorithm.EAGLE)
    )
    return NotADrafter(
        f"{drafter.source} is not a draft model: its architectures are {drafter.architectures or 'not given'}, none "
        f"a speculative worker loads ({known})" + (f"; asked for {asked.value}" if asked else ""),
        remedy="pass a drafter repo; to draft with a small model of the target's family, ask for a standalone "
        "drafter (algorithm STANDALONE) and name the target; if this is the target model, pass it as the target "
        "(MTP and n-gram need no drafter)",
        details={"source": drafter.source, "architectures": drafter.architectures, "model_type": drafter.model_type},
    )


def _settle(asked: Algorithm | None, drafter: ModelConfigFacts | None) -> tuple[Algorithm, str]:
    """The algorithm and the evidence for it; NotADrafter when the drafter cannot serve what was asked."""
    if asked is Algorithm.NGRAM:
        return asked, "asked for n-gram speculation: no draft model, proposals come from the text itself"
    if drafter is None:
        if asked not in (None, Algorithm.NEXTN, Algorithm.EAGLE):
            raise InvalidToolInput(
                f"{asked.value if asked else ''} needs a draft model and none was given",
                remedy="pass the drafter (a repo id or a path on the host)",
            )
        return Algorithm.NEXTN, "no drafter: the target's own MTP heads (num_nextn_predict_layers)"
    found = algorithm_of(drafter.architectures)
    if found is None:
        if asked is Algorithm.STANDALONE:
            return (
                asked,
                f"asked for a standalone drafter: {drafter.source} is a plain {'/'.join(drafter.architectures)}",
            )
        raise _not_a_drafter(drafter, asked)
    algorithm, architecture = found
    compatible = asked in (None, algorithm) or {asked, algorithm} <= {
        Algorithm.EAGLE,
        Algorithm.EAGLE3,
        Algorithm.NEXTN,
    }
    if not compatible:
        assert asked is not None
        raise NotADrafter(
            f"{drafter.source} is a {algorithm.value} drafter ({architecture}), not a {asked.value} one: "
            f"SGLang with --speculative-algorithm {asked.value} would fail to load it",
            remedy=f"serve it with {algorithm.value}, or pass a {asked.value} drafter",
            details={"source": drafter.source, "architectures": drafter.architectures, "asked": asked.value},
        )
    why = f"the drafter's architecture {architecture} is served under {algorithm.value}"
    if asked is not None and asked is not algorithm:
        why += f" (asked for {asked.value}: same family, {algorithm.value} is the worker that loads it)"
    return algorithm, why


@tool("read_drafter_config", mutates=False, view=drafter_config_view)
def read_drafter_config(ctx: ToolContext, args: ReadDrafterConfigArgs) -> DrafterConfig:
    """The drafter's config (host disk or Hub): the algorithm it needs, the model it was trained for, its settings
    and SGLang's defaults; checked against the target as SGLang would."""
    endpoint = host_hub_endpoint(ctx.host)
    notes: list[str] = []
    release = _host_release(ctx, notes)
    drafter_config: dict[str, Any] = {}
    drafter = None
    if args.drafter is not None:
        drafter_config, weights = read_config(ctx, args.drafter, endpoint)
        drafter = model_facts(args.drafter.label(), drafter_config, weights)
    target_config: dict[str, Any] | None = None
    target = None
    if args.target is not None:
        target_config, target_weights = read_config(ctx, args.target, endpoint)
        target = model_facts(args.target.label(), target_config, target_weights)
    algorithm, why = _settle(args.algorithm, drafter)
    if algorithm is Algorithm.NGRAM and drafter is not None:
        notes.append(f"n-gram speculation uses no draft model: {drafter.source} is not used")
        drafter, drafter_config = None, {}

    fit = Fit(notes=notes)
    extra: dict[str, Any] = {}
    target_model: str | None = None
    target_model_source: TargetModelSource | None = None
    stated: CardAcceptance | None = None
    if drafter is not None and args.drafter is not None:
        card = read_card(ctx, args.drafter, endpoint, fit.notes)
        stated = card_acceptance(card) if card else None
        if algorithm is not Algorithm.STANDALONE:
            target_model, target_model_source = trained_for(drafter_config, card, fit.notes)
        architecture = next((a for a in drafter.architectures if a in family(algorithm)), None)
        if architecture is not None:
            served_here = served_by(release, algorithm)
            if architecture not in served_here:
                fit.notes.append(
                    f"{architecture} is served under {algorithm.value} from SGLang {family(algorithm)[architecture]}; "
                    f"the host's SGLang {release.version} does not serve it"
                )
            elif algorithm is Algorithm.DFLASH and architecture != DFLASH_ARCHITECTURE:
                fit.notes.append(
                    f"{architecture} is served under DFLASH from SGLang {family(algorithm)[architecture]} (older "
                    f"releases serve only {DFLASH_ARCHITECTURE})"
                )

    if algorithm is Algorithm.DFLASH:
        assert drafter is not None
        fields = read_dflash(drafter_config)
        fit.notes.extend(dflash_notes(fields))
        bad = layer_ids_problem(fields)
        if bad:
            raise IncompatibleDrafter(
                f"{drafter.source}: {bad}",
                remedy="use a drafter whose config lists the target layers it was trained on",
                details={"target_layer_ids": fields.target_layer_ids},
            )
        extra = {
            "block_size": fields.block_size or SGLANG_DEFAULT_BLOCK_SIZE,
            "block_size_from": fields.block_size_from if fields.block_size is not None else "sglang_default",
            "target_layer_ids": fields.target_layer_ids,
            "target_layer_ids_from": fields.target_layer_ids_from,
            "mask_token": fields.mask_token,
            "mask_token_id": fields.mask_token_id,
        }
        if target is not None:
            check_dflash(fields, drafter, target, fit)
    elif algorithm in (Algorithm.EAGLE3, Algorithm.EAGLE) or (algorithm is Algorithm.NEXTN and drafter is not None):
        assert drafter is not None
        eagle = read_eagle(drafter_config)
        extra = {
            "target_layer_ids": eagle.aux_layer_ids,
            "target_layer_ids_from": "eagle_config" if eagle.aux_layer_ids else "absent",
            "draft_vocab_size": eagle.draft_vocab_size,
        }
        fit.notes.extend(eagle_notes(eagle, drafter))
        if target is not None:
            check_eagle(eagle, drafter, target, fit)
    elif algorithm is Algorithm.NEXTN:
        if target is None or target_config is None:
            raise InvalidToolInput(
                "MTP drafts with the target's own heads: the target is needed to check them",
                remedy="pass the target (its path on the host or its repo id)",
            )
        check_mtp_in_target(target_config, target, release, fit)
    elif algorithm is Algorithm.STANDALONE and drafter is not None and target is not None:
        check_standalone(drafter, target, fit)
    if target is None and algorithm is not Algorithm.NGRAM:
        fit.notes.append("no target given: nothing was checked against it")
    elif target is not None and target_model is not None and args.target is not None:
        if not names_the_same_model(target_model, args.target):
            where = "config" if target_model_source == "config" else "model card"
            fit.notes.append(
                f"the drafter's {where} names {target_model} as the model it was trained for; the target "
                f"given is {target.source}: check that it is that model"
            )
    what = drafter.source if drafter is not None else (target.source if target is not None else "n-gram")
    if fit.problems:
        raise IncompatibleDrafter(
            f"{what} does not fit {target.source if target else 'the target'} under {algorithm.value}: "
            + "; ".join(fit.problems),
            remedy="use the drafter trained for this target (same model family and revision), "
            "or serve the target this drafter was trained for",
            details={
                "algorithm": algorithm.value,
                "problems": fit.problems,
                "target_layer_ids": extra.get("target_layer_ids"),
                "target_layers": target.num_hidden_layers if target else None,
                "drafter_hidden_size": drafter.hidden_size if drafter else None,
                "target_hidden_size": target.hidden_size if target else None,
                "drafter_vocab_size": drafter.vocab_size if drafter else None,
                "target_vocab_size": target.vocab_size if target else None,
            },
        )
    target_architecture = (target.architectures or [""])[0] if target else ""
    defaults = sglang_defaults(algorithm, release, target_architecture, extra.get("block_size"))
    return DrafterConfig(
        algorithm=algorithm,
        identified_by=why,
        drafter=drafter,
        target=target,
        sglang_version=release.version,
        sglang_defaults=defaults,
        draft_layers=drafter.num_hidden_layers if drafter else None,
        target_model=target_model,
        target_model_source=target_model_source,
        card_acceptance=stated,
        checks=fit.checks,
        notes=fit.notes,
        summary=_summary(algorithm, drafter, target, target_model, extra, defaults, fit),
        **extra,
    )


def _summary(
    algorithm: Algorithm,
    drafter: ModelConfigFacts | None,
    target: ModelConfigFacts | None,
    target_model: str | None,
    extra: dict[str, Any],
    defaults: DraftSettings | None,
    fit: Fit,
) -> str:
    fits = f"; fits {target.source} ({len(fit.checks)} checks)" if target else ""
    defaults_said = defaults.label() if defaults else "none in this release"
    if drafter is None:
        if algorithm is Algorithm.NGRAM:
            return f"n-gram speculation (no draft model); SGLang defaults: {defaults_said}"
        assert target is not None
        return f"{target.source}: MTP heads in the target (NEXTN); SGLang defaults: {defaults_said}{fits}"
    trained = f" for {target_model}" if target_model else ""
    if algorithm is Algorithm.DFLASH:
        block = extra["block_size"]
        detail = f"block_size {block}{'' if extra['block_size_from'] != 'sglang_default' else ' (SGLang default)'}"
    else:
        detail = f"SGLang defaults: {defaults_said}"
        if extra.get("draft_vocab_size"):
            detail += f", draft vocab {extra['draft_vocab_size']}"
    return (
        f"{drafter.source}: {SPOKEN_NAMES[algorithm]} drafter{trained}, {drafter.num_hidden_layers} draft layers, {detail}, "
        f"hidden {drafter.hidden_size}, vocab {drafter.vocab_size}, {drafter.dtype or 'dtype unknown'}, "
        f"weights {drafter.weight_size or 'unknown'}{fits}"
    )
