"""Final answers as a capable model writes them, checked against runs whose figures are known.

Each correct sentence must pass and each wrong one must be flagged, on the figure that is wrong. The sentences
carry what real answers carry: versions (SGLang 0.5.10), concurrency written C1 / C=1 / c=64 / from C=64,
throughput without its unit beside a concurrency, factor ranges ("1.4x-2.9x slower"), and acceptance lengths
that only a benchmark level reported.
"""

from __future__ import annotations

import pytest

from specops.agent.final import FinalAnswer
from specops.agent.report import build_report
from specops.agent.report.claims import check_claims, read_figures
from specops.tools.benchmark.models import BenchmarkResult
from specops.tools.sglang.stop import StopResult

from .test_report_scenario import (
    GOAL,
    HOST,
    Transcript,
    acceptance,
    host_facts,
    running,
    seed_run,
    server_config,
    sweep,
)

LEFT = ["tp8+dflash on port 30000"]


def _with_accepts(result: BenchmarkResult, accepts: dict[int, float], lifetime: float | None = None) -> BenchmarkResult:
    levels = [
        level.model_copy(update={"accept_length": accepts[level.concurrency], "accept_length_lifetime": lifetime})
        for level in result.levels
    ]
    return result.model_copy(update={"levels": levels})


def drafter_run(
    base: dict[int, float],
    spec: dict[int, tuple[float, float]],
    *,
    evaluate: bool,
    again: dict[int, float] | None = None,
    lifetime: float | None = None,
) -> list:
    """tp8, then tp8+dflash (left running) on the seed host: `base` tok/s and `spec` (tok/s, accept length) per
    level; the acceptance eval when `evaluate`; a second DFlash sweep with the accept lengths `again`."""
    levels = sorted(base)
    t = Transcript()
    t.start(GOAL)
    t.tool("host_facts", {}, host_facts(), 1.0)
    tp8 = server_config("tp8")
    t.tool("launch_server", {"config": tp8.model_dump(mode="json")}, running(tp8, 1001), 8.4)
    t.tool("benchmark", {"port": 30000, "levels": levels}, sweep([base[c] for c in levels], levels=levels), 6.0)
    t.tool(
        "stop_server",
        {"server": {"pid": 1001, "port": 30000}},
        StopResult(
            host=HOST,
            pid=1001,
            was_running=True,
            port=30000,
            port_free=True,
            gpu_mib_released=700000,
            gpu_released=True,
            seconds=1.0,
        ),
        1.0,
    )
    dflash = server_config("tp8+dflash")
    t.tool("launch_server", {"config": dflash.model_dump(mode="json")}, running(dflash, 1002), 8.4)
    if evaluate:
        t.tool("acceptance", {"port": 30000}, acceptance(), 5.0)
    measured = sweep([spec[c][0] for c in levels], levels=levels, accept=spec[levels[0]][1])
    for accepts in filter(None, ({c: spec[c][1] for c in levels}, again)):
        t.tool("benchmark", {"port": 30000, "levels": levels}, _with_accepts(measured, accepts, lifetime), 6.0)
    t.end()
    return t.events


def _summary_flags(events, summary: str) -> list[str]:
    """What the report flags in this summary, as "kind: evidence"."""
    answer = FinalAnswer(status="completed", summary=summary, left_running=LEFT)
    return [f"{f.kind}: {f.evidence}" for f in build_report(events, answer, status="completed").flags]


@pytest.fixture(scope="module")
def seed():
    """tp8 97.9 / tp8-ep4 69.0 / tp8+dflash 124.0 / no-graphs 41.0 tok/s at C=1 ... 1263 / 1530.5 / 950 / 1230 at
    C=256; tau 3.8 at every level, the eval's categories 3.4..4.3; the crossover between C=32 and C=64."""
    return seed_run().events


@pytest.fixture(scope="module")
def weak_drafter():
    """Acceptance falls with load: the eval says ~3.8, the benchmark levels 3.1 at C=1 down to 1.9 at C=256."""
    return drafter_run(
        {1: 97.9, 32: 683.9, 64: 951.4, 256: 1263.0},
        {1: (124.0, 3.1), 32: (700.0, 2.7), 64: (760.0, 2.4), 256: (700.0, 1.9)},
        evaluate=True,
    )


