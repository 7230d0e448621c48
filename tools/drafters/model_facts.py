"""The figures of one model's config.json that the checks and the planner read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..disk import human_bytes


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


def text_field(config: dict[str, Any], name: str) -> Any:
    """A language-model field: from text_config when the model nests one (Kimi-K2.6, other multimodal models)."""
    text = config.get("text_config")
    if isinstance(text, dict) and name in text:
        return text[name]
    return config.get(name)


def model_facts(label: str, config: dict[str, Any], weight_bytes: int | None) -> ModelConfigFacts:
    dtype = text_field(config, "dtype") or text_field(config, "torch_dtype")
    return ModelConfigFacts(
        source=label,
        architectures=list(config.get("architectures") or []),
        model_type=config.get("model_type"),
        num_hidden_layers=text_field(config, "num_hidden_layers"),
        hidden_size=text_field(config, "hidden_size"),
        vocab_size=text_field(config, "vocab_size"),
        dtype=str(dtype) if dtype else None,
        weight_bytes=weight_bytes,
        weight_size=human_bytes(weight_bytes) if weight_bytes else None,
    )
