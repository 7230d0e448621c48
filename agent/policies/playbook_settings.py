"""The playbook's settings: how wide it measures (levels, layouts) and how long each benchmark level runs.

The defaults are the full job (every autoregressive layout, speculative decoding
on the three best, a few tuned settings on the best of those, five concurrency levels). A narrower playbook is asked for in the policy
spec, so that it is recorded in the transcript's run_start with the policy:

    playbook                                   the defaults
    playbook:levels=1,64;spec_layouts=1        two levels, speculation on the best layout only

Eval scenarios use narrow settings to stay fast; the findings they check do not
need the full sweep.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .playbook_configs import BENCHMARK_LEVELS, SPEC_LAYOUTS

PLAYBOOK = "playbook"
SPEC_SEPARATOR = ";"


def settings_text(changed: dict[str, object]) -> str:
    """Settings as a policy spec writes them: `key=value` joined by SPEC_SEPARATOR, tuples as `1,32,64`."""
    return SPEC_SEPARATOR.join(
        f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in changed.items()
    )


def settings_pairs(text: str) -> list[tuple[str, str, str | None]]:
    """A spec's `key=value;key=value` as (pair as written, key, value: None without `=`); `levels` split at commas
    by the caller that knows it."""
    pairs = []
    for pair in filter(None, (p.strip() for p in text.split(SPEC_SEPARATOR))):
        key, eq, value = pair.partition("=")
        pairs.append((pair, key.strip(), value.strip() if eq else None))
    return pairs


_RENAMED = {"dflash_layouts": "spec_layouts"}  # spelled so in the specs of runs recorded before other algorithms


class PlaybookSettingsError(ValueError):
    """A `playbook:...` spec that does not parse; the message names the key and the accepted form."""


class PlaybookSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    levels: tuple[int, ...] = Field(default=BENCHMARK_LEVELS, min_length=1, description="Concurrency levels, ascending")
    ar_layouts: int | None = Field(
        default=None, ge=1, description="At most this many autoregressive layouts (None: all)"
    )
    spec_layouts: int = Field(
        default=SPEC_LAYOUTS, ge=1, description="Speculative decoding on this many of the best autoregressive layouts"
    )
    graphs_off_retry: bool = Field(
        default=True, description="Try CUDA graphs off when graphs-on speculation loses at the top level"
    )
    tune: bool = Field(
        default=True,
        description="Measure a few other speculative settings (steps, top-k, draft tokens; DFlash's block) on the "
        "best speculative layout, chosen by the acceptance measured at SGLang's defaults",
    )
    bracket: bool = Field(
        default=True,
        description="Where the winner changes between two levels more than 2x apart, measure the octaves between "
        "on the fastest configuration of each kind",
    )
    screen_below: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="A baseline layout after the first is measured at the lower half of the levels first, and the rest "
        "only when it reaches this share of the best baseline at one of them or is catching up (0: every layout at "
        "every level)",
    )
    # Each level is measured for this many of the host's seconds once its first requests have their first tokens, and
    # ends when the steady window does (the benchmark's default end: the first answer past the duration closes it;
    # a cut at the duration would lose what a lagging client had not read yet). 64 tokens keep a level's one-wave
    # top concurrency short and the per-request overhead ~2% of a request at C=1.
    # 3.2 s: a few requests at C=1 even for a slow configuration (on a simulated host the client reads the host's
    # clock, so this is the modelled host's time, as it is a real host's).
    bench_duration_s: float = Field(default=3.2, gt=0, le=3600)
    bench_input_len: int = Field(default=128, ge=1)
    bench_output_len: int = Field(default=64, ge=2)
    # SGLang warms the server up at launch; the steady window excludes the ramp, so no per-level warm-up.
    bench_warmup_requests: int = Field(default=0, ge=0)
    acceptance_prompts: int = Field(default=8, ge=2, le=64, description="Prompts per dataset for acceptance")
    acceptance_max_new_tokens: int = Field(default=256, ge=16)
    # Every prompt at once (8 per dataset, 5 datasets, thinking on and off): a request's acceptance does not
    # depend on what else is in the batch, so the eval takes one round instead of ten.
    acceptance_concurrency: int = Field(default=80, ge=1, le=256, description="Acceptance requests in flight at once")

    @field_validator("levels")
    @classmethod
    def _ascending(cls, levels: tuple[int, ...]) -> tuple[int, ...]:
        if any(c < 1 for c in levels) or list(levels) != sorted(set(levels)):
            raise ValueError(f"levels must be distinct positive concurrencies in ascending order, got {list(levels)}")
        return levels

    @property
    def bench_args(self) -> dict[str, object]:
        return {
            "input_len": self.bench_input_len,
            "output_len": self.bench_output_len,
            "duration_s": self.bench_duration_s,
            "warmup_requests": self.bench_warmup_requests,
        }

    @property
    def acceptance_args(self) -> dict[str, object]:
        return {
            "prompts_per_category": self.acceptance_prompts,
            "max_new_tokens": self.acceptance_max_new_tokens,
            "concurrency": self.acceptance_concurrency,
        }

    def spec(self) -> str:
        """The policy spec that gives these settings (`playbook` for the defaults)."""
        changed = self.model_dump(exclude_defaults=True)
        return f"{PLAYBOOK}:{settings_text(changed)}" if changed else PLAYBOOK


def is_playbook_spec(spec: str) -> bool:
    return spec == PLAYBOOK or spec.startswith(PLAYBOOK + ":")


def parse_playbook_spec(spec: str) -> PlaybookSettings:
    """`playbook` or `playbook:key=value;key=value` (levels as `1,32,64`) -> PlaybookSettings."""
    if not is_playbook_spec(spec):
        raise PlaybookSettingsError(f"not a playbook spec: {spec!r}")
    _, _, rest = spec.partition(":")
    values: dict[str, object] = {}
    for pair, key, value in settings_pairs(rest):
        key = _RENAMED.get(key, key)
        if value is None or key not in PlaybookSettings.model_fields:
            raise PlaybookSettingsError(
                f"playbook setting {pair!r}: expected key=value with key one of {', '.join(PlaybookSettings.model_fields)}"
            )
        values[key] = [v.strip() for v in value.split(",")] if key == "levels" else value
        if key == "ar_layouts" and value.lower() in ("", "none", "all"):
            values[key] = None
    try:
        return PlaybookSettings.model_validate(values)
    except ValidationError as exc:
        raise PlaybookSettingsError(f"bad playbook settings in {spec!r}: {exc.errors()[0]['msg']}") from None
