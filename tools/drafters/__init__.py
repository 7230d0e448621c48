"""Drafters: reading a draft model's config, settling the speculative algorithm it needs, checking it fits."""

from .defaults import DraftSettings, sglang_defaults
from .families import DFLASH_ARCHITECTURE, SPOKEN_NAMES, algorithm_of, dflash_family, family, served_by
from .model_facts import ModelConfigFacts
from .sources import ConfigNotFound, ModelSource
from .tool import DrafterConfig, IncompatibleDrafter, NotADrafter, ReadDrafterConfigArgs, read_drafter_config
from .trained_for import card_base_models, config_target_model

__all__ = [
    "DFLASH_ARCHITECTURE",
    "ConfigNotFound",
    "DraftSettings",
    "DrafterConfig",
    "IncompatibleDrafter",
    "ModelConfigFacts",
    "ModelSource",
    "NotADrafter",
    "SPOKEN_NAMES",
    "ReadDrafterConfigArgs",
    "algorithm_of",
    "card_base_models",
    "config_target_model",
    "dflash_family",
    "family",
    "read_drafter_config",
    "served_by",
    "sglang_defaults",
]
