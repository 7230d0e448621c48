"""Regret against the simulator's truth: the playbook, TPE and random search at the same host-time budget.

For the README's job and three eval goals (an EAGLE-3 drafter, MTP heads, a two-node cluster choosing between one
server across the nodes and a replica per node), runs the playbook without a budget, then Optuna's TPE and random
search (agent/policies/search.py) with the host time the playbook used as their budget (`max_host_s`, rounded up to
the minute), each on its own simulated host. Then, from each run's transcript and report, the oracle
(evals/oracle.py) rebuilds the configuration space the search policies explore for that run (layouts x speculation
x drafter settings x CUDA graphs x memory pool x running-request cap), takes the simulator's truth of every
configuration at every level, and prints per level the space's best (config, true tok/s) and, per policy, the
configuration its report recommends there, its true tok/s and its regret (1 - truth / best); then per policy its
host time, worst and mean regret, beside the target.

Under a host-time budget a search runs until its next trial would not fit (agent/policies/search.py), so no trial
count is set (`--trials N` sets one); the run loop refuses measuring once the budget is spent (agent/budget.py). A
run that used more host time than its budget is marked. Model requests and tool calls are not limited (a search of
many trials makes many), nor, but as a hang guard, wall time. On a tree whose Budgets has no `max_host_s` the
searches run their default trial count, and the table says the budget was not passed.

    .venv/bin/python benchmarks/regret.py [--goal NAME[,NAME]] [--jobs N] [--keep DIR] [--double] [--half] [--trials N]
    .venv/bin/python benchmarks/regret.py --from DIR      # recompute the tables from kept runs, running nothing

With `--keep DIR`, a run already kept there is read again instead of run (delete its folder to run it again): after a
change to the playbook's budget rules, `rm -r DIR/*/playbook-half` and the same command runs only those.

Goals: readme, eagle3-drafter, mtp-heads, cluster-replicas-or-one-server (default: all). `--half`: the playbook
again at half the budget. `--double`: TPE at twice the budget too. `--jobs`: runs side by side (default 2). A README job takes about 2 minutes of wall time, a search
about as long.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from specops.agent.durations import duration_words
from specops.agent.policies.playbook_settings import PlaybookSettings
from specops.agent.policies.search_settings import SearchSettings
from specops.evals.evidence import TRANSCRIPT
from specops.evals.execute import EVAL_RUN, ScenarioRun, load_run
from specops.evals.oracle import LevelRegret, Oracle, OracleUnavailable, RunRecord, describe, open_oracle, read_run
from specops.evals.scenario import SCENARIO_DIR, HostSetup, RunSettings, Scenario, load_scenario
from specops.transcripts.reader import TranscriptCorrupt

README_GOAL = Scenario(
    name="readme",
    why="The README's job: the seed's goal on its host, / full, the hf CLI broken, the other model's cache approved "
    "for deletion; the playbook at its defaults (every layout, five levels).",
    goal="deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
    host=HostSetup(profile="seed-ct200", faults=["full_disk", "broken_cli"]),
    run=RunSettings(allow_delete=["cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"]),
)
# The cluster goal with two shapes to choose between (one server across the nodes, a replica per node): the other
# cluster scenario's target fits no single node, so its space has one shape.
EVAL_GOALS = ("eagle3-drafter", "mtp-heads", "cluster-replicas-or-one-server")
GOALS = ("readme", *EVAL_GOALS)
PLAYBOOK, TPE, RANDOM, TPE_DOUBLE = "playbook", "tpe", "random", "tpe-2x"
PLAYBOOK_HALF = "playbook-half"  # the playbook again with half the budget: TPE's regret at a fraction of its time?
TARGET_REGRET = 0.02
TARGET = f"target: playbook ≤ {TARGET_REGRET:.0%} at every level and below TPE's at equal budget (or both at zero)"
ZERO = 1e-9  # a regret this small is none: the recommendation is the space's best
WALL_GUARD_S = 4 * 3600.0  # only a hang guard: a run's wall time is this machine's, not the host's
UNBOUNDED = 1_000_000  # model requests and tool calls: a search of many trials makes many


def scenario(goal: str) -> Scenario:
    return README_GOAL if goal == "readme" else load_scenario(SCENARIO_DIR / f"{goal}.yaml")


def host_budget_s(playbook_host_s: float) -> float:
    """The budget: the playbook's host seconds, rounded up to the minute."""
    return 60.0 * math.ceil(playbook_host_s / 60.0)


