"""What tuning the speculative settings gained over SGLang's defaults, per concurrency, from the measured table.

At each level: the fastest speculative configuration launched at SGLang's default
settings against the fastest speculative configuration of any setting. A level where
the defaults stay fastest gains 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from .schema import BenchmarkRow, ConfigTried, TuningLevel, TuningSection


def tuning_section(configs: Sequence[ConfigTried], rows: Sequence[BenchmarkRow]) -> TuningSection | None:
    speculative = {c.name: c for c in configs if c.speculative}
    at_defaults = {name for name, c in speculative.items() if c.sglang_defaults}
    tuned = [name for name, c in speculative.items() if c.sglang_defaults is False]
    measured = [r for r in rows if r.config in speculative and not r.requests_failed]
    if not tuned or not at_defaults or not any(r.config in tuned for r in measured):
        return None
    levels = []
    for level in sorted({r.concurrency for r in measured}):
        here = [r for r in measured if r.concurrency == level]
        defaults = max((r for r in here if r.config in at_defaults), key=lambda r: r.output_tok_s, default=None)
        best = max(here, key=lambda r: r.output_tok_s)
        if defaults is None or defaults.output_tok_s <= 0:
            continue
        levels.append(
            TuningLevel(
                concurrency=level,
                defaults_config=defaults.config,
                defaults_tok_s=defaults.output_tok_s,
                best_config=best.config,
                best_tok_s=best.output_tok_s,
                gain=best.output_tok_s / defaults.output_tok_s - 1,
            )
        )
    algorithm = next(c.algorithm for c in speculative.values() if c.algorithm)
    return TuningSection(algorithm=algorithm or "", tuned=tuned, levels=levels)
