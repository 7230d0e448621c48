"""The `compare` tool: speculative against autoregressive at each concurrency, from this run's benchmarks so far.

A model comparing by hand divides tok/s and calls a 3% difference a win. This
tool answers with what the report will say, computed by the same code
(agent/report: the evidence from the run's transcript, the server each
benchmark measured, compare_levels, find_crossover): per level the best
speculative and the best autoregressive configuration, the speedup with its
95% interval, the verdict with the tie rule, and the crossover. It reads the
host nothing; it reads the run's own transcript.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from specops.transcripts import read_transcript

from .report.comparison import bracketing_levels, compare_levels, find_crossover
from .report.evidence import gather_evidence
from .report.naming import ConfigNames
from .report.rows import benchmark_rows
from .report.schema import Crossover, LevelComparison
from .report.servers import ServerTimeline

COMPARE_TOOL = "compare"
COMPARE_DESCRIPTION = (
    "Per concurrency, this run's best speculative against its best autoregressive benchmark: speedup, 95% interval, "
    "verdict and crossover, as the report will say. Runs nothing on the host."
)
TIE_RULE = "a level is a tie when the speedup's 95% interval includes 1 (or cannot be bounded)"


class CompareArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CompareResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    levels: list[LevelComparison]
    crossover: Crossover
    configurations: list[str] = Field(description="The configurations benchmarked, by the names the report uses")
    tie_rule: str = TIE_RULE
    notes: list[str] = Field(default_factory=list, description="What the evidence could not attribute, and why")


def compare_run(transcript_path: Path) -> CompareResult:
    """The comparison the report would make of the run recorded at `transcript_path`, as it stands."""
    evidence = gather_evidence(read_transcript(transcript_path).events)
    notes = list(evidence.notes)
    names = ConfigNames(launch.config for launch in evidence.launches)
    rows = benchmark_rows(evidence, ServerTimeline(evidence, names), notes)
    levels = compare_levels(rows)
    return CompareResult(
        levels=levels,
        crossover=find_crossover(levels, bracketing_levels(rows)),
        configurations=list(dict.fromkeys(r.config for r in rows)),
        notes=notes,
    )


def compare_view(result: CompareResult) -> dict[str, object]:
    """One row per level, and the crossover in words (its method is in the report)."""
    columns = [
        "C",
        "best_speculative",
        "spec_tok_s",
        "best_autoregressive",
        "ar_tok_s",
        "speedup",
        "speedup_ci95",
        "verdict",
    ]
    rows = [
        [
            c.concurrency,
            c.best_speculative,
            c.speculative_tok_s,
            c.best_autoregressive,
            c.autoregressive_tok_s,
            c.speedup,
            list(c.speedup_ci95) if c.speedup_ci95 else None,
            c.winner,
        ]
        for c in result.levels
    ]
    return {
        "columns": columns,
        "levels": rows,
        "crossover": result.crossover.statement,
        "tie_rule": result.tie_rule,
        "configurations": result.configurations,
        "notes": result.notes,
    }
