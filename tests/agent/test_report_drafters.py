"""Two drafters in one run: a section each, each acceptance table beside its own card, and the two head to head.

The run: an EAGLE-3 and a DFlash drafter for Kimi-K2.6, each read from the Hub,
downloaded and read again from its folder; each launched on TP8 (the EAGLE-3 one
on TP8-EP4 too) beside the autoregressive TP8, measured for acceptance and
benchmarked at C=1 and C=32. Their cards state different figures.
"""

from __future__ import annotations

import json

import pytest

from specops.agent.compare import CompareArgs, UnknownComparand, compare_run, compare_view
from specops.agent.final import FinalAnswer
from specops.agent.report import build_report
from specops.agent.report.markdown import render_markdown
from specops.tools.acceptance import AcceptanceResult
from specops.tools.benchmark.models import BenchmarkResult
from specops.tools.download.models import DownloadMethod
from specops.tools.drafters import DrafterConfig, ModelConfigFacts
from specops.tools.drafters.card_acceptance import CardAcceptance
from specops.tools.errors import ToolErrorRecord
from specops.tools.sglang.config import ServerConfig, SpeculativeAlgorithm
from specops.tools.sglang.stop import StopResult

from .test_report_scenario import (
    HONEST_ANSWER,
    HOST,
    TARGET,
    Transcript,
    acceptance,
    download_handle,
    host_facts,
    level,
    running,
    seed_run,
)

EAGLE = "lightseekorg/kimi-k2.6-eagle3.1-mla"
EAGLE_DIR = "/root/models/kimi-k2.6-eagle3.1-mla"
DFLASH = "SubSir/Kimi-K2.6-DFlash-tmp-long"
DFLASH_DIR = "/root/models/Kimi-K2.6-DFlash-tmp-long"
EAGLE_CARD = {"gsm8k": 3.1, "humaneval": 3.3}
DFLASH_CARD = {"gsm8k": 6.5, "math500": 7.8}
# Output tok/s and its interval at C=1 and C=32, per configuration.
TOK_S = {
    "tp8": {1: (100.0, (95.0, 105.0)), 32: (1000.0, (950.0, 1050.0))},
    "tp8+eagle3": {1: (150.0, (145.0, 155.0)), 32: (1100.0, (1000.0, 1200.0))},
    "tp8-ep4+eagle3": {32: (1150.0, (1100.0, 1200.0))},
    "tp8+dflash": {1: (200.0, (190.0, 210.0)), 32: (1120.0, (1050.0, 1190.0))},
}


def _drafter_config(repo: str, source: str, algorithm: str, card: dict[str, float] | None) -> DrafterConfig:
    facts = ModelConfigFacts(
        source=source,
        architectures=["Eagle3DeepseekV2ForCausalLM" if algorithm == "EAGLE3" else "DFlashDraftModel"],
        model_type=None,
        num_hidden_layers=1 if algorithm == "EAGLE3" else 3,
        hidden_size=7168,
        vocab_size=163840,
        dtype="bfloat16",
        weight_bytes=None,
        weight_size=None,
    )
    target = ModelConfigFacts(
        source=TARGET,
        architectures=["KimiK25ForConditionalGeneration"],
        model_type="kimi_k25",
        num_hidden_layers=61,
        hidden_size=7168,
        vocab_size=163840,
        dtype="bfloat16",
        weight_bytes=None,
        weight_size=None,
    )
    return DrafterConfig(
        algorithm=algorithm,
        identified_by=f"architectures: {facts.architectures[0]}",
        drafter=facts,
        target=target,
        sglang_version="0.5.10",
        sglang_defaults=None,
        block_size=8 if algorithm == "DFLASH" else None,
        checks=[f"hidden_size 7168 matches the target ({repo})"],
        notes=[],
        summary=f"{source}: {algorithm} drafter",
        card_acceptance=CardAcceptance(figures=card, label=f"tau ({repo})") if card else None,
    )


def _handle(repo: str, folder: str, pid: int):
    handle = download_handle(DownloadMethod.LIBRARY, pid)
    return handle.model_copy(update={"repo_id": repo, "target_dir": folder, "command": ["hf", "download", repo]})


