"""Goodput and the server's load in the report: the rows, benchmarks.csv, the markdown section, and every request
in requests.jsonl; built from benchmark results whose levels come from hand-made raw levels."""

from __future__ import annotations

import csv
import json

import pytest

from specops.agent.report import build_report, write_report
from specops.tools.benchmark.goodput import GoodputTargets
from specops.tools.benchmark.models import BenchmarkResult, LevelResult
from specops.tools.benchmark.statistics import level_result
from specops.transcripts.redaction import Redactor

from .test_report_scenario import Transcript, running, server_config

LOAD = [
    {"t": 0.0, "running": 2, "queued": 0, "token_usage": 0.2},
    {"t": 0.5, "running": 2, "queued": 1, "token_usage": 0.4},
]


def _request(start: float, ttft: float, tpot: float, tokens: int = 5, **extra) -> dict:
    chunks = [ttft + k * tpot for k in range(tokens)]
    return {
        "start_s": start,
        "end_s": start + chunks[-1],
        "chunk_s": chunks,
        "chunk_tokens": [1] * tokens,
        "output_tokens": tokens,
        "prompt_tokens": 8,
        "spec_verify_ct": extra.pop("verify", None),
        "error": None,
        "cut": False,
        **extra,
    }


def _level(concurrency: int, good: int, bad: int, *, load: bool = True) -> LevelResult:
    """`good` requests within the default targets (TTFT 0.1 s, TPOT 20 ms), `bad` ones over TPOT (80 ms)."""
    requests = [_request(0.01 * i, 0.1, 0.02, verify=2) for i in range(good)]
    requests += [_request(0.01 * (good + i), 0.1, 0.08, verify=2) for i in range(bad)]
    raw = {"concurrency": concurrency, "duration_s": 2.0, "requests": requests}
    return level_result({**raw, "server_metrics": LOAD} if load else raw)


def _sweep(levels: list[LevelResult], targets: GoodputTargets | None = None) -> BenchmarkResult:
    extra = {"goodput_targets": targets} if targets is not None else {}
    return BenchmarkResult(
        host="sim:seed-ct200",
        port=30000,
        client="host",
        api="sglang",
        model=None,
        server_version="0.5.10",
        speculative_algorithm=None,
        prompts="random",
        input_len=8,
        output_len=5,
        ignore_eos=True,
        warmup_requests=0,
        levels=levels,
        best_output_tok_s=max(level.output_tok_s for level in levels),
        best_at_concurrency=levels[0].concurrency,
        method="hand-made",
        warnings=[],
        **extra,
    )


@pytest.fixture(scope="module")
def run():
    t = Transcript()
    config = server_config("tp8")
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 1))
    first = t.tool("benchmark", {"port": 30000, "levels": [2, 4]}, _sweep([_level(2, 3, 1), _level(4, 2, 2)]))
    second = t.tool("benchmark", {"port": 30000, "levels": [2]}, _sweep([_level(2, 1, 1, load=False)]))
    # Judged against other targets: left out of the goodput columns, its requests still kept.
    other = t.tool("benchmark", {"port": 30000, "levels": [2]}, _sweep([_level(2, 2, 0)], GoodputTargets(ttft_ms=500)))
    return t, (first, second, other)


def test_rows_carry_goodput_over_the_sweeps_judged_against_the_reports_targets(run):
    t, (_, _, other) = run
    report = build_report(t.events, None, status="completed")
    assert report.goodput_targets is not None
    assert (report.goodput_targets.ttft_ms, report.goodput_targets.tpot_ms) == (2000.0, 50.0)
    assert "TTFT <= 2000 ms and TPOT <= 50 ms" in report.goodput_targets.method
    rows = {r.concurrency: r for r in report.benchmarks}
    c2, c4 = rows[2], rows[4]
    assert c2.samples == 3  # throughput over all three sweeps
    first, second = _level(2, 3, 1), _level(2, 1, 1, load=False)
    assert c2.goodput_tok_s == pytest.approx((first.goodput_tok_s + second.goodput_tok_s) / 2)
    assert c2.good_fraction == pytest.approx((3 + 1) / (4 + 2))  # pooled over the two sweeps judged alike
    assert c4.good_fraction == pytest.approx(0.5)
    # The server's load: the mean of the sweeps that sampled it, the highest KV use.
    assert (c2.server_running_mean, c2.server_queued_mean, c2.server_token_usage_max) == (2.0, 0.5, 0.4)
    assert any(f"seq {other}: goodput judged against TTFT <= 500 ms" in note for note in report.notes)


