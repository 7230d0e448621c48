"""Names for server configurations, derived from the ServerConfig so that a person reads what ran.

    tp8-ep4                  tensor parallel 8, expert parallel 4
    tp8-r2                   two replicas of tp8 behind SGLang's Model Gateway
    tp8-ep4+dflash           the same with a DFlash drafter
    tp8-ep4+dflash+no-graphs and CUDA graphs off
    tp8-ep4+dflash-b8        DFlash with block size 8
    tp8+eagle3-s3k1d4        EAGLE-3 with 3 steps, top-k 1, 4 draft tokens (the settings a launch set;
    tp8+eagle3               none: SGLang's defaults)
    tp1+ngram-d4             n-gram with 4 draft tokens
    pp8, tp8-dp8-dpattn      pipeline parallel; DP attention

Two different configurations that would share a name (say, the same
parallelism with two mem_fraction_static values) get the settings that tell
them apart appended, so a name always means one configuration.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from specops.tools.acceptance import CategoryAcceptance
from specops.tools.sglang.config import ServerConfig, SpeculativeAlgorithm

from .schema import AcceptanceStat

# Fields that do not change what is served or how fast: not part of a configuration's identity.
_NOT_IDENTITY = frozenset(
    {"port", "host", "served_model_name", "enable_metrics", "tool_call_parser", "reasoning_parser"}
)


def base_name(config: ServerConfig) -> str:
    parts = []
    if config.tp > 1 or (config.pp == 1 and config.dp == 1):
        parts.append(f"tp{config.tp}")
    if config.ep > 1:
        parts.append(f"ep{config.ep}")
    if config.dp > 1:
        parts.append(f"dp{config.dp}" + ("-dpattn" if config.enable_dp_attention else ""))
    if config.pp > 1:
        parts.append(f"pp{config.pp}")
    if config.replicas > 1:
        parts.append(f"r{config.replicas}")
    name = "-".join(parts)
    algorithm = config.speculative_algorithm
    if algorithm is not None:
        name += "+" + algorithm.value.lower()
        if algorithm is SpeculativeAlgorithm.DFLASH:
            name += f"-b{config.block_size}" if config.block_size else ""
        else:
            settings = [
                f"{letter}{value}"
                for letter, value in (
                    ("s", config.speculative_num_steps),
                    ("k", config.speculative_eagle_topk),
                    ("d", config.block_size),
                )
                if value is not None
            ]
            name += "-" + "".join(settings) if settings else ""
    if not config.cuda_graphs:
        name += "+no-graphs"
    return name


def identity(config: ServerConfig) -> tuple[tuple[str, object], ...]:
    """What makes two configurations the same one, for naming and grouping."""
    dumped = config.model_dump(mode="json", exclude=set(_NOT_IDENTITY))
    return tuple(sorted((k, repr(v)) for k, v in dumped.items()))


class ConfigNames:
    """Hands out one stable name per distinct configuration, in the order they are first seen."""

    def __init__(self, configs: Iterable[ServerConfig] = ()) -> None:
        self._names: dict[tuple[tuple[str, object], ...], str] = {}
        self._first_of: dict[str, ServerConfig] = {}
        for config in configs:
            self.name(config)

    def name(self, config: ServerConfig) -> str:
        key = identity(config)
        if key in self._names:
            return self._names[key]
        name = base_name(config)
        first = self._first_of.get(name)
        if first is not None:
            name += "".join(f"+{field}={value}" for field, value in _differences(first, config))
        taken = set(self._names.values())
        candidate, n = name, 2
        while candidate in taken:
            candidate, n = f"{name}#{n}", n + 1
        self._first_of.setdefault(base_name(config), config)
        self._names[key] = candidate
        return candidate


def _differences(first: ServerConfig, other: ServerConfig) -> list[tuple[str, object]]:
    a = first.model_dump(mode="json", exclude=set(_NOT_IDENTITY))
    b = other.model_dump(mode="json", exclude=set(_NOT_IDENTITY))
    return [(k, b[k]) for k in b if a.get(k) != b[k] and k != "model_path"] or [("model", b["model_path"])]


def stat_label(stat: AcceptanceStat | CategoryAcceptance) -> str:
    """An acceptance figure's row name: `math`, or `math, thinking off` when thinking modes were measured apart."""
    category, thinking = stat.category, stat.thinking
    return f"{category}, thinking {thinking}" if thinking else category


def acceptance_rows(acceptance: Any) -> list[Any]:
    """An acceptance measurement's figures (the report's section, or the tool's result) as tables and plots list
    them: each category, then the overall figure of each thinking mode (or the one overall: raw text)."""
    return [*acceptance.categories, *(acceptance.overall_by_thinking or [acceptance.overall])]