def _config(name: str) -> ServerConfig:
    layout = {"tp8": {"tp": 8}, "tp8-ep4": {"tp": 8, "ep": 4}}[name.split("+")[0]]
    speculative = {}
    if name.endswith("+eagle3"):
        speculative = {"speculative_algorithm": SpeculativeAlgorithm.EAGLE3, "drafter_path": EAGLE_DIR}
    elif name.endswith("+dflash"):
        speculative = {"speculative_algorithm": SpeculativeAlgorithm.DFLASH, "drafter_path": DFLASH_DIR}
    return ServerConfig(model_path=TARGET, trust_remote_code=True, **layout, **speculative)


def _sweep(name: str, algorithm: str | None) -> BenchmarkResult:
    levels = [
        level(c, tok_s, accept=3.0 if algorithm else None).model_copy(update={"output_tok_s_ci95": ci})
        for c, (tok_s, ci) in TOK_S[name].items()
    ]
    best = max(levels, key=lambda lv: lv.output_tok_s)
    return BenchmarkResult(
        host=HOST,
        port=30000,
        client="host",
        api="sglang",
        model=None,
        server_version="0.5.10",
        speculative_algorithm=algorithm,
        prompts="random",
        input_len=512,
        output_len=256,
        ignore_eos=True,
        warmup_requests=1,
        levels=levels,
        best_output_tok_s=best.output_tok_s,
        best_at_concurrency=best.concurrency,
        method="closed loop",
        warnings=[],
    )


def _measured(algorithm: str) -> AcceptanceResult:
    """Acceptance on the card's datasets (and mt-bench, which neither card states)."""
    measured = acceptance()
    renamed = {"math": "gsm8k", "code": "humaneval", "chat": "mt-bench"}
    categories = [c.model_copy(update={"category": renamed[c.category]}) for c in measured.categories]
    return measured.model_copy(update={"categories": categories, "speculative_algorithm": algorithm})


def _stop(t: Transcript, pid: int) -> None:
    stopped = StopResult(
        host=HOST,
        pid=pid,
        was_running=True,
        port=30000,
        port_free=True,
        gpu_mib_released=1,
        gpu_released=True,
        seconds=1.0,
    )
    t.tool("stop_server", {"server": {"pid": pid, "port": 30000}}, stopped)


def _serve(t: Transcript, name: str, pid: int, algorithm: str | None, *, measure: bool = False) -> None:
    config = _config(name)
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, pid), 8.0)
    if measure:
        t.tool("acceptance", {"port": 30000}, _measured(algorithm or ""), 5.0)
    t.tool("benchmark", {"port": 30000, "levels": list(TOK_S[name])}, _sweep(name, algorithm), 6.0)
    _stop(t, pid)


def two_drafter_run() -> Transcript:
    t = Transcript("run-two-drafters")
    t.start(f"does {EAGLE} beat {DFLASH}?")
    t.tool("host_facts", {}, host_facts(), 1.0)
    target = {"path": TARGET}
    for repo, algorithm, card in ((EAGLE, "EAGLE3", EAGLE_CARD), (DFLASH, "DFLASH", DFLASH_CARD)):
        hub = _drafter_config(repo, f"{repo}@main", algorithm, card)
        t.tool("read_drafter_config", {"drafter": {"repo_id": repo}, "target": target}, hub)
    for pid, (repo, folder) in enumerate(((EAGLE, EAGLE_DIR), (DFLASH, DFLASH_DIR)), start=501):
        t.tool("start_download", {"repo_id": repo, "target_dir": folder}, _handle(repo, folder, pid))
    # Read again from the folders: the EAGLE-3 download came without its card, the DFlash one with it.
    for repo, folder, algorithm, card in (
        (EAGLE, EAGLE_DIR, "EAGLE3", None),
        (DFLASH, DFLASH_DIR, "DFLASH", DFLASH_CARD),
    ):
        t.tool(
            "read_drafter_config",
            {"drafter": {"path": folder}, "target": target},
            _drafter_config(repo, folder, algorithm, card),
        )
    _serve(t, "tp8", 1001, None)
    _serve(t, "tp8+eagle3", 1002, "EAGLE3", measure=True)
    _serve(t, "tp8-ep4+eagle3", 1003, "EAGLE3")
    _serve(t, "tp8+dflash", 1004, "DFLASH", measure=True)
    t.end()
    return t


