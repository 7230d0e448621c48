"""The playbook's host-time budget (`--budget`): what each experiment costs on the host, and whether it still fits.

Every call's outcome carries its start and end on the host's clock (agent/tool_answer.py), so the pipeline knows
what the job has used (the report's host time: from the first host call's start to the last one's end) and what
each kind of step has cost so far. An experiment (a launch, the acceptance eval where it goes with it, a benchmark
sweep and the stop) is expected to cost what the same steps cost before: the launches of its kind (speculative or
not; a speculative one the autoregressive ones' until one has come up), the mean second per benchmark level, the
acceptance eval measured, the stop. Launches dominate (a Kimi-K2.6 load is about 7 minutes, a benchmark level a few
seconds), and a host loads the same weights in the same time again, so the estimate is close from the second launch.

The first experiment of the job has nothing to go on and is made whenever any budget is left: a budget shorter than
one launch is overrun by that launch (the loop refuses every measuring tool after it: agent/budget.py).

Order by expected value. When the whole pipeline fits, its own order stands (every baseline layout, speculation at
the drafter's defaults on the layouts ranked best, then tuning and bracketing). When it does not (`overruns`, judged
once the first launch has been timed), the pipeline measures first what decides the answer at most loads: the
baseline's first layout and the one expected best at high load (DP attention), speculation at its defaults on the
first with the acceptance eval, then each other layout once at the setting its load per rank calls for (the
high-load setting that acceptance picks where speculation at the defaults had lost most of its gain at that load on
the first layout, else the defaults: on the seed's host DFlash's half block on DP attention at C=256, EAGLE-3's
defaults there at C=64), then the first layout's own tuning; the defaults on the other layouts, further tuning steps
and the remaining baseline layouts come after, with what is left (playbook_pipeline.py, `_speculate_for_budget`). Either way the budget keeps a reserve: an experiment is made only
when, after it, there is still room for the ones worth more that come after it: the first speculative measurement
(with its acceptance eval) while baseline layouts are measured, and the final relaunch of the recommended
configuration when the goal asks to deploy; room is kept only for a measurement the budget can still hold. Where
the first speculative measurement fits only without its acceptance eval, the eval is left out (the sweep's own
acceptance per level stands). What does not fit is left out and said (`left_out`), by name, with its expected cost.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from specops.agent.budget import HostTimeTally
from specops.agent.durations import duration_words

from .playbook_history import Outcome

_LAUNCH_TOOLS = frozenset({"launch_server", "restart_server"})


@dataclass
class HostBudget:
    """The job's host time so far and the cost of each kind of step, from the outcomes the pipeline has seen."""

    budget_s: float | None  # None: no budget (everything fits; costs are still tallied, for nothing)
    used: HostTimeTally = field(default_factory=HostTimeTally)  # the job's span on the host's clock, as the loop's
    launches: dict[bool, list[float]] = field(default_factory=lambda: {False: [], True: []})  # by speculative
    level_s: list[float] = field(default_factory=list)  # host seconds per benchmark level, each sweep's mean
    acceptance_s: list[float] = field(default_factory=list)
    stop_s: list[float] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # each with its cost, for the answer
    left_out_names: set[str] = field(default_factory=set)  # what was left out, for the pipeline's own checks
    _said: set[tuple[str, str]] = field(default_factory=set)  # (name, levels) of each left out: said once

    def saw(self, tool: str, args: dict[str, Any], out: Outcome) -> None:
        """Tally one call's host time, and what it says of its kind of step."""
        ht = out.host_time
        if ht is None or ht.start is None or ht.end is None:
            return
        self.used.add(ht.start, ht.end)
        seconds = ht.end - ht.start
        if not out.ok:
            return  # a failed step's time is spent, but says little of what the next one costs
        if tool in _LAUNCH_TOOLS:
            config = args.get("config") or {}
            self.launches[bool(isinstance(config, dict) and config.get("speculative_algorithm"))].append(seconds)
        elif tool == "benchmark" and args.get("levels"):
            self.level_s.append(seconds / len(args["levels"]))
        elif tool == "acceptance":
            self.acceptance_s.append(seconds)
        elif tool == "stop_server":
            self.stop_s.append(seconds)

    @property
    def used_s(self) -> float:
        return self.used.used_s

    @property
    def left_s(self) -> float | None:
        return None if self.budget_s is None else self.budget_s - self.used_s

    def launch_s(self, speculative: bool) -> float | None:
        """What a launch is expected to take: those of its kind so far, else the other kind's; None: none yet."""
        seen = self.launches[speculative] or self.launches[not speculative]
        return statistics.fmean(seen) if seen else None

    def cost_s(self, *, speculative: bool, levels: int, acceptance: bool = False) -> float | None:
        """The expected host seconds of one experiment: a launch, the acceptance eval (when it goes with it), a
        sweep of `levels` levels and the stop; None while no launch has been timed (nothing to go on)."""
        launch = self.launch_s(speculative)
        if launch is None:
            return None
        per_level = statistics.fmean(self.level_s) if self.level_s else 0.0
        # Before an acceptance eval was timed: as long as a sweep of five levels (the README job's: 51 s vs 52 s).
        accept = (statistics.fmean(self.acceptance_s) if self.acceptance_s else 5 * per_level) if acceptance else 0.0
        stop = statistics.fmean(self.stop_s) if self.stop_s else 0.0
        return launch + accept + levels * per_level + stop

    def overruns(self, *, baseline: int, speculative: int, levels: int, deploy: bool) -> float | None:
        """The expected host seconds of `baseline` more autoregressive experiments, `speculative` speculative ones
        (the first with the acceptance eval) and the deploy's relaunch, when that is more than the budget has left;
        None when it fits, or without a budget or a timed launch to go on."""
        left = self.left_s
        ar = self.cost_s(speculative=False, levels=levels)
        first = self.cost_s(speculative=True, levels=levels, acceptance=True)
        spec = self.cost_s(speculative=True, levels=levels)
        if left is None or ar is None or first is None or spec is None:
            return None
        whole = baseline * ar + (first + (speculative - 1) * spec if speculative else 0.0)
        whole += (self.launch_s(speculative=True) or 0.0) if deploy else 0.0
        return whole if whole > left else None

    def fits(self, cost_s: float | None, reserve_s: float | None = 0.0) -> bool:
        """Whether an experiment of `cost_s` fits what is left with `reserve_s` kept for what comes after it.
        Unknown costs fit (nothing to go on); the budget already spent fits nothing."""
        left = self.left_s
        if left is None:
            return True
        if left <= 0:
            return False
        return cost_s is None or cost_s + (reserve_s or 0.0) <= left

    def leave_out(
        self, name: str, cost_s: float | None, reserve_s: float | None = 0.0, after: str = "", at: str = ""
    ) -> None:
        """Say that configuration `name` (measured `at` some levels only, when given) was left out for the budget:
        its expected cost, and what was left of the budget."""
        if (name, at) in self._said:
            return  # weighed again later (the tuning after the defaults): the budget has only shrunk since
        self._said.add((name, at))
        self.left_out_names.add(name)
        left = max(0.0, self.left_s or 0.0)
        cost = f"about {duration_words(cost_s)}" if cost_s is not None else "its cost unknown"
        kept = f", {duration_words(reserve_s)} of it kept for {after}" if reserve_s and after else ""
        self.left_out.append(f"{name}{at} ({cost}; {duration_words(left)} of the budget left{kept})")

    def sentence(self) -> str | None:
        """The answer's line on the budget, or None without one."""
        if self.budget_s is None:
            return None
        line = f"host-time budget {duration_words(self.budget_s)}: {duration_words(self.used_s)} used"
        if self.left_out:
            line += "; left out for it: " + "; ".join(self.left_out)
        return line
