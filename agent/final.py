"""What a policy hands back when it ends a run: its own account, in words.

The numbers of a run's report never come from here: they are read from the
tools' recorded results (agent/report). A policy says what it concluded, what
it left running and what it could not do; the report checks its claims
against the evidence.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class FinalAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["completed", "partial", "failed", "cannot_do"] = Field(
        description="cannot_do: not a goal this agent can carry out (say why in summary)"
    )
    summary: str = Field(min_length=1, description="What was done and found, for the person who asked")
    recommendation: str | None = Field(
        default=None, description="Which configuration to serve for which load, and why (from the measurements)"
    )
    left_running: list[str] = Field(
        default_factory=list, description="Servers or processes left running on purpose, and why"
    )
    unresolved: list[str] = Field(
        default_factory=list, description="What failed and was not recovered, and what the user can do"
    )
    left_out: list[str] = Field(
        default_factory=list,
        description="Experiments not made because the host-time budget had no room for them, each with its cost",
    )
