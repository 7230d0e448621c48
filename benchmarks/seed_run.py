"""The README's main job, timed: the seed's goal on sim:seed-ct200 with both faults, the playbook, quick-run scales.

Runs exactly what the README's first command runs (through run_goal, so the
terminal display is not timed) RUNS times and prints, from each run's transcript:
wall time, time inside tools (the host doing the work, tools that overlap each
other counted once), time waiting on the policy, and what is left, the
harness's own time (planning the next step, recording, the report), also per
model request; the quick run's time scale (the profile's fast_time_scale). Then, from its report.json, every
benchmark level's tok/s beside the simulator's truth (the eval grader's Truth: a
speculative level's at the acceptance its own requests drew, replayed) and its error against the TARGET, and a summary per kind (autoregressive,
speculative).

    .venv/bin/python benchmarks/seed_run.py [RUNS] [--keep DIR]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from specops.agent.report.schema import Report
from specops.agent.run import RunOptions, run_goal
from specops.evals.graders.numbers_match_truth import BenchmarkSweep, Truth, benchmark_sweeps
from specops.tools.hosts import HostRequest
from specops.transcripts import read_transcript
from specops.transcripts.pairs import pair_tool_calls

GOAL = "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
PROFILE = "seed-ct200"
FAULTS = ("full_disk", "broken_cli")
APPROVED = ("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",)  # the README's --allow-delete
TARGET = 0.03  # every level within 3% of the truth (issue 15, item 7)


def _merged_seconds(spans: list[tuple[float, float]]) -> float:
    """Total length of the union of (start, end) spans: overlapping tools count once."""
    total, end_so_far = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > end_so_far:
            total += end - max(start, end_so_far)
            end_so_far = end
    return total


def accuracy(report: Report, sweeps: dict[int, BenchmarkSweep]) -> tuple[list[str], int, int]:
    """One line per benchmark level (tok/s, truth, error, whether within TARGET), a summary line per kind; and
    (levels within TARGET, levels). `sweeps`: the run's benchmark calls, for a speculative level's own acceptance
    (the grader's truth)."""
    rows = Truth.of(PROFILE, list(FAULTS)).row_errors(report, sweeps)
    lines = [f"    {'config':<28}{'C':>5}{'tok/s':>10}{'truth':>10}{'error':>9}  target ±{TARGET:.0%}"]
    for rel, truth, row in sorted(rows, key=lambda r: (r[2].speculative, r[2].config, r[2].concurrency)):
        verdict = "ok" if abs(rel) <= TARGET else "MISS"
        busy = " (client busy)" if row.client_limited else ""
        lines.append(
            f"    {row.config:<28}{row.concurrency:>5}{row.output_tok_s:>10.1f}{truth:>10.1f}{rel:>+9.1%}  "
            f"{verdict}{busy}"
        )
    for speculative in (False, True):
        errors = sorted(
            (rel, f"{row.config} C={row.concurrency}") for rel, _, row in rows if row.speculative == speculative
        )
        if errors:
            worst = max(errors, key=lambda e: abs(e[0]))
            lines.append(
                f"  {'speculative' if speculative else 'autoregressive'} {len(errors)} levels: median "
                f"{statistics.median(e for e, _ in errors):+.1%}, range {errors[0][0]:+.1%} to "
                f"{errors[-1][0]:+.1%}, worst {worst[1]}"
            )
    within = sum(1 for rel, _, _ in rows if abs(rel) <= TARGET)
    return lines, within, len(rows)


def one_run(root: Path, index: int) -> bool:
    started = time.perf_counter()
    outcome = run_goal(
        GOAL,
        host=HostRequest(spec=f"sim:{PROFILE}", options={"faults": FAULTS}),
        run_dir=root / f"run-{index}",
        options=RunOptions(allow_delete=APPROVED),
    )
    wall = time.perf_counter() - started
    events = read_transcript(outcome.run_dir / "transcript.jsonl").events
    t0 = events[0].ts
    calls = {e.call_id: e for e in events if e.type == "tool_call"}
    spans = [
        ((calls[e.call_id].ts - t0).total_seconds(), (e.ts - t0).total_seconds())
        for e in events
        if e.type == "tool_result" and e.call_id in calls
    ]
    in_tools = _merged_seconds(spans)
    in_policy = sum(e.duration_s for e in events if e.type == "model_response")
    requests = sum(1 for e in events if e.type == "model_request")
    harness = wall - in_tools - in_policy
    print(
        f"run {index}: {outcome.status}, wall {wall:.1f} s: tools {in_tools:.1f} s, policy {in_policy:.2f} s, "
        f"harness {harness:.1f} s over {requests} model requests ({1000 * harness / max(requests, 1):.0f} ms per step)"
    )
    opened = next((e.host for e in events if e.type == "host_opened"), None)
    sim = opened.sim if opened is not None else {}
    print(f"  time scale {sim.get('time_scale')}")
    report = Report.model_validate_json((outcome.run_dir / "report.json").read_text())
    lines, within, total = accuracy(report, benchmark_sweeps(pair_tool_calls(events)))
    print(f"  tok/s vs the profile's truth, {within} of {total} levels within {TARGET:.0%}:")
    print("\n".join(lines))
    return within == total


def main() -> None:
    argv = sys.argv[1:]
    keep = None
    if "--keep" in argv:
        at = argv.index("--keep")
        keep = Path(argv[at + 1])
        del argv[at : at + 2]
    runs = int(argv[0]) if argv else 1
    with tempfile.TemporaryDirectory() as tmp:
        root = keep or Path(tmp)
        results = [one_run(root, index) for index in range(runs)]
    print(f"{sum(results)} of {runs} runs had every level within {TARGET:.0%} of the truth")


if __name__ == "__main__":
    main()
