"""The replayed run's recorder: it writes the run's own transcript and checks each event against the recording.

The first divergence is kept and raised (ReplayDiverged) from the call that
recorded it, which ends the replayed run there; the recorder then stays quiet,
so the run's own error handling can record its ending without raising again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from specops.transcripts import EventBase

from ..recording import ObservedRecorder
from .comparator import EventComparator
from .divergence import Divergence, ReplayDiverged, ReplayReachedEnd

E = TypeVar("E", bound=EventBase)


class ComparingRecorder(ObservedRecorder):
    comparator: EventComparator
    divergence: Divergence | None
    end_at: int | None  # a cut-off recording's length: the replay stops when it gets there
    reached_end: bool

    @classmethod
    def factory(
        cls, comparator: EventComparator, *, end_at: int | None = None
    ) -> Callable[[Path, str, bool], ComparingRecorder]:
        def make(path: Path, run_id: str, fsync: bool) -> ComparingRecorder:
            recorder = cls(path, run_id, fsync=fsync)
            recorder.comparator = comparator
            recorder.divergence = None
            recorder.end_at = end_at
            recorder.reached_end = False
            return recorder

        return make

    def record(self, event_type: type[E], /, **fields: Any) -> E:
        event = super().record(event_type, **fields)
        if self.divergence is None and not self.reached_end and self.end_at is not None and event.seq >= self.end_at:
            self.reached_end = True
            raise ReplayReachedEnd(f"the recording stops after event {self.end_at - 1}")
        if self.divergence is None and not self.reached_end:
            divergence = self.comparator.check(event, self.last_written)
            if divergence is not None:
                self.divergence = divergence
                raise ReplayDiverged(divergence)
        return event

    def finish(self) -> Divergence | None:
        """The first divergence, including recorded events the replay never reached."""
        if self.divergence is None and not self.reached_end:
            self.divergence = self.comparator.finish()
        return self.divergence
