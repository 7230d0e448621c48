"""The search policies' settings, read from the policy spec (`search:tpe`, `search:random:trials=12;seed=3`).

Kept apart from search.py so that reading a spec loads neither Optuna nor the pipeline (every `specops` command
imports the policies' resolver).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .playbook_settings import PlaybookSettings, settings_pairs, settings_text

SEARCH = "search"
SAMPLERS = ("tpe", "random")
# The playbook's settings that a search takes: how each level is measured. The rest say how the playbook chooses
# what to measure, which the search does instead.
MEASUREMENT_SETTINGS = frozenset(
    {
        "levels",
        "bench_duration_s",
        "bench_input_len",
        "bench_output_len",
        "bench_warmup_requests",
        "acceptance_prompts",
        "acceptance_max_new_tokens",
        "acceptance_concurrency",
    }
)


class SearchSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sampler: Literal["tpe", "random"] = "tpe"
    trials: int = Field(default=8, ge=1, le=500, description="Configurations launched and benchmarked")
    seed: int = Field(default=0, ge=0, description="The sampler's seed: the same seed, the same proposals")
    startup: int = Field(
        default=4, ge=1, description="TPE: trials drawn at random (the defaults included) before its model proposes"
    )
    defaults: bool = Field(
        default=True,
        description="Start from the configurations the playbook starts from: the first layout autoregressive and "
        "speculative, at SGLang's defaults (they count as trials)",
    )
    measurement: PlaybookSettings = Field(
        default_factory=PlaybookSettings, description="How each level is measured (the playbook's settings)"
    )

    def spec(self) -> str:
        """The policy spec that gives these settings (`search:tpe` for the defaults)."""
        changed = self.model_dump(exclude_defaults=True, exclude={"sampler", "measurement"})
        measured = self.measurement.model_dump(exclude_defaults=True)
        changed |= {k: v for k, v in measured.items() if k in MEASUREMENT_SETTINGS}
        return f"{SEARCH}:{self.sampler}" + (f":{settings_text(changed)}" if changed else "")

    def describe(self) -> str:
        how = "TPE" if self.sampler == "tpe" else "random search"
        return f"{how} (Optuna, seed {self.seed})"


class SearchSettingsError(ValueError):
    """A `search:...` spec that does not parse; the message names the key and the accepted form."""


def is_search_spec(spec: str) -> bool:
    return spec == SEARCH or spec.startswith(SEARCH + ":")


def parse_search_spec(spec: str) -> SearchSettings:
    """`search:tpe`, `search:random`, with settings after a colon: `search:tpe:trials=12;seed=3`."""
    if not is_search_spec(spec):
        raise SearchSettingsError(f"not a search spec: {spec!r}")
    _, _, rest = spec.partition(":")
    sampler, _, pairs = rest.partition(":")
    if sampler not in SAMPLERS:
        raise SearchSettingsError(
            f"search policy {spec!r}: name the sampler, {' or '.join(f'search:{s}' for s in SAMPLERS)}"
        )
    own = set(SearchSettings.model_fields) - {"sampler", "measurement"}
    values: dict[str, object] = {"sampler": sampler}
    measurement: dict[str, object] = {}
    for pair, key, value in settings_pairs(pairs):
        if value is not None and key in own:
            values[key] = value
        elif value is not None and key in MEASUREMENT_SETTINGS:
            measurement[key] = [v.strip() for v in value.split(",")] if key == "levels" else value
        else:
            keys = ", ".join(sorted(own | MEASUREMENT_SETTINGS))
            raise SearchSettingsError(f"search setting {pair!r}: expected key=value with key one of {keys}")
    try:
        return SearchSettings.model_validate({**values, "measurement": PlaybookSettings.model_validate(measurement)})
    except ValidationError as exc:
        raise SearchSettingsError(f"bad search settings in {spec!r}: {exc.errors()[0]['msg']}") from None
