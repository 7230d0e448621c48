"""Which model a drafter was trained for: named in its config.json or, failing that, in its model card."""

from __future__ import annotations

from typing import Any, Literal

import yaml

from ..context import ToolContext
from .sources import MODEL_CARD, ModelSource, card_from_disk, card_from_hub

# Keys of a drafter's config.json (in dflash_config or eagle_config, which win, or at the top level) that name the
# model it drafts for, the most specific first. Training recipes spell it differently; none is standard.
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
NESTED_CONFIGS = ("dflash_config", "eagle_config")
TargetModelSource = Literal["config", "model_card"]


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
    nested = [config[key] for key in NESTED_CONFIGS if isinstance(config.get(key), dict)]
    for where in (*nested, config):
        for key in TARGET_MODEL_KEYS:
            value = where.get(key)
            if isinstance(value, str) and value.strip() and not any(c.isspace() for c in value.strip()):
                return value.strip()
    return None


def read_card(ctx: ToolContext, source: ModelSource, endpoint: str, notes: list[str]) -> str | None:
    """The model card's text (Hub or host disk); None when there is none or it could not be read (said in notes)."""
    if source.repo_id is not None:
        card, problem = card_from_hub(source.repo_id, source.revision, endpoint, ctx.hub_token)
        if problem:
            notes.append(problem)
        return card
    return card_from_disk(ctx.host, ctx.resolve(str(source.path)))


def trained_for(
    config: dict[str, Any], card: str | None, notes: list[str]
) -> tuple[str | None, TargetModelSource | None]:
    """The drafter's target model from its config, else from its model card."""
    named = config_target_model(config)
    if named is not None:
        return named, "config"
    bases = card_base_models(card) if card else []
    if not bases:
        return None, None
    if len(bases) > 1:
        notes.append(
            f"the model card names {len(bases)} base models ({', '.join(bases)}): the first is taken as the target"
        )
    return bases[0], "model_card"


def names_the_same_model(named: str, target: ModelSource) -> bool:
    """Whether the target given is the model the drafter names: the same repo id, or a directory or repo of the
    same name (models/Kimi-K2.6 for moonshotai/Kimi-K2.6)."""
    given = target.repo_id or str(target.path)

    def name(model: str) -> str:
        return model.rstrip("/").rsplit("/", 1)[-1].lower()

    return named.lower() == given.lower() or name(named) == name(given)


__all__ = [
    "MODEL_CARD",
    "card_base_models",
    "config_target_model",
    "names_the_same_model",
    "read_card",
    "trained_for",
]
