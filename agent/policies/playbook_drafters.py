"""A comparison of drafters: what the playbook keeps of each, and the lines its answer says about them.

Each drafter is measured on the same layouts and levels at SGLang's defaults (tuning one and not the other would
compare the tuning, not the drafters). Its sweeps are set aside under its repo id while the next is measured, so
configurations of two drafters with the same name (two DFlash drafters of one block size) never mix. The report
gives the interval and the verdict with the tie rule for each level; the answer gives the figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from specops.tools.acceptance import AcceptanceResult

from .playbook_configs import Candidate
from .playbook_summary import Sweep, best_at, compare, comparison_lines


@dataclass
class DrafterResult:
    repo_id: str
    spoken: str  # its algorithm as people name it (DFlash, EAGLE-3)
    sweeps: dict[str, Sweep] = field(default_factory=dict)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    acceptance: AcceptanceResult | None = None

    @property
    def short(self) -> str:
        return self.repo_id.split("/")[-1]

    def tagged(self, name: str) -> str:
        """A configuration's name with its drafter's, for the answer and the merged sweeps."""
        return f"{name} [{self.short}]"


def drafter_lines(results: list[DrafterResult], ar: dict[str, Sweep]) -> list[str]:
    """Per drafter, its acceptance and its comparison with the best baseline per level; then head to head."""
    lines: list[str] = []
    for result in results:
        if not result.sweeps and result.acceptance is None:
            lines.append(f"{result.repo_id}: not measured (see what is unresolved)")
            continue
        accepted = (
            f"acceptance length {result.acceptance.overall.token_weighted:.2f} (token weighted)"
            if result.acceptance
            else "acceptance not measured"
        )
        lines.append(f"{result.repo_id} ({result.spoken}): {accepted}")
        lines += [f"  {line}" for line in comparison_lines(compare(ar, result.sweeps), result.spoken)]
    for i, first in enumerate(results):
        for second in results[i + 1 :]:
            lines += head_to_head_lines(first, second)
    return lines


def head_to_head_lines(first: DrafterResult, second: DrafterResult) -> list[str]:
    """Per level both were measured at: each one's best configuration and the ratio (intervals: the report)."""
    lines = [f"head to head, {first.short} against {second.short} (each at its best configuration per level):"]
    levels = sorted({c for s in first.sweeps.values() for c in s} & {c for s in second.sweeps.values() for c in s})
    for level in levels:
        a, b = best_at(first.sweeps, level), best_at(second.sweeps, level)
        if a is None or b is None or b[1] <= 0:
            continue
        lines.append(
            f"  C={level}: {first.short} {a[0]} {a[1]:.1f} tok/s vs {second.short} {b[0]} {b[1]:.1f} tok/s "
            f"({a[1] / b[1]:.2f}x)"
        )
    if len(lines) == 1:
        lines.append("  no level measured for both")
    return lines
