"""The loop guard: an identical call that keeps failing the same way is refused, then ends the run.

"Identical" is the same tool, the same arguments (canonical JSON) and the same
error kind. After `max_repeats` such failures the next identical call is not
run: the model gets a `repeated_failure` error telling it to change approach.
A model that still insists `max_refusals` more times ends the run (LoopDetected)
with the evidence: the call, the error, how often.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from specops.tools.errors import ErrorKind, ToolErrorRecord


def call_key(tool: str, args: dict[str, Any]) -> tuple[str, str]:
    return tool, json.dumps(args, sort_keys=True, default=str, separators=(",", ":"))


class LoopDetected(Exception):
    """The model kept repeating a refused failing call; `evidence` says which and how often."""

    def __init__(self, message: str, evidence: dict[str, Any]) -> None:
        super().__init__(message)
        self.evidence = evidence


@dataclass
class _Failures:
    kind: str
    count: int
    last: ToolErrorRecord
    refusals: int = 0


@dataclass
class RepeatGuard:
    max_repeats: int = 2
    max_refusals: int = 2
    _failures: dict[tuple[str, str], _Failures] = field(default_factory=dict)

    def before(self, tool: str, args: dict[str, Any]) -> ToolErrorRecord | None:
        """None when the call may run; else the refusal to hand back (or LoopDetected when refusals are spent)."""
        failures = self._failures.get(call_key(tool, args))
        if failures is None or failures.count < self.max_repeats:
            return None
        failures.refusals += 1
        evidence = {
            "tool": tool,
            "args": args,
            "error_kind": failures.kind,
            "failures": failures.count,
            "refused": failures.refusals,
            "last_error": failures.last.model_dump(mode="json"),
        }
        if failures.refusals > self.max_refusals:
            raise LoopDetected(
                f"{tool} was called {failures.count + failures.refusals} times with the same arguments; it failed "
                f"{failures.count} times with {failures.kind} and the model did not change approach",
                evidence,
            )
        return ToolErrorRecord(
            kind=ErrorKind.REPEATED_FAILURE,
            what=f"refused: this exact {tool} call already failed {failures.count} times with {failures.kind} "
            f"({failures.last.what})",
            remedy="change approach: different arguments, another tool, or end the run with what failed; "
            "repeating it again ends the run",
            details=evidence,
        )

    def failed(self, tool: str, args: dict[str, Any], error: ToolErrorRecord) -> None:
        key = call_key(tool, args)
        failures = self._failures.get(key)
        if failures is None or failures.kind != error.kind:
            self._failures[key] = _Failures(kind=error.kind, count=1, last=error)
        else:
            failures.count += 1
            failures.last = error

    def succeeded(self, tool: str, args: dict[str, Any]) -> None:
        self._failures.pop(call_key(tool, args), None)
