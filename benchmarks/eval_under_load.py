"""The eval's verdicts on a busy machine against the same eval on the machine as it is (issue 27).

Runs `specops eval` (the real CLI, in a subprocess) twice over the same scenarios: once on the machine as it is
("idle"), then again beside a load: BUSY processes of `yes > /dev/null` and one more `specops run` of the README's
main job (in a temp folder of its own, restarted whenever it finishes before the eval does). Then, per scenario,
it compares the verdict, each grader's pass/fail, and the key figures of the run's report.json:

    figure                          tolerance   why
    run status, steps               equal       the playbook decides from what it sees; the same run takes the
                                                same steps
    each launch: ready / its cause  equal       a start-up is judged on the host's clock (sim/world/clock.py)
    each launch's 'ready after'     5% or 2 s   a server's is its ready line's stamp (to the second) less the
                                                host's time as it started; a gateway's adds the poll that finds
                                                every worker healthy (polled every 0.5 host seconds)
    failures (tool, kind, cause)    equal
    per level: winner, best configs equal       the recommendation rests on them
    per level: speedup              5%          a ratio of two tok/s figures, each measured within ~2-3% of the
                                                simulator's truth (benchmarks/seed_run.py, benchmark_accuracy.py)
    recommendation, crossover       equal
    acceptance length per config    2%          greedy draws are seeded per request: the same prompts draw the
                                                same tokens, whatever the machine's load

It prints a row per scenario (its verdicts idle and loaded, and the figures that differ beyond their tolerance) and
`same verdicts: N/N (target N/N)`; it exits 1 when a verdict differs, 2 when an eval could not run. Figures outside
their tolerance are shown, but only a verdict decides the exit status. Every load process (its whole process group)
is stopped at the end, also on Ctrl-C or an error, and so is anything still running with its TMPDIR in the script's
temp folder (every process an eval or the load started, the simulated hosts' detached servers included).

    .venv/bin/python benchmarks/eval_under_load.py [--jobs 6] [--scenario '*'] [--busy 4] [--no-extra-run]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

README_JOB = [
    "run",
    "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long",
    "--host",
    "sim:seed-ct200",
    "--sim-fault",
    "full_disk",
    "--sim-fault",
    "broken_cli",
    "--allow-delete",
    "cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",
]
REPORT_FILE = "eval-report.json"  # evals/results.py
SPEEDUP_TOL = 0.05
ACCEPTANCE_TOL = 0.02
READY_AFTER_TOL = 0.05
READY_AFTER_ABS_S = 2.0
GRACE_S = 10.0  # how long a load process has to close its simulated world after SIGINT, before SIGKILL


def specops_cli() -> str:
    """The `specops` executable beside this interpreter (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "specops"
    return str(beside) if beside.exists() else shutil.which("specops") or "specops"


def tmp_env(tmp: Path) -> dict[str, str]:
    """This environment with TMPDIR in `tmp`: simulated worlds (tempfile.mkdtemp) land there, and every descendant
    carries it, so that strays can be found and stopped at the end."""
    tmp.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp)}


# ---- stopping what was started ---------------------------------------------------------------------------------


def stop_group(proc: subprocess.Popen[bytes], grace_s: float = GRACE_S) -> None:
    """SIGINT to the process's group (a specops process closes its world on it), SIGKILL to it after `grace_s`."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(grace_s)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever of the group outlived its leader
    except ProcessLookupError:
        pass
    proc.wait()


def marked_pids(tmp: Path) -> list[int]:
    """This user's processes (not this one) whose TMPDIR lies in `tmp`: what the load or an eval started, detached
    servers of simulated hosts included (they run under setsid but inherit the environment)."""
    mark = f"TMPDIR={tmp}/".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or another user's
            continue
        if any(var.startswith(mark) for var in environ):
            found.append(int(entry.name))
    return found


def stop_strays(tmp: Path) -> int:
    """SIGKILL every process still running with its TMPDIR in `tmp`; how many there were."""
    pids = marked_pids(tmp)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return len(pids)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """A SIGTERM unwinds like Ctrl-C, so that the load is stopped either way."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ---- the load ----------------------------------------------------------------------------------------------------


