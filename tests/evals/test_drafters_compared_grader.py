"""drafters_compared passes a comparison reported as one and fails each way a report can fall short of it.

The report fields come from a real run of the drafters-head-to-head scenario (report.json, trimmed:
tests/evals/data/head-to-head-report.json); each bad case changes one thing in it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from specops.evals.graders import DraftersCompared

from .evidence_builder import Run

REPORTED = json.loads((Path(__file__).parent / "data" / "head-to-head-report.json").read_text(encoding="utf-8"))
EAGLE, DFLASH = "lightseekorg/kimi-k2.6-eagle3.1-mla", "SubSir/Kimi-K2.6-DFlash-tmp-long"


def grade(fields: dict, compared: list[str] | None = None):
    run = Run({"expect": {"compared": [EAGLE, DFLASH] if compared is None else compared}})
    run.report.update(fields)
    return DraftersCompared().check(run.end())


def test_the_recorded_comparison_passes():
    verdict = grade(REPORTED)
    assert verdict.passed, verdict.reason
    assert grade(REPORTED, compared=[]).passed  # nothing expected: nothing to hold


def _without_section(fields: dict) -> None:
    fields["drafters"] = [s for s in fields["drafters"] if s["identity"] != DFLASH]


def _another_drafters_card(fields: dict) -> None:
    eagle = next(run for run in fields["acceptance_runs"] if run["drafter"] == EAGLE)
    eagle["categories"][0]["card"] = 4.12  # the DFlash card's GSM8K figure


def _no_head_to_head_at_64(fields: dict) -> None:
    fields["head_to_head"] = [h for h in fields["head_to_head"] if h["concurrency"] != 64]


def _nothing_served_dflash(fields: dict) -> None:
    next(s for s in fields["drafters"] if s["identity"] == DFLASH)["configs"] = []


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (_without_section, "no section for ['SubSir/Kimi-K2.6-DFlash-tmp-long']"),
        (_another_drafters_card, "not its own card's figure"),
        (_no_head_to_head_at_64, "no head-to-head verdict at C=[64]"),
        (_nothing_served_dflash, "no benchmarked configuration served"),
    ],
)
def test_each_shortfall_fails(spoil, words):
    fields = copy.deepcopy(REPORTED)
    spoil(fields)
    verdict = grade(fields)
    assert not verdict.passed and words in verdict.reason, verdict.reason