def measurement(goal: Scenario) -> PlaybookSettings:
    """The playbook as a user runs it, at the goal's levels: an eval scenario's other settings (fewer layouts, fewer
    acceptance prompts) keep CI short and would narrow what the playbook may find."""
    return PlaybookSettings(levels=goal.policy.levels)


def playbook_spec(goal: Scenario) -> str:
    return measurement(goal).spec()


def search_spec(goal: Scenario, sampler: str, trials: int | None) -> str:
    """The search policy with the playbook's measurement settings at the goal's levels; no trial count unless one is
    given (the budget bounds the search)."""
    count = {"trials": trials} if trials is not None else {}
    return SearchSettings(sampler=sampler, measurement=measurement(goal), **count).spec()


# -- one run, in a child process (its own world, logging and environment): the eval harness's --------------


def with_limits(goal: Scenario, budget_s: float | None) -> Scenario:
    """The goal's scenario with the benchmark's limits: its host-time budget (None: none), no practical bound on
    model requests or tool calls (a search of many trials makes many), wall time only as a hang guard."""
    run = goal.run.model_copy(
        update={
            "max_requests": UNBOUNDED,
            "max_tool_calls": UNBOUNDED,
            "max_wall_s": WALL_GUARD_S,
            "budget": f"{budget_s:g}" if budget_s is not None else None,
        }
    )
    return goal.model_copy(update={"run": run})


def run_child(goal: str, label: str, policy: str, run_dir: Path, budget_s: float | None) -> Path:
    """One run as `specops eval` runs a scenario (evals/execute.py, in its own process); its record beside it. A run
    already kept there (with --keep) is read again, not run: delete its folder to run it again."""
    if (run_dir / EVAL_RUN).is_file() or (run_dir / TRANSCRIPT).is_file():
        print(f"  {goal}: {label} kept in {run_dir}: not run again", flush=True)
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open(run_dir.parent / f"{label}.log", "w", encoding="utf-8") as log:
        subprocess.run(
            [sys.executable, "-m", "specops.evals.execute", str(run_dir), policy],
            input=with_limits(scenario(goal), budget_s).model_dump_json(),
            text=True,
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )
    print(f"  {goal}: {label} ({policy}) done in {time.monotonic() - started:.0f} s", flush=True)
    return run_dir