@contextmanager
def busy_loops(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` processes of `yes > /dev/null`, each in its own process group, stopped on the way out."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen(["yes"], stdout=subprocess.DEVNULL, start_new_session=True))
        yield procs
    finally:
        for proc in procs:
            stop_group(proc, grace_s=0)


class RepeatedRun:
    """The README's main job run again and again in its own temp folder (cwd and --runs-dir), until stopped."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.exit_codes: list[int] = []
        self._current: subprocess.Popen[bytes] | None = None
        self._stopping = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="extra-specops-run", daemon=True)

    def _start_one(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self._stopping:
                return None
            index = len(self.exit_codes) + 1
            log = (self.folder / f"run-{index}.log").open("wb")
            self._current = subprocess.Popen(
                [specops_cli(), *README_JOB, "--runs-dir", str(self.folder / "runs")],
                cwd=self.folder,
                env=tmp_env(self.folder / "tmp"),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()
            return self._current

    def _loop(self) -> None:
        while (proc := self._start_one()) is not None:
            code = proc.wait()
            with self._lock:
                if not self._stopping:
                    self.exit_codes.append(code)
            time.sleep(1.0)  # a run that fails at once is not restarted in a tight loop

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread.start()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            current = self._current
        if current is not None:
            stop_group(current)
        self._thread.join()
        stop_strays(self.folder)


@contextmanager
def extra_run(folder: Path | None) -> Iterator[RepeatedRun | None]:
    """The repeated README job in `folder`, stopped on the way out; None: no extra run."""
    if folder is None:
        yield None
        return
    run = RepeatedRun(folder)
    run.start()
    try:
        yield run
    finally:
        run.stop()


# ---- the eval ----------------------------------------------------------------------------------------------------


def run_eval(out: Path, scenario: str, jobs: int) -> tuple[dict[str, Any], float]:
    """`specops eval` into `out` (its progress on this terminal): the JSON report, and the wall seconds it took.
    Exit 1 (a scenario failed) is a result; exit 2 (the eval could not run) or no report raises."""
    command = [specops_cli(), "eval", "--scenario", scenario, "--jobs", str(jobs), "--out", str(out / "eval")]
    started = time.monotonic()
    proc = subprocess.Popen(command, env=tmp_env(out / "tmp"), stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        code = proc.wait()
    finally:
        stop_group(proc)
        stop_strays(out)
    report = out / "eval" / REPORT_FILE
    if code not in (0, 1) or not report.exists():
        raise RuntimeError(f"`{' '.join(command)}` exited {code} without {report}")
    return json.loads(report.read_text(encoding="utf-8")), time.monotonic() - started


# ---- the figures -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """One figure of a scenario run; numbers match within max(rel * |idle|, abs_), anything else only when equal."""

    value: Any
    rel: float = 0.0
    abs_: float = 0.0

    def matches(self, other: Figure) -> bool:
        a, b = self.value, other.value
        if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
            return abs(a - b) <= max(self.rel * abs(a), self.abs_)
        same: bool = a == b
        return same

    def shown(self) -> str:
        return f"{self.value:g}" if isinstance(self.value, float) else str(self.value)


def launch_figures(report: dict[str, Any]) -> dict[str, Figure]:
    """Per launch, in order: ready or its failure's cause, and 'ready after' on the host's clock."""
    figures = {}
    for n, config in enumerate(report.get("configs", []), 1):
        name = f"launch {n} {config['name']}"
        figures[name] = Figure("ready" if config["launched"] else f"failed: {config.get('failure_cause')}")
        if config.get("ready_after_s") is not None:
            figures[f"{name} ready after s"] = Figure(config["ready_after_s"], READY_AFTER_TOL, READY_AFTER_ABS_S)
    return figures


def level_figures(report: dict[str, Any]) -> dict[str, Figure]:
    """Per benchmark level: the winner with the best configuration of each kind, and the speedup."""
    figures = {}
    for level in report.get("comparison", []):
        at = f"C={level['concurrency']}"
        figures[f"{at} winner"] = Figure(
            f"{level['winner']} ({level['best_speculative']} vs {level['best_autoregressive']})"
        )
        if level.get("speedup") is not None:
            figures[f"{at} speedup"] = Figure(level["speedup"], SPEEDUP_TOL)
    return figures


def recommendation_figures(report: dict[str, Any]) -> dict[str, Figure]:
    """The recommendation's bands and single configuration, and the crossover's kind and levels."""
    recommendation = report.get("recommendation") or {}
    bands = [f"C{b['min_concurrency']}-{b['max_concurrency']}: {b['config']}" for b in recommendation.get("bands", [])]
    crossover = report.get("crossover") or {}
    return {
        "recommendation": Figure("; ".join(bands) or None),
        "single config": Figure(recommendation.get("single_config")),
        "crossover": Figure(f"{crossover.get('kind')} {crossover.get('between')}"),
    }


def acceptance_figures(report: dict[str, Any]) -> dict[str, Figure]:
    """Per acceptance run: its overall acceptance length (tokens per verify step)."""
    return {
        f"acceptance {run['config']}": Figure(run["overall"]["token_weighted"], ACCEPTANCE_TOL)
        for run in report.get("acceptance_runs", [])
    }


def failure_figure(report: dict[str, Any]) -> Figure:
    """The failures the report lists, as (tool, kind, cause, recovered or not), in order."""
    return Figure([f"{f['tool']}:{f['kind']}:{f['cause']}:{f['status']}" for f in report.get("failures", [])])


def key_figures(result: dict[str, Any]) -> dict[str, Figure]:
    """A scenario result's figures: from the eval's record, and from its run's report.json when there is one."""
    figures = {"run status": Figure(result["run_status"]), "steps": Figure(result["steps"])}
    report_file = Path(result["run_dir"]) / "report.json"
    if not report_file.exists():
        return figures
    report = json.loads(report_file.read_text(encoding="utf-8"))
    figures["policy status"] = Figure(report["run"].get("policy_status"))
    figures["failures"] = failure_figure(report)
    for part in (launch_figures, level_figures, recommendation_figures, acceptance_figures):
        figures |= part(report)
    return figures


# ---- the comparison ----------------------------------------------------------------------------------------------


def verdict(result: dict[str, Any] | None) -> str:
    if result is None:
        return "missing"
    return "pass" if all(g["passed"] for g in result["graders"].values()) else "fail"


def grader_verdict(result: dict[str, Any] | None) -> str:
    return "-" if result is None else "pass" if result["passed"] else "fail"


def grader_differences(idle: dict[str, Any], loaded: dict[str, Any]) -> list[str]:
    """The graders whose pass/fail differs, each with its reason where it fails."""
    lines = []
    for name in sorted(set(idle["graders"]) | set(loaded["graders"])):
        before, after = idle["graders"].get(name), loaded["graders"].get(name)
        if before is None or after is None or before["passed"] != after["passed"]:
            failing = after if after is not None and not after["passed"] else before
            reason = (failing or {}).get("reason", "")[:160]
            lines.append(f"grader {name} {grader_verdict(before)} -> {grader_verdict(after)}: {reason}")
    return lines


def figure_differences(idle: dict[str, Any], loaded: dict[str, Any]) -> list[str]:
    """The key figures that differ beyond their tolerance, idle -> loaded."""
    before, after = key_figures(idle), key_figures(loaded)
    lines = []
    for name in [*before, *(n for n in after if n not in before)]:
        a, b = before.get(name, Figure(None)), after.get(name, Figure(None))
        if not a.matches(b):
            lines.append(f"{name}: {a.shown()} -> {b.shown()}")
    return lines


def by_scenario(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["run"]: r for r in report["results"]}


def compare(idle: dict[str, Any], loaded: dict[str, Any]) -> tuple[list[tuple[str, str, str, list[str]]], int]:
    """Rows of (scenario, idle verdict, loaded verdict, differences) and how many verdicts are the same."""
    before, after = by_scenario(idle), by_scenario(loaded)
    rows, same = [], 0
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        differences = grader_differences(a, b) + figure_differences(a, b) if a and b else []
        same += verdict(a) == verdict(b)
        rows.append((name, verdict(a), verdict(b), differences))
    return rows, same


def print_table(rows: list[tuple[str, str, str, list[str]]]) -> None:
    width = max([len("scenario"), *(len(r[0]) for r in rows)])
    print(f"{'scenario':<{width}}  {'idle':<7} {'loaded':<7} differing figures (idle -> loaded)")
    for name, before, after, differences in rows:
        mark = "" if before == after else "  <- VERDICT DIFFERS"
        print(f"{name:<{width}}  {before:<7} {after:<7} {differences[0] if differences else '-'}{mark}")
        for line in differences[1:]:
            print(f"{'':<{width}}  {'':<7} {'':<7} {line}")


# ---- main --------------------------------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=6, help="specops eval --jobs (default 6)")
    parser.add_argument("--scenario", default="*", help="specops eval --scenario: glob(s), comma-separated")
    parser.add_argument("--busy", type=int, default=4, help="processes of `yes > /dev/null` beside it (default 4)")
    parser.add_argument("--no-extra-run", action="store_true", help="no second `specops run` of the README's job")
    parser.add_argument("--keep", type=Path, help="keep both evals' output here (default: a temp folder, removed)")
    return parser.parse_args(argv)


def loaded_eval(root: Path, args: argparse.Namespace) -> tuple[dict[str, Any], float, str]:
    """The eval beside the load; its report, wall seconds, and a line on what the load was."""
    with ExitStack() as stack:
        loops = stack.enter_context(busy_loops(args.busy))
        extra = stack.enter_context(extra_run(None if args.no_extra_run else root / "extra-run"))
        report, wall = run_eval(root / "loaded", args.scenario, args.jobs)
        load = os.getloadavg()[0]
        runs = "no extra run" if extra is None else f"extra `specops run` finished {len(extra.exit_codes)} time(s)"
        runs += f" (exit {', '.join(map(str, extra.exit_codes))})" if extra is not None and extra.exit_codes else ""
        return report, wall, f"{len(loops)} x `yes`, {runs}; 1-min load average at the end {load:.1f}"


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    print(f"{os.cpu_count()} cores; scenarios {args.scenario!r}, --jobs {args.jobs}", flush=True)
    with ExitStack() as stack, sigterm_as_interrupt():
        # an absolute, unique folder: a process whose TMPDIR lies in it is one this script started
        root = (
            args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="eval-under-load-")))
        ).resolve()
        try:
            idle, idle_wall = run_eval(root / "idle", args.scenario, args.jobs)
            print(f"idle eval: {idle_wall:.0f} s", flush=True)
            loaded, loaded_wall, load = loaded_eval(root, args)
            print(f"loaded eval: {loaded_wall:.0f} s beside {load}", flush=True)
        except RuntimeError as exc:
            print(f"eval could not run: {exc}", file=sys.stderr)
            return 2
        finally:
            stop_strays(root)
        rows, same = compare(idle, loaded)
        print_table(rows)
        print(f"same verdicts: {same}/{len(rows)} (target {len(rows)}/{len(rows)})")
    return 0 if same == len(rows) else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # main's clean-up has run by now
        print("interrupted: every process of the evals and of the load stopped", file=sys.stderr)
        sys.exit(130)