def test_csv_has_the_goodput_and_server_load_columns(run, tmp_path):
    t, _ = run
    paths = write_report(tmp_path, build_report(t.events, None, status="completed"))
    with paths["csv"].open(encoding="utf-8") as f:
        rows = {int(r["concurrency"]): r for r in csv.DictReader(f)}
    for column in ("goodput_tok_s", "good_fraction", "server_running_mean", "server_queued_mean"):
        assert column in rows[2], column
    assert float(rows[4]["good_fraction"]) == pytest.approx(0.5)
    assert float(rows[4]["server_token_usage_max"]) == pytest.approx(0.4)
    assert float(rows[4]["goodput_tok_s"]) == pytest.approx(_level(4, 2, 2).goodput_tok_s)


def test_requests_jsonl_has_one_line_per_request_with_its_configuration_and_level(run, tmp_path):
    t, (first, second, other) = run
    report = build_report(t.events, None, status="completed")
    paths = write_report(tmp_path, report)
    assert paths["requests"] == tmp_path / "requests.jsonl"
    lines = [json.loads(line) for line in paths["requests"].read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 4 + 4 + 2 + 2 == len(report.requests)
    assert {(r["seq"], r["concurrency"]) for r in lines} == {(first, 2), (first, 4), (second, 2), (other, 2)}
    assert all(r["config"] == "tp8" and r["status"] == "ok" and r["level_valid"] for r in lines)
    c2 = [r for r in lines if r["seq"] == first and r["concurrency"] == 2]
    assert [r["index"] for r in c2] == [0, 1, 2, 3] and [r["good"] for r in c2] == [True, True, True, False]
    assert c2[0]["ttft_s"] == pytest.approx(0.1) and c2[0]["tpot_s"] == pytest.approx(0.02)
    assert c2[3]["tpot_s"] == pytest.approx(0.08) and c2[0]["output_tokens"] == 5 and c2[0]["spec_verify_ct"] == 2
    # report.json leaves them out; the report read back equals the one written but for them.
    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert "requests" not in document and document["benchmarks"][0]["goodput_tok_s"] is not None


def test_markdown_states_the_targets_and_goodput_per_configuration_and_level(run, tmp_path):
    t, _ = run
    text = write_report(tmp_path, build_report(t.events, None, status="completed"))["markdown"].read_text("utf-8")
    assert "## Goodput against latency targets" in text
    assert "TTFT <= 2000 ms and TPOT <= 50 ms" in text
    level = _level(4, 2, 2)
    assert f"| tp8 | 4 | {level.goodput_tok_s:.1f} | {level.output_tok_s:.1f} | 50% of 4 | 2.0 | 0.5 | 40% |" in text


def test_results_without_goodput_give_no_section_and_an_empty_requests_file(tmp_path):
    t = Transcript()
    config = server_config("tp8")
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 1))
    bare = _level(2, 1, 1).model_copy(
        update={"goodput_tok_s": None, "good_requests": None, "good_fraction": None, "requests": None}
    )
    t.tool("benchmark", {"port": 30000, "levels": [2]}, _sweep([bare]))
    report = build_report(t.events, None, status="completed")
    assert report.goodput_targets is None and report.benchmarks[0].goodput_tok_s is None
    paths = write_report(tmp_path, report)
    assert paths["requests"].read_text(encoding="utf-8") == ""
    assert "## Goodput" not in paths["markdown"].read_text(encoding="utf-8")


def test_a_runs_redactor_covers_the_requests_too(run, tmp_path):
    t, _ = run
    redactor = Redactor(environ={})
    redactor.add_secret("tp8", "SECRET")  # the configuration's name, as a stand-in for a secret in it
    paths = write_report(tmp_path, build_report(t.events, None, status="completed"), redactor=redactor)
    lines = [json.loads(line) for line in paths["requests"].read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 12 and {r["config"] for r in lines} == {"[REDACTED:SECRET]"}


def test_rows_say_how_many_requests_goodput_was_judged_on(run):
    t, _ = run
    rows = {r.concurrency: r for r in build_report(t.events, None, status="completed").benchmarks}
    assert (rows[2].requests_judged, rows[4].requests_judged) == (4 + 2, 4)