def run_all(root: Path, goals: list[str], jobs: int, double: bool, trials: int | None, half: bool = False) -> None:
    """Each goal's playbook first (its host time is the searches' budget), then its searches; `jobs` at a time."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        pending: dict[Future[Path], tuple[str, str]] = {
            pool.submit(run_child, g, PLAYBOOK, playbook_spec(scenario(g)), root / g / PLAYBOOK, None): (g, PLAYBOOK)
            for g in goals
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                goal, label = pending.pop(future)
                if label != PLAYBOOK:
                    continue
                record = _record(future.result())
                if record is None or record.host_s is None:
                    print(f"  {goal}: the playbook's run has no host time: no budget, no search", flush=True)
                    continue
                budget = host_budget_s(record.host_s)
                runs = [(TPE, "tpe", budget), (RANDOM, "random", budget)] + (
                    [(TPE_DOUBLE, "tpe", 2 * budget)] if double else []
                )
                if half:
                    future_half = pool.submit(
                        run_child,
                        goal,
                        PLAYBOOK_HALF,
                        playbook_spec(scenario(goal)),
                        root / goal / PLAYBOOK_HALF,
                        budget / 2,
                    )
                    pending[future_half] = (goal, PLAYBOOK_HALF)
                for run_label, sampler, budget_s in runs:
                    spec = search_spec(scenario(goal), sampler, trials)
                    future_run = pool.submit(run_child, goal, run_label, spec, root / goal / run_label, budget_s)
                    pending[future_run] = (goal, run_label)


# -- the tables ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyRun:
    label: str
    run_dir: Path
    ended: ScenarioRun | None  # how the harness saw the run end (None: no record)
    record: RunRecord | None
    unreadable: str | None  # why the run could not be read (no host facts, no transcript)


def _record(run_dir: Path) -> RunRecord | None:
    try:
        return read_run(run_dir)
    except (OracleUnavailable, TranscriptCorrupt, OSError):
        return None


def _policy_run(goal_dir: Path, label: str) -> PolicyRun | None:
    run_dir = goal_dir / label
    if not run_dir.is_dir():
        return None
    ended = load_run(run_dir) if (run_dir / EVAL_RUN).exists() else None
    try:
        record = read_run(run_dir)
    except (OracleUnavailable, TranscriptCorrupt, OSError) as exc:
        return PolicyRun(label, run_dir, ended, None, str(exc))
    if record.report is None:  # still running, or killed before its report: nothing recommended yet
        return PolicyRun(label, run_dir, ended, None, "no report.json: the run did not finish")
    return PolicyRun(label, run_dir, ended, record, None)


def _hours(seconds: float | None) -> str:
    return duration_words(seconds) if seconds is not None else "unknown"


def _status(run: PolicyRun) -> str:
    """How the run ended: as the harness recorded it, else as its report says."""
    if run.ended is not None:
        return "harness_error" if run.ended.harness_error else str(run.ended.run_status)
    report = run.record.report if run.record is not None else None
    return report.run.status if report is not None else "no record"


def _failure_lines(run: PolicyRun) -> list[str]:
    """How a run that did not complete ended: its status, its reason, what its report left unresolved."""
    status = _status(run)
    if status == "completed":
        return []
    said = (run.ended.harness_error or run.ended.reason) if run.ended is not None else None
    lines = [f"    {run.label}: {status}: {said or run.unreadable or ''}".rstrip()]
    report = run.record.report if run.record is not None else None
    if report is not None:
        lines += [f"      unresolved: {text}" for text in report.unresolved_text[:3]]
        unresolved = [f for f in report.failures if f.status == "unresolved"][:3]
        lines += [f"      failure: {f.tool}: {f.kind}: {f.what}" for f in unresolved]
    return lines


def _table(oracle: Oracle, runs: list[PolicyRun]) -> list[str]:
    width = max([len(c.label) for c in oracle.configs] + [30])
    lines = [f"  {'C':>5}  {'':<14}{'configuration':<{width}}{'tok/s':>9}{'regret':>9}"]
    for level in oracle.levels:
        best = oracle.best(level)
        kv = " (KV-bound: estimated)" if best is not None and level in best.kv_bound else ""
        lines.append(
            f"  {level:>5}  {'best':<14}{best.label if best else 'nothing launches':<{width}}"
            f"{(best.tok_s[level] if best else 0.0):>9.1f}{'':>9}{kv}"
        )
        for run in runs:
            if run.record is None:
                lines.append(f"  {'':>5}  {run.label:<14}(not judged: see below)")
                continue
            regret = oracle.regret(level, run.record.recommended(level))
            lines.append(f"  {'':>5}  {run.label:<14}{_recommended(regret):<{width}}" + _figures(regret))
    return lines


def _recommended(regret: LevelRegret) -> str:
    if regret.recommended is None:
        return "(nothing recommended)"
    return describe(regret.recommended.config)


def _figures(regret: LevelRegret) -> str:
    rec = regret.recommended
    why = ""
    if rec is not None and not rec.launches:
        why = f"  cannot launch: {rec.failure}"
    elif rec is not None and regret.level in rec.crashes:
        why = "  dies under this load"
    elif rec is not None and regret.level in rec.kv_bound:
        why = "  (KV-bound: estimated)"
    return f"{regret.recommended_tok_s:>9.1f}{regret.regret:>9.1%}{why}"


def report_goal(goal_dir: Path, goal: str, labels: list[str]) -> list[str]:
    runs = [r for r in (_policy_run(goal_dir, label) for label in labels) if r is not None]
    setting = scenario(goal)
    host = setting.host
    faults = f" ({', '.join(host.faults)})" if host.faults else ""
    lines = [f"== {goal}: {setting.goal!r} on sim:{host.profile}{faults}"]
    base = next((r for r in runs if r.record is not None), None)
    if base is None or base.record is None or host.profile is None:
        return [
            *lines,
            "  no run recorded the host's facts: no space to judge",
            *(x for r in runs for x in _failure_lines(r)),
        ]
    with open_oracle(base.record, host.profile, host.faults) as oracle:
        failing = [c for c in oracle.configs if not c.launches]
        causes = sorted({c.failure or "" for c in failing})
        playbook_s = next((r.record.host_s for r in runs if r.label == PLAYBOOK and r.record is not None), None)
        budget = host_budget_s(playbook_s) if playbook_s is not None else None
        lines += [
            f"  space (from the {base.label} run): {len(oracle.configs)} configurations (SearchSpace.size "
            f"{oracle.space.size}); {len(failing)} cannot launch" + (f" ({'; '.join(causes)})" if causes else ""),
            f"  levels {', '.join(map(str, oracle.levels))}; budget {_hours(budget)} of host time (the playbook's, "
            "rounded up to the minute; TPE at 2x where run)",
            f"  {TARGET}",
            *_table(oracle, runs),
        ]
        summary: dict[str, tuple[float, float]] = {}
        for run in runs:
            if run.record is None:
                continue
            regrets = [r.regret for r in oracle.regrets(run.record)]
            worst, mean = max(regrets), statistics.mean(regrets)
            summary[run.label] = (worst, mean)
            allowed = run.ended.scenario.run.max_host_s if run.ended is not None else None
            over = ""
            if allowed and run.record.host_s is not None and run.record.host_s > allowed:
                over = f" (over its {_hours(allowed)} budget)"
            lines.append(
                f"  {run.label:<14} host {_hours(run.record.host_s)}{over}; {len(run.record.launched)} launches; "
                f"regret max {worst:.1%}, mean {mean:.1%}; {_status(run)}"
            )
    lines += [x for r in runs for x in _failure_lines(r)]
    if PLAYBOOK in summary:
        worst, mean = summary[PLAYBOOK]
        within = worst <= TARGET_REGRET
        parts = [f"playbook max {worst:.1%} ≤ {TARGET_REGRET:.0%}: {'yes' if within else 'no'}"]
        below, tie_at_zero = True, False
        if TPE in summary:  # below TPE's: its mean over the levels, at the same budget
            tpe_mean = summary[TPE][1]
            tie_at_zero = mean <= ZERO and tpe_mean <= ZERO  # both served the best everywhere: none is below that
            below = mean < tpe_mean or tie_at_zero
            said = "both found the best at every level" if tie_at_zero else ("yes" if below else "no")
            parts.append(f"mean {mean:.1%} below TPE's {tpe_mean:.1%}: {said}")
        met = "met (a tie at zero regret)" if tie_at_zero else "met"
        lines.append(f"  verdict: {'; '.join(parts)} -> {met if within and below else 'MISSED'}")
    if PLAYBOOK_HALF in summary and TPE in summary:
        (half_worst, half_mean), (tpe_worst, tpe_mean) = summary[PLAYBOOK_HALF], summary[TPE]
        reached = half_worst <= tpe_worst and half_mean <= tpe_mean
        lines.append(
            f"  at half the budget: playbook max {half_worst:.1%}, mean {half_mean:.1%}; TPE at the whole "
            f"{tpe_worst:.1%}, {tpe_mean:.1%} -> {'TPE reached' if reached else 'not reached'}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goal", action="append", help="goal name(s), repeatable or comma-separated")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the runs here")
    parser.add_argument("--from", dest="from_dir", type=Path, help="recompute from runs kept with --keep")
    parser.add_argument("--double", action="store_true", help="TPE at twice the budget too")
    parser.add_argument("--half", action="store_true", help="the playbook again at half the budget")
    parser.add_argument("--trials", type=int, help="the searches' trial count (default: none, the budget bounds them)")
    args = parser.parse_args()
    goals = [g.strip() for spec in args.goal or [",".join(GOALS)] for g in spec.split(",") if g.strip()]
    unknown = [g for g in goals if g not in GOALS]
    if unknown:
        parser.error(f"unknown goal(s) {', '.join(unknown)}: choose from {', '.join(GOALS)}")
    labels = [PLAYBOOK, PLAYBOOK_HALF, TPE, RANDOM, TPE_DOUBLE]
    if args.from_dir is not None:
        for goal in goals:
            if (args.from_dir / goal).is_dir():
                print("\n".join(report_goal(args.from_dir / goal, goal, labels)), flush=True)
        return
    with tempfile.TemporaryDirectory(prefix="specops-regret-") as tmp:
        root = args.keep or Path(tmp)
        print(f"runs in {root}", flush=True)
        run_all(root, goals, args.jobs, args.double, args.trials, args.half)
        for goal in goals:
            print("\n".join(report_goal(root / goal, goal, labels)), flush=True)


if __name__ == "__main__":
    main()
