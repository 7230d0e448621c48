"""Replay, fork and resume of recorded runs: today's agent code re-driven from a transcript.

    replay(run)                                  offline: recorded tool results, no model, no host
    replay(run, live_host="sim:seed-ct200")      recorded policy, real tools on a fresh host
    replay(run, live_host=H, fork_at=N, fork_model=M)   the recorded policy up to event N, then M
    resume(run_dir)                              a killed run continues, appending to its transcript

transcripts/ only stores and reads events; everything that drives the agent is here.
"""

from .divergence import Divergence, ReplayDiverged
from .recorded_run import NotATranscript, RecordedRun, transcript_path
from .replay import ReplayRefused, ReplayResult, replay, replay_async

__all__ = [
    "Divergence",
    "NotATranscript",
    "RecordedRun",
    "ReplayDiverged",
    "ReplayRefused",
    "ReplayResult",
    "replay",
    "replay_async",
    "transcript_path",
]
