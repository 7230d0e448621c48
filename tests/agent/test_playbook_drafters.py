"""A comparison of drafters in the playbook's answer: each against the best baseline, then head to head."""

from __future__ import annotations

from specops.agent.policies.playbook_drafters import DrafterResult, drafter_lines


def test_a_comparison_says_each_drafter_against_the_baseline_then_head_to_head():
    eagle = DrafterResult(
        "lightseekorg/kimi-k2.6-eagle3.1-mla", "EAGLE-3", sweeps={"tp8+eagle3": {1: 110.0, 64: 970.0}}
    )
    dflash = DrafterResult("SubSir/Kimi-K2.6-DFlash-tmp-long", "DFlash", sweeps={"tp8+dflash-b8": {1: 100.0}})
    lines = drafter_lines([eagle, dflash], {"tp8": {1: 95.0, 64: 960.0}})
    assert lines[0] == "lightseekorg/kimi-k2.6-eagle3.1-mla (EAGLE-3): acceptance not measured"
    assert "C=1: EAGLE-3 best tp8+eagle3 110.0 tok/s vs autoregressive best tp8 95.0 tok/s (1.16x)" in lines[1]
    # Head to head only where both were measured: C=64 has no DFlash figure.
    assert lines[-2].startswith("head to head, kimi-k2.6-eagle3.1-mla against Kimi-K2.6-DFlash-tmp-long")
    assert lines[-1] == (
        "  C=1: kimi-k2.6-eagle3.1-mla tp8+eagle3 110.0 tok/s vs Kimi-K2.6-DFlash-tmp-long tp8+dflash-b8 100.0 tok/s "
        "(1.10x)"
    )


def test_a_drafter_that_could_not_be_measured_is_one_line():
    measured = DrafterResult("a/x-eagle3", "EAGLE-3", sweeps={"tp8+eagle3": {1: 110.0}})
    lines = drafter_lines([measured, DrafterResult("b/y-dflash", "speculation")], {"tp8": {1: 95.0}})
    assert "b/y-dflash: not measured (see what is unresolved)" in lines
    assert lines[-1] == "  no level measured for both"