@pytest.fixture(scope="module")
def idle_drafter():
    """A drafter whose drafts are never accepted (tau 1.00 at every level, no acceptance eval): slower everywhere,
    1.05x at C=1, 1.4x at C=32, 2.9x at C=64."""
    return drafter_run(
        {1: 33.9, 32: 680.0, 64: 1100.0}, {1: (32.2, 1.0), 32: (480.0, 1.0), 64: (380.0, 1.0)}, evaluate=False
    )


SEED_CORRECT = [
    (
        "Deployed on SGLang 0.5.10 (v0.5.10, CUDA 13.0, driver 580.159.04): tp8+dflash reaches 124 tok/s at C=1, "
        "1.27x the best autoregressive config (tp8 at 97.9 tok/s)."
    ),
    "C1 124.0 vs 97.9 tok/s for tp8, tau 3.8.",
    (
        "Per category the acceptance length was math 4.05, code 3.85 and chat 3.55 tokens per verify step "
        "(95% CI within 3.4-4.3), at temperature 0.0 with a draft accept rate of 0.62."
    ),
    (
        "From C=64 the drafter loses: tp8-ep4+dflash+no-graphs is 1.1x slower than tp8-ep4 at C=64 and tp8+dflash is "
        "1.6x slower at C=256."
    ),
    "tp8-ep4 is 1.6x faster than tp8+dflash at C=256.",
    "At C=128-256 DFlash is 1.2x-1.6x slower than tp8-ep4.",
    "Without CUDA graphs tp8-ep4+dflash+no-graphs is 2.4x slower than tp8 at C=1 (41.0 vs 97.9 tok/s).",
    "The crossover sits near C=48, between C=32 and C=64.",
    "Serve tp8+dflash up to C=32 (760 tok/s there) and tp8-ep4 from C=64, where it reaches 975-1,530 tok/s.",
    "On 8x RTX PRO 6000 the Kimi-K2.6 DFlash drafter wins at C1 and C32 but loses above C=32.",
    "Serve tp8+dflash below C=64 and tp8-ep4 at or above C=64.",
]

SEED_WRONG = [
    ("DFlash on TP8 reaches 142 tok/s at C1 on SGLang 0.5.10.", ["contradicted: 142 tok/s at C=1"]),
    ("C1 150.0 vs 97.9 tok/s for tp8, tau 3.8.", ["contradicted: 150 tok/s at C=1"]),
    ("At C=256 DFlash is 2.5x slower than tp8-ep4.", ["contradicted: 2.5x slower"]),
    ("tp8-ep4 is 2.2x faster than tp8+dflash at C=256.", ["contradicted: 2.2x slower"]),
    ("DFlash is 1.5x faster at C=1.", ["contradicted: 1.5x"]),
    ("Acceptance length 5.1 on SGLang v0.5.10.", ["contradicted: acceptance 5.1"]),
    ("The speculative config is 1.3x-2.9x slower at C=64-256.", ["contradicted: 2.9x slower"]),
    ("The crossover is at C=128.", ["contradicted: speculation beats"]),
    (
        "DFlash wins above C=32.",
        [
            "contradicted: at C=64 the autoregressive side won",
            "contradicted: at C=128 the autoregressive side won",
            "contradicted: at C=256 the autoregressive side won",
        ],
    ),
    ("tp8-ep4+dflash+no-graphs beats tp8 at C=1.", ["contradicted: at C=1 the autoregressive side won"]),
]


@pytest.mark.parametrize("summary", SEED_CORRECT)
def test_correct_sentences_are_not_flagged(seed, summary):
    assert _summary_flags(seed, summary) == []


@pytest.mark.parametrize(("summary", "expected"), SEED_WRONG)
def test_wrong_sentences_are_flagged_on_the_wrong_figure(seed, summary, expected):
    flags = _summary_flags(seed, summary)
    assert [f[: len(e)] for f, e in zip(flags, expected, strict=False)] == expected and len(flags) == len(expected)


def test_a_per_level_accept_length_from_the_benchmark_backs_an_acceptance_claim(weak_drafter):
    correct = (
        "The acceptance eval measured 3.8, but under load the benchmark's per-level accept length falls to "
        "1.9 at C=256 (3.1 at C1, 2.4 at c=64)."
    )
    assert _summary_flags(weak_drafter, correct) == []
    wrong = _summary_flags(weak_drafter, "Under load the per-level accept length falls to 1.2 at C=256.")
    assert [f.split(":")[:2] for f in wrong] == [["contradicted", " acceptance 1.2"]]
    assert "by the acceptance eval" in wrong[0] and "1.90, 2.40, 2.70, 3.10" in wrong[0]


