"""What a host hands back: the result of a command, and a handle on a detached process."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class CommandResult(BaseModel):
    """One finished (or timed-out) command. Output is decoded as UTF-8, bad bytes replaced."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    argv: list[str]
    exit_code: int | None = Field(
        description="The command's exit status; 128+N when a signal N ended it; None when it was killed for its timeout"
    )
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = Field(description="True when the timeout ran out and the command's process group was killed")
    host: str = Field(description="The spec of the host it ran on")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def check(self) -> CommandResult:
        """This result if the command exited 0; otherwise raise CommandFailed carrying it."""
        if not self.ok:
            from .errors import CommandFailed

            raise CommandFailed(self)
        return self


class DetachedProcess(BaseModel):
    """A long-running process started with Host.start_detached: it outlives the connection that started it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pid: int
    pgid: int = Field(description="Its own process group (it runs in a new session); stop() signals the whole group")
    log_path: str = Field(description="stdout and stderr both go here, appended")
    argv: list[str]
    started_at: datetime
    host: str
    started_on_host: float | None = Field(
        default=None,
        description="The host's clock (epoch seconds) just before the program started: its start-up is timed from here",
    )
