"""Tuning happened: several speculative settings were benchmarked, SGLang's defaults among them, and the report says
what tuning gained at each level.

Applies where the scenario asks for it (`expect.settings_tried`). Settings are told
apart by what the launch passed (steps, top-k, draft tokens); a configuration that
passed none ran at SGLang's defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class SettingsTried(Grader):
    name = "settings_tried"

    def grade(self, evidence: RunEvidence) -> Verdict:
        wanted = evidence.scenario.expect.settings_tried
        if wanted is None:
            return Verdict.ok("no tuning expected")
        report = evidence.report
        if report is None:
            return Verdict.fail("no report to show the settings tried")
        measured = {row.config for row in report.benchmarks if row.speculative and not row.requests_failed}
        benchmarked = [c for c in report.configs if c.speculative and c.name in measured]
        settings = {(c.num_steps, c.eagle_topk, c.block_size, c.sglang_defaults) for c in benchmarked}
        if not any(c.sglang_defaults for c in benchmarked):
            return Verdict.fail("SGLang's default settings were not benchmarked: nothing to measure tuning against")
        if len(settings) < wanted:
            return Verdict.fail(f"{len(settings)} speculative settings benchmarked, expected at least {wanted}")
        if report.tuning is None or not report.tuning.levels:
            return Verdict.fail("the report does not say what tuning gained over SGLang's defaults")
        return Verdict.ok(
            f"{len(settings)} settings benchmarked; tuning gain stated at {len(report.tuning.levels)} levels"
        )
