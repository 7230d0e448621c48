"""Budgets: how much a run may spend in model requests, tool calls, tokens, money and time.

Requests, tool calls, tokens and cost are pydantic-ai's UsageLimits (cost from
genai-prices where the model's price is known; unknown prices never stop a
run). Wall time is ours: a deadline checked before every tool call and
enforced around the whole loop. Whichever runs out, the run ends with status
budget_exceeded and a report of what was done, not a crash.
"""

from __future__ import annotations

import time
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai.usage import UsageLimits


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_requests: int | None = Field(default=80, ge=1, description="Model requests")
    max_tool_calls: int | None = Field(default=300, ge=1, description="Tool calls")
    max_tokens: int | None = Field(default=None, ge=1, description="Input + output tokens")
    max_cost_usd: float | None = Field(default=None, gt=0, description="Cost in USD, where the model's price is known")
    max_wall_s: float | None = Field(default=3600.0, gt=0, description="Wall-clock seconds for the whole run")

    def usage_limits(self) -> UsageLimits:
        return UsageLimits(
            request_limit=self.max_requests,
            tool_calls_limit=self.max_tool_calls,
            total_tokens_limit=self.max_tokens,
            cost_limit=Decimal(str(self.max_cost_usd)) if self.max_cost_usd is not None else None,
        )


class BudgetExceeded(Exception):
    """A budget ran out; `what` names it (wall_time, requests, ...)."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(message)
        self.what = what


class WallClock:
    """The run's deadline."""

    def __init__(self, max_s: float | None) -> None:
        self.started = time.monotonic()
        self.max_s = max_s

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def remaining_s(self) -> float | None:
        return None if self.max_s is None else self.max_s - self.elapsed_s

    def check(self) -> None:
        remaining = self.remaining_s()
        if remaining is not None and remaining <= 0:
            raise BudgetExceeded("wall_time", f"the wall-time budget of {self.max_s:g} s is spent")