def test_a_drafter_that_accepts_nothing_is_described_without_flags(idle_drafter):
    correct = [
        "On SGLang 0.5.10 the drafter never pays: C1 32.2 vs 33.9 tok/s for tp8, tau 1.00 at every level.",
        "Above C=1 the speculative server is 1.4x-2.9x slower than tp8 (c=64: 380 vs 1100 tok/s).",
        "tp8+dflash loses at every level measured (C=1, C=32, C=64), 1.05x slower even at C1.",
    ]
    for summary in correct:
        assert _summary_flags(idle_drafter, summary) == [], summary
    assert [f.split(":")[:2] for f in _summary_flags(idle_drafter, "C1 32.2 vs 33.9 tok/s, tau 2.40.")] == [
        ["contradicted", " acceptance 2.40"]
    ]
    assert [f.split(":")[:2] for f in _summary_flags(idle_drafter, "At c=64 tp8+dflash is 1.4x slower.")] == [
        ["contradicted", " 1.4x slower"]
    ]
    assert _summary_flags(idle_drafter, "DFlash wins at C1 with 32.2 tok/s.") == [
        "contradicted: at C=1 the autoregressive side won: tp8+dflash 32.2 vs tp8 33.9 tok/s"
    ]


def test_any_tool_result_backs_an_acceptance_length_not_only_the_averaged_rows():
    # Two DFlash sweeps: 1.9 then 1.3 at C=256 (the report's row averages them to 1.6); the server's lifetime
    # average after each level was 2.9. Both are in the benchmark's results, neither in a row.
    events = drafter_run(
        {1: 97.9, 256: 1263.0},
        {1: (124.0, 3.1), 256: (700.0, 1.9)},
        evaluate=True,
        again={1: 3.1, 256: 1.3},
        lifetime=2.9,
    )
    summary = "The second sweep measured an accept length of 1.3 at C=256, and the server's lifetime average was 2.9."
    assert _summary_flags(events, summary) == []
    report = build_report(events, None, status="completed")
    answer = FinalAnswer(status="completed", summary=summary, left_running=LEFT)
    without_results = check_claims(
        answer,
        status="completed",
        rows=report.benchmarks,
        comparisons=report.comparison,
        crossover=report.crossover,
        acceptance=report.acceptance_runs,
        failures=report.failures,
        running=report.left_running,
    )
    assert [f.evidence.split(":")[0] for f in without_results] == ["acceptance 1.3", "acceptance 2.9"]


@pytest.mark.parametrize(
    ("sentence", "figures"),
    [
        ("On SGLang 0.5.10 (v0.5.23 failed) the acceptance was 3.8.", [("acceptance", "3.8")]),
        ("C1 32.2 vs 33.9 tok/s, tau 1.00.", [("tok_s", "32.2"), ("tok_s", "33.9"), ("acceptance", "1.00")]),
        ("C=256: 1,230, tau 3.8", [("tok_s", "1,230"), ("acceptance", "3.8")]),
        ("1.4x-2.9x slower than tp8", [("slowdown", "1.4"), ("slowdown", "2.9")]),
        ("1.4-2.9x faster than tp8", [("speedup", "1.4"), ("speedup", "2.9")]),
        ("tp8-ep4 is 1.6x faster than tp8+dflash", [("slowdown", "1.6")]),
        (
            "a 1.3x slowdown with 1.4x lower throughput and 1.2x higher TPOT",
            [("slowdown", "1.3"), ("slowdown", "1.4"), ("slowdown", "1.2")],
        ),
        ("acceptance 3.9 on 8x H200, TTFT 44.0 ms, 36.5 GB, Llama-3.1-8B, accept rate 0.62", [("acceptance", "3.9")]),
        ("acceptance 3.8 at C=64 2 of 3 configs", [("acceptance", "3.8")]),
        ("from 97.9 to 124 tok/s", [("tok_s", "97.9"), ("tok_s", "124")]),
        ("throughput 32.2 with no acceptance word", []),
    ],
)
def test_each_number_is_read_as_the_quantity_it_stands_for(sentence, figures):
    assert [(f.kind, f.text) for f in read_figures(sentence)] == figures
