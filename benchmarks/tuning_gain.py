"""What tuning the speculative settings gains over SGLang's defaults, per concurrency, beside what the model says.

Runs the playbook on a simulated host where SGLang's default settings are not the
best at every load (EAGLE-3 on sim:seed-ct200: SGLang picks 3 steps, top-k 1, 4 draft
tokens for Kimi-K2.6), with every concurrency level, and prints per level from the
run's report: the fastest configuration at SGLang's defaults, the fastest of the
settings the playbook chose to try, and the gain. Beside them, the target: the
simulator's modelled gain of the same configurations, and the best a full grid of
chains (1 to 7 steps, top-k 1) would reach, so the few settings the playbook tries can
be held against an exhaustive search in one run.

    .venv/bin/python benchmarks/tuning_gain.py [GOAL] [PROFILE]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from specops.agent.report.schema import ConfigTried, Report
from specops.agent.run import RunOptions, run_goal
from specops.evals.graders.numbers_match_truth import Truth

GOAL = "benchmark lightseekorg/kimi-k2.6-eagle3.1-mla"
PROFILE = "seed-ct200"
POLICY = "playbook:levels=1,32,64,128,256;ar_layouts=2;spec_layouts=1"
GRID_STEPS = range(1, 8)


def _chain(config: ConfigTried, steps: int) -> ConfigTried:
    return config.model_copy(update={"num_steps": steps, "eagle_topk": 1, "block_size": steps + 1})


def main() -> None:
    goal = sys.argv[1] if len(sys.argv) > 1 else GOAL
    profile = sys.argv[2] if len(sys.argv) > 2 else PROFILE
    with tempfile.TemporaryDirectory() as tmp:
        outcome = run_goal(goal, host=f"sim:{profile}", policy=POLICY, run_dir=Path(tmp) / "run", options=RunOptions())
        report = Report.model_validate(json.loads((outcome.run_dir / "report.json").read_text()))
    print(f"{goal} on sim:{profile}: run {outcome.status}")
    if report.tuning is None:
        print("  no setting other than SGLang's defaults was measured: nothing to compare")
        return
    truth = Truth.of(profile, [])
    configs = {c.name: c for c in report.configs}
    print(f"  tried beside SGLang's defaults: {', '.join(report.tuning.tuned)}")
    print(
        "  level   defaults tok/s   best tried (tok/s)                       gain  | modelled gain   grid best (gain)"
    )
    for level in report.tuning.levels:
        c = level.concurrency
        defaults, best = configs[level.defaults_config], configs[level.best_config]
        modelled = truth.tok_s(best, c) / truth.tok_s(defaults, c) - 1
        grid = {steps: truth.tok_s(_chain(defaults, steps), c) for steps in GRID_STEPS}
        grid_steps = max(grid, key=lambda s: grid[s])
        grid_gain = grid[grid_steps] / truth.tok_s(defaults, c) - 1
        print(
            f"  C={c:<5} {level.defaults_tok_s:>14.1f}   {level.best_config:<26} ({level.best_tok_s:>7.1f})"
            f" {level.gain:>+6.1%}  | {modelled:>+12.1%}   {grid_steps} steps ({grid_gain:+.1%})"
        )


if __name__ == "__main__":
    main()
