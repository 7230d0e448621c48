"""A recorded run, read once and indexed for replay: its start, its host, its model turns and tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specops.transcripts import (
    Event,
    HostOpenedEvent,
    ModelRequestEvent,
    ModelResponseEvent,
    RunEndEvent,
    RunStartEvent,
    ToolPair,
    TranscriptReadResult,
    pair_tool_calls,
    read_transcript,
)

from ..policies.playbook_settings import is_playbook_spec
from ..run import TRANSCRIPT


class NotATranscript(ValueError):
    """RUN names neither a run directory with a transcript nor a transcript file."""


def transcript_path(run: str | Path) -> Path:
    """The transcript of RUN: a run directory (its transcript.jsonl[.gz]) or a transcript file."""
    path = Path(run)
    try:
        if path.is_dir():
            for name in (TRANSCRIPT, TRANSCRIPT + ".gz"):
                if (path / name).is_file():
                    return path / name
            raise NotATranscript(
                f"{path} holds no {TRANSCRIPT}: name a run directory (runs/<run-id>) or a transcript file"
            )
        if not path.is_file():
            raise NotATranscript(f"{path} does not exist: name a run directory (runs/<run-id>) or its {TRANSCRIPT}")
    except OSError as exc:  # a name too long for the file system, say
        raise NotATranscript(f"cannot look at {path}: {exc.strerror or exc}") from None
    return path


@dataclass
class RecordedRun:
    read: TranscriptReadResult
    start: RunStartEvent
    host: dict[str, Any]  # what the run's first host_opened event recorded ({} when none)
    last_host: dict[str, Any] = field(default_factory=dict)  # the latest one (a resumed run reopens its host)
    requests: list[ModelRequestEvent] = field(default_factory=list)
    responses: list[ModelResponseEvent] = field(default_factory=list)
    tools: list[ToolPair] = field(default_factory=list)
    end: RunEndEvent | None = None

    @classmethod
    def load(cls, run: str | Path) -> RecordedRun:
        read = read_transcript(transcript_path(run))
        if not read.events or not isinstance(read.events[0], RunStartEvent):
            raise NotATranscript(f"{read.path} does not start with run_start: it is not a whole run's transcript")
        recorded = cls(read=read, start=read.events[0], host={})
        for event in read.events:
            if isinstance(event, HostOpenedEvent):
                described = event.host.model_dump(mode="json")
                recorded.host = recorded.host or described
                recorded.last_host = described
            elif isinstance(event, ModelRequestEvent):
                recorded.requests.append(event)
            elif isinstance(event, ModelResponseEvent):
                recorded.responses.append(event)
            elif isinstance(event, RunEndEvent):
                recorded.end = event
        recorded.tools = pair_tool_calls(read.events)
        return recorded

    @property
    def events(self) -> list[Event]:
        return self.read.events

    @property
    def run_id(self) -> str:
        return self.start.run_id

    @property
    def policy(self) -> str:
        return self.start.policy.name

    @property
    def is_playbook(self) -> bool:
        """The playbook is code, not a model: replay runs today's playbook instead of serving its answers."""
        return is_playbook_spec(self.policy)

    @property
    def policy_spec(self) -> str:
        """The policy as it was asked for (with its settings, e.g. a playbook's), to make it again."""
        return str(self.start.policy.settings.get("spec") or self.policy)

    @property
    def config(self) -> dict[str, Any]:
        return self.start.config
