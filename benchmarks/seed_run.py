"""The README's main job, timed: the seed's goal on sim:seed-ct200 with both faults, the playbook, quick-run scales.

Runs exactly what the README's first command runs (through run_goal, so the
terminal display is not timed) RUNS times and prints, from each run's transcript:
wall time, time inside tools (the host doing the work, tools that overlap each
other counted once), time waiting on the policy, and what is left, the
harness's own time (planning the next step, recording, the report), also per
model request. Then, from its report.json, how far the reported tok/s lie from
the simulator's truth (the eval grader's Truth): median and worst level, for
autoregressive and speculative rows apart.

    .venv/bin/python benchmarks/seed_run.py [RUNS]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from specops.agent.run import RunOptions, run_goal
from specops.evals.graders.numbers_match_truth import Truth
from specops.transcripts import read_transcript

GOAL = "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
PROFILE = "seed-ct200"
FAULTS = ("full_disk", "broken_cli")
APPROVED = ("cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8",)  # the README's --allow-delete


def _merged_seconds(spans: list[tuple[float, float]]) -> float:
    """Total length of the union of (start, end) spans: overlapping tools count once."""
    total, end_so_far = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > end_so_far:
            total += end - max(start, end_so_far)
            end_so_far = end
    return total


def accuracy(report: dict) -> str:
    """Reported tok/s against the profile's truth: median and worst relative error, autoregressive and speculative."""
    parts = []
    rows = Truth.of(PROFILE, list(FAULTS)).row_errors(report)
    for speculative in (False, True):
        errors = sorted(
            (rel, f"{row['config']} C={row['concurrency']}")
            for rel, _, row in rows
            if row["speculative"] == speculative
        )
        if errors:
            worst = max(errors, key=lambda e: abs(e[0]))
            parts.append(
                f"{'speculative' if speculative else 'autoregressive'} {len(errors)} levels: median "
                f"{statistics.median(e for e, _ in errors):+.1%}, range {errors[0][0]:+.1%} to "
                f"{errors[-1][0]:+.1%}, worst {worst[1]}"
            )
    return "; ".join(parts)


def one_run(root: Path, index: int) -> None:
    started = time.perf_counter()
    outcome = run_goal(
        GOAL,
        host=f"sim:{PROFILE}",
        run_dir=root / f"run-{index}",
        options=RunOptions(sim_faults=FAULTS, allow_delete=APPROVED),
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
    print(f"  tok/s vs the profile's truth: {accuracy(json.loads((outcome.run_dir / 'report.json').read_text()))}")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(runs):
            one_run(Path(tmp), index)


if __name__ == "__main__":
    main()
