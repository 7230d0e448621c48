"""The `compare` tool: speculative against autoregressive at each concurrency, from this run's benchmarks so far.

A model comparing by hand divides tok/s and calls a 3% difference a win. This
tool answers with what the report will say, computed by the same code
(agent/report: the evidence from the run's transcript, the server each
benchmark measured, compare_levels, find_crossover): per level the best
speculative and the best autoregressive configuration, the speedup with its
95% interval, the verdict with the tie rule, and the crossover. Given `a` and
`b` (configurations, or drafters: a run comparing drafters asks which wins), it
answers A against B per level instead, a drafter at its fastest configuration
there, as the report's head_to_head does (head_to_head.py). It reads the host
nothing; it reads the run's own transcript.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from specops.tools.errors import InvalidToolInput
from specops.transcripts import read_transcript

from .loop_tools import COMPARE_TOOL as COMPARE_TOOL  # its name, where it always was
from .report.comparison import bracketing_levels, compare_levels, find_crossover
from .report.drafters import Drafters
from .report.evidence import gather_evidence
from .report.head_to_head import head_to_head, rows_by_drafter
from .report.naming import ConfigNames
from .report.rows import benchmark_rows
from .report.schema import BenchmarkRow, Crossover, HeadToHeadLevel, LevelComparison
from .report.servers import ServerTimeline

COMPARE_DESCRIPTION = (
    "Per concurrency, this run's best speculative against its best autoregressive benchmark: speedup, 95% interval, "
    "verdict and crossover, as the report will say. With a and b (configurations or drafters, e.g. two repo ids): A "
    "against B per level, a drafter at its fastest configuration. Runs nothing on the host."
)
TIE_RULE = "a level is a tie when the speedup's 95% interval includes 1 (or cannot be bounded)"


class UnknownComparand(InvalidToolInput):
    """a or b names no configuration benchmarked and no drafter of this run."""


class CompareArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a: str | None = Field(
        default=None, description="A configuration as the report names it (tp8+eagle3) or a drafter (its repo id)"
    )
    b: str | None = Field(default=None, description="The other side, the same way: give a and b, or neither")

    @model_validator(mode="after")
    def _both_or_neither(self) -> CompareArgs:
        if (self.a is None) != (self.b is None):
            raise ValueError("give both a and b (A against B), or neither (speculative against autoregressive)")
        if self.a is not None and self.a == self.b:
            raise ValueError("a and b name the same thing: name two configurations or two drafters")
        return self


class CompareResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    levels: list[LevelComparison]
    crossover: Crossover
    configurations: list[str] = Field(description="The configurations benchmarked, by the names the report uses")
    drafters: dict[str, list[str]] = Field(
        default_factory=dict, description="Each drafter benchmarked and the configurations that served it"
    )
    a: str | None = Field(default=None, description="A, as named in head_to_head (a drafter's repo id, or a config)")
    b: str | None = None
    head_to_head: list[HeadToHeadLevel] = Field(
        default_factory=list, description="With a and b: A against B at each level both were measured at"
    )
    tie_rule: str = TIE_RULE
    notes: list[str] = Field(default_factory=list, description="What the evidence could not attribute, and why")


def compare_run(transcript_path: Path, args: CompareArgs | None = None) -> CompareResult:
    """The comparison the report would make of the run recorded at `transcript_path`, as it stands; with a and b,
    A against B. An a or b that names nothing of this run raises UnknownComparand, naming what it knows."""
    evidence = gather_evidence(read_transcript(transcript_path).events)
    notes = list(evidence.notes)
    names = ConfigNames(launch.config for launch in evidence.launches)
    rows = benchmark_rows(evidence, ServerTimeline(evidence, names), notes)
    levels = compare_levels(rows)
    drafters = Drafters(evidence)
    serving = drafters.serving({names.name(launch.config): launch.config for launch in evidence.launches})
    grouped = rows_by_drafter(rows, serving)
    compared: list[HeadToHeadLevel] = []
    a = b = None
    if args is not None and args.a is not None and args.b is not None:
        (a, a_rows), (b, b_rows) = (_side(name, rows, grouped, drafters) for name in (args.a, args.b))
        compared = head_to_head(a, a_rows, b, b_rows, [r for r in rows if not r.speculative])
        if not compared:
            notes.append(f"no level was measured for both {a} and {b}")
    return CompareResult(
        levels=levels,
        crossover=find_crossover(levels, bracketing_levels(rows)),
        configurations=list(dict.fromkeys(r.config for r in rows)),
        drafters={d: list(dict.fromkeys(r.config for r in mine)) for d, mine in grouped.items()},
        a=a,
        b=b,
        head_to_head=compared,
        notes=notes,
    )


def _side(
    name: str, rows: list[BenchmarkRow], grouped: dict[str, list[BenchmarkRow]], drafters: Drafters
) -> tuple[str, list[BenchmarkRow]]:
    """What a or b names, and its rows: a configuration's, or every configuration's that served a drafter."""
    mine = [r for r in rows if r.config == name]
    if mine:
        return name, mine
    identity = name if name in grouped else drafters.place(name)  # a path or repo@revision: the drafter there
    if identity in grouped:
        return identity, grouped[identity]
    if identity in drafters.identities:
        return identity, []  # read, never benchmarked: no level to compare
    configurations = list(dict.fromkeys(r.config for r in rows))
    known = list(dict.fromkeys([*grouped, *drafters.identities]))
    raise UnknownComparand(
        f"{name!r} names no configuration benchmarked in this run and no drafter of it",
        remedy=f"name one of the configurations ({', '.join(configurations) or 'none yet'}) or drafters "
        f"({', '.join(known) or 'none yet'})",
        details={"configurations": configurations, "drafters": known},
    )


def compare_view(result: CompareResult) -> dict[str, object]:
    """One row per level, and the crossover in words (its method is in the report); with a and b, A against B."""
    if result.a is not None:
        return _head_to_head_view(result)
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
    view: dict[str, object] = {
        "columns": columns,
        "levels": rows,
        "crossover": result.crossover.statement,
        "tie_rule": result.tie_rule,
        "configurations": result.configurations,
    }
    if result.drafters:
        view["drafters"] = result.drafters
    return {**view, "notes": result.notes}


def _head_to_head_view(result: CompareResult) -> dict[str, object]:
    """A against B per level: each side's best configuration, the ratio, its interval, the verdict, each against
    the best autoregressive configuration."""
    columns = ["C", "a_config", "a_tok_s", "b_config", "b_tok_s", "a_over_b", "a_over_b_ci95", "verdict"]
    columns += ["a_vs_ar", "b_vs_ar"]
    rows = [
        [
            h.concurrency,
            h.a.config,
            h.a.output_tok_s,
            h.b.config,
            h.b.output_tok_s,
            h.ratio,
            list(h.ratio_ci95) if h.ratio_ci95 else None,
            h.winner,
            h.a.vs_autoregressive,
            h.b.vs_autoregressive,
        ]
        for h in result.head_to_head
    ]
    return {
        "a": result.a,
        "b": result.b,
        "columns": columns,
        "levels": rows,
        "tie_rule": result.tie_rule,
        "notes": result.notes + [f"C={h.concurrency}: {n}" for h in result.head_to_head for n in h.notes],
    }
