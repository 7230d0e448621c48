"""The host-time budget (--budget): durations as people write them, the goal prompt's line and its reading, the
playbook's costs and reserve (playbook_budget.py), the loop's refusal once it is spent, and the report's section."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from specops.agent.budget import (
    HostTimeTally,
    host_budget_line,
    host_time_reminder,
    read_host_budget,
)
from specops.agent.deps import AgentDeps
from specops.agent.durations import parse_duration
from specops.agent.policies.playbook_budget import HostBudget
from specops.agent.policies.playbook_goal import understand
from specops.agent.policies.playbook_history import Outcome
from specops.agent.report.budget import budget_sentence, smaller_budgets
from specops.agent.report.schema import BudgetSection, MeasuredBy
from specops.agent.toolset import _host_budget_refusal
from specops.tools.errors import ErrorKind
from specops.transcripts import HostTime


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2h", 7200),
        ("90min", 5400),
        ("1h30m", 5400),
        ("45m 30s", 2730),
        ("5400", 5400),
        ("0.5h", 1800),
        ("2 hours", 7200),
    ],
)
def test_durations_as_people_write_them(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "words"),
    [("2x", "is not a duration"), ("1h30", "give every part a unit"), ("0", "no time at all"), ("", "not a duration")],
)
def test_what_is_not_a_duration_is_said(text, words):
    with pytest.raises(ValueError, match=words):
        parse_duration(text)


def test_the_goal_prompt_carries_the_budget_to_the_playbook():
    prompt = f"Goal: deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long\nHost: sim\n{host_budget_line(5400)}"
    assert read_host_budget(prompt) == 5400
    assert "1 h 30 min" in prompt
    assert understand(prompt).host_budget_s == 5400
    assert understand("Goal: deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long").host_budget_s is None


def _out(start: float, end: float, ok: bool = True) -> Outcome:
    return Outcome(ok=ok, host_time=HostTime(start=start, end=end))


def test_costs_come_from_the_steps_measured_so_far():
    budget = HostBudget(budget_s=3600)
    assert budget.cost_s(speculative=False, levels=2) is None  # nothing to go on: the first experiment is made
    assert budget.fits(None)
    budget.saw("host_facts", {}, _out(1000, 1002))
    budget.saw("launch_server", {"config": {"tp": 8}}, _out(1002, 1402))
    budget.saw("benchmark", {"levels": [1, 64]}, _out(1402, 1422))
    budget.saw("stop_server", {}, _out(1422, 1424))
    budget.saw("launch_server", {"config": {"tp": 8}}, _out(1424, 1724, ok=False))  # spent, not an estimate
    assert budget.used_s == 724
    assert budget.left_s == 3600 - 724
    # A speculative launch before one came up: as long as the autoregressive ones; acceptance as five levels.
    assert budget.cost_s(speculative=True, levels=2, acceptance=True) == 400 + 5 * 10 + 2 * 10 + 2
    budget.saw("launch_server", {"config": {"speculative_algorithm": "DFLASH"}}, _out(1724, 2224))
    budget.saw("acceptance", {}, _out(2224, 2254))
    assert budget.launch_s(speculative=True) == 500
    assert budget.cost_s(speculative=True, levels=1, acceptance=True) == 500 + 30 + 10 + 2


def test_what_does_not_fit_with_its_reserve_is_left_out_and_said():
    budget = HostBudget(budget_s=1000)
    budget.saw("launch_server", {"config": {}}, _out(0, 400))
    assert budget.fits(400) and not budget.fits(400, reserve_s=300)
    budget.leave_out("tp8-ep4", 400, 300, "the deploy's relaunch")
    assert budget.left_out == [
        "tp8-ep4 (about 6 min 40 s; 10 min of the budget left, 5 min of it kept for the deploy's relaunch)"
    ]
    assert budget.sentence() == f"host-time budget 16 min 40 s: 6 min 40 s used; left out for it: {budget.left_out[0]}"
    budget.saw("benchmark", {"levels": [1]}, _out(400, 1000))
    assert not budget.fits(None)  # spent: not even an experiment of unknown cost
    assert HostBudget(budget_s=None).fits(10**9) and HostBudget(budget_s=None).sentence() is None


def test_the_loop_refuses_measuring_once_the_budget_is_spent():
    tally = HostTimeTally()
    tally.add(100.0, 200.0)
    tally.add(None, 250.0)  # an unread clock is left out
    deps = cast(AgentDeps, SimpleNamespace(host_time=tally, host_budget_s=100.0))
    refusal = _host_budget_refusal(deps, "launch_server")
    assert refusal is not None and refusal.kind == ErrorKind.BUDGET_SPENT
    assert "1 min 40 s used of 1 min 40 s" in refusal.what
    assert _host_budget_refusal(deps, "stop_server") is None  # concluding is never refused
    cast(Any, deps).host_budget_s = 101.0
    assert _host_budget_refusal(deps, "benchmark") is None
    assert host_time_reminder(tally, 101.0) == "Host time: 1 min 40 s used of 1 min 41 s; 1.0 s left"
    assert host_time_reminder(tally, None) is None


def test_smaller_budgets_keep_what_was_measured_by_then():
    measured = [
        MeasuredBy(config="tp8", levels=[1, 64], host_s=500),
        MeasuredBy(config="tp8-ep4", levels=[1, 64], host_s=1000),
        MeasuredBy(config="tp8+dflash-b8", levels=[1, 64], host_s=2600),
    ]
    smaller = smaller_budgets(measured, used_s=5400)
    assert [(s.budget_s, s.kept) for s in smaller] == [
        (1800, ["tp8", "tp8-ep4"]),
        (2700, ["tp8", "tp8-ep4", "tp8+dflash-b8"]),
        (4500, ["tp8", "tp8-ep4", "tp8+dflash-b8"]),
    ]
    assert smaller_budgets(measured, used_s=600) == []  # a quarter hour is already more than was used
    over = BudgetSection(budget_s=1800, used_s=1900, left_out=["tp8-ep4 (about 7 min)"])
    assert budget_sentence(over) == (
        "host-time budget 30 min: 31 min 40 s used (over by 1 min 40 s: a step under way when it ran out); "
        "1 experiment left out for it"
    )