@pytest.fixture(scope="module")
def report():
    return build_report(two_drafter_run().events, None, status="completed")


def test_each_drafter_has_one_section_with_its_own_configurations_and_card(report):
    eagle, dflash = report.drafters
    assert (eagle.identity, eagle.repo_id, eagle.path, eagle.algorithm) == (EAGLE, EAGLE, EAGLE_DIR, "EAGLE3")
    assert (dflash.identity, dflash.repo_id, dflash.path, dflash.algorithm) == (DFLASH, DFLASH, DFLASH_DIR, "DFLASH")
    assert eagle.configs == ["tp8+eagle3", "tp8-ep4+eagle3"] and dflash.configs == ["tp8+dflash"]
    # The folder read of the EAGLE-3 drafter found no card: the Hub read's stands.
    assert eagle.card.figures == EAGLE_CARD and dflash.card.figures == DFLASH_CARD
    assert report.drafter == dflash  # the last read, as before
    tried = {c.name: c.drafter for c in report.configs}
    assert tried == {"tp8": None, "tp8+eagle3": EAGLE, "tp8-ep4+eagle3": EAGLE, "tp8+dflash": DFLASH}


def test_each_acceptance_table_is_beside_its_own_drafters_card(report):
    by_config = {a.config: a for a in report.acceptance_runs}
    eagle, dflash = by_config["tp8+eagle3"], by_config["tp8+dflash"]
    assert eagle.drafter == EAGLE and dflash.drafter == DFLASH
    assert {c.category: c.card for c in eagle.categories} == {"gsm8k": 3.1, "humaneval": 3.3, "mt-bench": None}
    assert {c.category: c.card for c in dflash.categories} == {"gsm8k": 6.5, "humaneval": None, "mt-bench": None}
    assert eagle.card_label == f"tau ({EAGLE})" and dflash.card_label == f"tau ({DFLASH})"


def test_head_to_head_per_level_with_each_drafters_best_configuration(report):
    c1, c32 = report.head_to_head
    assert (c1.a.drafter, c1.b.drafter) == (EAGLE, DFLASH) and [c1.concurrency, c32.concurrency] == [1, 32]
    # C=1: 150 against 200, intervals apart.
    assert (c1.a.config, c1.b.config) == ("tp8+eagle3", "tp8+dflash") and c1.ratio == pytest.approx(0.75)
    assert c1.ratio_ci95 == pytest.approx((145 / 210, 155 / 190)) and c1.winner == DFLASH
    assert c1.a.vs_autoregressive == pytest.approx(1.5) and c1.a.vs_autoregressive_winner == "speculative"
    assert c1.b.vs_autoregressive == pytest.approx(2.0) and c1.best_autoregressive == "tp8"
    # C=32: EAGLE-3's best is on TP8-EP4; 1150 against 1120 with overlapping intervals: a tie.
    assert c32.a.config == "tp8-ep4+eagle3" and c32.ratio == pytest.approx(1150 / 1120)
    assert c32.winner == "tie" and "the ratio's interval includes 1: within the measurement spread" in c32.notes
    # Each side against the baseline is what compare_levels says of that drafter alone.
    assert c32.b.vs_autoregressive == pytest.approx(1.12) and c32.b.vs_autoregressive_winner == "tie"
    # The comparison of the best speculative against the best autoregressive stands as it was.
    assert [c.best_speculative for c in report.comparison] == ["tp8+dflash", "tp8-ep4+eagle3"]


def test_the_markdown_has_a_section_per_drafter_and_the_head_to_head_table(report):
    text = render_markdown(report)
    assert "## Drafters" in text and f"### {EAGLE}" in text and f"### {DFLASH}" in text
    assert "Configurations that served it: tp8+eagle3, tp8-ep4+eagle3." in text
    assert f"Its model card states 'tau ({EAGLE})'" in text and "| gsm8k | 3.10 |" in text
    assert "## Head to head" in text and f"### {EAGLE} against {DFLASH}" in text
    row = next(line for line in text.splitlines() if line.startswith("| 32 | tp8-ep4+eagle3"))
    assert "| tie |" in row and "1.03x" in row
    assert f"### On tp8+eagle3 ({EAGLE}, block size 8)" in text


