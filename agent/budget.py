"""Budgets: how much a run may spend in model requests, tool calls, tokens, money, time and the host's time.

Requests, tool calls, tokens and cost are pydantic-ai's UsageLimits (cost from
genai-prices where the model's price is known; unknown prices never stop a
run). Wall time is ours: a deadline checked before every tool call and
enforced around the whole loop. Whichever runs out, the run ends with status
budget_exceeded and a report of what was done, not a crash.

The host's time (`--budget 2h`) is another kind of budget: what the job may cost on the host's own clock (the
report's host time: agent/report/host_time.py). The policy is told it in the goal's prompt and plans its
experiments to fit; the loop tallies it from every host call's clock readings (HostTimeTally) and, once it is
spent, refuses the tools that measure (launch, benchmark, acceptance) while the policy concludes, stops its servers
and answers: a spent host budget ends the measuring, not the run.
"""

from __future__ import annotations

import re
import time
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai.usage import UsageLimits

from .durations import duration_words


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_requests: int | None = Field(default=80, ge=1, description="Model requests")
    max_tool_calls: int | None = Field(default=300, ge=1, description="Tool calls")
    max_tokens: int | None = Field(default=None, ge=1, description="Input + output tokens")
    max_cost_usd: float | None = Field(default=None, gt=0, description="Cost in USD, where the model's price is known")
    max_wall_s: float | None = Field(default=3600.0, gt=0, description="Wall-clock seconds for the whole run")
    max_host_s: float | None = Field(
        default=None, gt=0, description="Seconds of the host's own clock the job may use (None: no host budget)"
    )

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


# The tools that measure: refused once the host's time is spent (the others conclude the job: stop, read, answer).
MEASURING_TOOLS = frozenset({"launch_server", "restart_server", "benchmark", "acceptance"})


class HostTimeTally:
    """The job's time on its host so far, as the report counts it: from the first host call's start to the last
    one's end on the host's own clock (calls whose clock could not be read are left out)."""

    def __init__(self, earlier_s: float = 0.0) -> None:
        self.earlier_s = earlier_s  # a resumed run's earlier sessions (the time it lay dead is not counted)
        self.first_start: float | None = None
        self.last_end: float | None = None

    def add(self, start: float | None, end: float | None) -> None:
        if start is None or end is None:
            return
        self.first_start = start if self.first_start is None else min(self.first_start, start)
        self.last_end = end if self.last_end is None else max(self.last_end, end)

    @property
    def used_s(self) -> float:
        if self.first_start is None or self.last_end is None:
            return self.earlier_s
        return self.earlier_s + self.last_end - self.first_start

    def spent(self, budget_s: float | None) -> bool:
        return budget_s is not None and self.used_s >= budget_s


_BUDGET_LINE = re.compile(r"^Host-time budget: (\d+(?:\.\d+)?) s\b", re.MULTILINE)


def host_budget_line(budget_s: float) -> str:
    """The goal prompt's line that tells the policy its host-time budget (read back by read_host_budget)."""
    return (
        f"Host-time budget: {budget_s:g} s ({duration_words(budget_s)}) of the host's own clock for the whole job. "
        "Plan the experiments to fit it, the most valuable first; once it is spent, launch_server, benchmark and "
        "acceptance are refused: conclude from what was measured and name what the budget left out"
    )


def read_host_budget(prompt: str) -> float | None:
    """The host-time budget a goal prompt states (host_budget_line), or None."""
    found = _BUDGET_LINE.search(prompt)
    return float(found.group(1)) if found else None


def host_time_reminder(tally: HostTimeTally, budget_s: float | None) -> str | None:
    """What the plan reminder adds under a host-time budget: the host's time used and left."""
    if budget_s is None:
        return None
    left = max(0.0, budget_s - tally.used_s)
    return f"Host time: {duration_words(tally.used_s)} used of {duration_words(budget_s)}; {duration_words(left)} left"
