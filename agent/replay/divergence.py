"""A divergence: the first place a replay's events differ from the recording, said plainly."""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import BaseModel

_DIFF_LINES = 40


class Divergence(BaseModel):
    """`seq` is the recorded event's (or, when the recording has none there, the replay's)."""

    seq: int
    why: str
    expected: dict[str, Any] | None = None  # the recorded event, masked
    got: dict[str, Any] | None = None  # the event today's code produced, masked

    def diff(self) -> str:
        """A short unified diff of the two events (the changed lines and a little context)."""
        before = _lines(self.expected)
        after = _lines(self.got)
        lines = list(difflib.unified_diff(before, after, "recorded", "replayed", n=2, lineterm=""))
        if len(lines) > _DIFF_LINES:
            lines = lines[:_DIFF_LINES] + [f"... ({len(lines) - _DIFF_LINES} more diff lines)"]
        return "\n".join(lines)

    def describe(self) -> str:
        return f"first divergence at event {self.seq}: {self.why}\n{self.diff()}"


def _lines(event: dict[str, Any] | None) -> list[str]:
    if event is None:
        return ["(no event)"]
    return json.dumps(event, indent=1, sort_keys=True, default=str, ensure_ascii=False).splitlines()


class ReplayDiverged(Exception):
    """Raised where today's code first differs from the recording; it ends the replayed run."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.describe())
        self.divergence = divergence


class ReplayReachedEnd(Exception):
    """The recording of a run that was cut off ends here, and the replay agreed with it all the way: it stops."""