def test_a_one_drafter_run_has_no_head_to_head_and_the_same_drafter():
    report = build_report(seed_run().events, HONEST_ANSWER, status="completed")
    assert report.head_to_head == [] and len(report.drafters) == 1
    d = report.drafter
    assert d == report.drafters[0] and d.identity == DFLASH and d.repo_id == DFLASH and d.algorithm == "DFLASH"
    assert d.configs == ["tp8-ep4+dflash+no-graphs", "tp8+dflash"]
    assert all(a.drafter == DFLASH for a in report.acceptance_runs)
    text = render_markdown(report)
    assert "## Drafter\n" in text and "## Drafters" not in text and "## Head to head" not in text


def test_a_refused_drafter_has_its_section_beside_the_one_read():
    t = Transcript("run-refused")
    t.start("compare two drafters")
    refusal = ToolErrorRecord(
        kind="incompatible_drafter", what="hidden_size 4096 is not the target's 7168", remedy="pick another drafter"
    )
    t.tool("read_drafter_config", {"drafter": {"repo_id": "x/bad-eagle3"}, "target": {"path": TARGET}}, refusal)
    t.tool(
        "read_drafter_config",
        {"drafter": {"repo_id": DFLASH}, "target": {"path": TARGET}},
        _drafter_config(DFLASH, f"{DFLASH}@main", "DFLASH", DFLASH_CARD),
    )
    t.end()
    report = build_report(t.events, None, status="completed")
    refused, read = report.drafters
    assert refused.identity == "x/bad-eagle3" and refused.target_compatible is False and refused.problems
    assert read.identity == DFLASH and report.drafter == read and report.head_to_head == []


def _write(events, path):
    path.write_text("".join(json.dumps(e.model_dump(mode="json")) + "\n" for e in events), encoding="utf-8")
    return path


def test_compare_answers_a_against_b_for_drafters_and_for_configurations(tmp_path, report):
    path = _write(two_drafter_run().events, tmp_path / "events.jsonl")
    drafters = compare_run(path, CompareArgs(a=EAGLE, b=DFLASH))
    assert drafters.head_to_head == report.head_to_head and drafters.levels == report.comparison
    assert drafters.drafters == {EAGLE: ["tp8+eagle3", "tp8-ep4+eagle3"], DFLASH: ["tp8+dflash"]}
    view = compare_view(drafters)
    verdicts = {row[0]: row[view["columns"].index("verdict")] for row in view["levels"]}
    assert (view["a"], view["b"], verdicts) == (EAGLE, DFLASH, {1: DFLASH, 32: "tie"})
    # One configuration against another; a drafter by the folder it was served from.
    configs = compare_run(path, CompareArgs(a="tp8+eagle3", b=DFLASH_DIR))
    assert configs.b == DFLASH and [h.concurrency for h in configs.head_to_head] == [1, 32]
    assert configs.head_to_head[1].a.config == "tp8+eagle3" and configs.head_to_head[1].ratio == pytest.approx(
        1100 / 1120
    )
    # Without a and b: as before.
    assert compare_run(path).head_to_head == [] and "a" not in compare_view(compare_run(path))


def test_compare_refuses_a_name_it_does_not_know_listing_those_it_does(tmp_path):
    path = _write(two_drafter_run().events, tmp_path / "events.jsonl")
    with pytest.raises(UnknownComparand) as refused:
        compare_run(path, CompareArgs(a="tp4+eagle3", b=DFLASH))
    record = refused.value.record()
    assert record.kind == "invalid_input" and "tp4+eagle3" in record.what
    assert record.details["drafters"] == [EAGLE, DFLASH] and "tp8-ep4+eagle3" in record.details["configurations"]
    with pytest.raises(ValueError, match="both a and b"):
        CompareArgs(a=EAGLE)


def test_a_factor_between_the_two_drafters_is_backed_by_the_head_to_head():
    said = "C=1: EAGLE-3 tp8+eagle3 150.0 tok/s vs DFlash tp8+dflash 200.0 tok/s ({})."
    events = two_drafter_run().events
    right = FinalAnswer(status="completed", summary=said.format("0.75x"), left_running=[])
    assert build_report(events, right, status="completed").flags == []
    wrong = FinalAnswer(status="completed", summary=said.format("0.5x"), left_running=[])
    (flag,) = build_report(events, wrong, status="completed").flags
    assert flag.kind == "contradicted" and "0.5x" in flag.evidence
