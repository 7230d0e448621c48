"""build_report on the seed's run: every section comes from the recorded results, and the seed's finding stands."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from specops.agent.report import build_report
from specops.agent.report.evidence import ToolExchange
from specops.tools.benchmark.models import BenchmarkResult
from specops.tools.sglang.stop import StopResult
from specops.transcripts import ToolCallEvent

from .test_report_scenario import (
    DRAFTER_REPO,
    HONEST_ANSWER,
    LEVELS,
    TOK_S,
    Transcript,
    running,
    seed_run,
    server_config,
    sweep,
)


@pytest.fixture(scope="module")
def report():
    return build_report(seed_run().events, HONEST_ANSWER, status="completed")


def test_run_host_and_versions_come_from_the_events(report):
    assert report.run.id == "run-seed" and report.run.policy == "playbook" and report.run.status == "completed"
    assert report.run.duration_s and report.run.duration_s > 60
    assert report.host.source == "host_facts" and report.host.gpu_count == 8 and report.host.interconnect == "pcie"
    v = report.host.versions
    assert (v.sglang, v.python, v.huggingface_hub, v.driver) == ("0.5.10", "3.12.3", "1.3.4", "580.159.04")


def test_drafter_section_joins_the_config_and_the_download(report):
    d = report.drafter
    assert d.repo_id == DRAFTER_REPO and d.sha == "a" * 40 and d.block_size == 8 and d.served_block_size == 8
    assert d.target_compatible is True and len(d.checks) == 3 and d.target_layer_ids == [1, 30, 59]


def test_configs_tried_are_named_from_the_server_config_with_failures(report):
    tried = {c.name: c for c in report.configs}
    assert list(tried) == ["tp8", "tp8-ep4", "tp8-ep4+dflash", "tp8-ep4+dflash+no-graphs", "tp8+dflash"]
    assert not tried["tp8-ep4+dflash"].launched and tried["tp8-ep4+dflash"].failure_cause == "cuda_graph_failure"
    assert tried["tp8+dflash"].speculative and tried["tp8+dflash"].launched and not tried["tp8"].speculative


def test_benchmark_rows_cover_every_config_and_level_with_the_measured_figures(report):
    rows = {(r.config, r.concurrency): r for r in report.benchmarks}
    assert len(rows) == 4 * len(LEVELS)
    for name, figures in TOK_S.items():
        assert [rows[(name, c)].output_tok_s for c in LEVELS] == figures
    row = rows[("tp8+dflash", 1)]
    dumped = row.model_dump()
    assert {"config", "speculative", "concurrency", "output_tok_s", "ttft_ms_p50", "itl_ms_p50"} <= set(dumped)
    assert row.speculative and row.ttft_ms_p50 == pytest.approx(44.0) and row.tokens_per_chunk == pytest.approx(3.8)
    assert row.output_tok_s_ci95 is None and row.samples == 1  # one sweep: the spread is not known


def test_comparison_uses_the_best_baseline_at_each_level(report):
    by_level = {c.concurrency: c for c in report.comparison}
    # TP8 is the faster baseline at low load, EP4 at high load: neither is chosen in advance.
    assert by_level[1].best_autoregressive == "tp8" and by_level[1].autoregressive_tok_s == 97.9
    assert by_level[256].best_autoregressive == "tp8-ep4" and by_level[256].autoregressive_tok_s == 1530.5
    assert by_level[1].best_speculative == "tp8+dflash" and by_level[256].best_speculative == "tp8-ep4+dflash+no-graphs"
    assert by_level[1].speedup == pytest.approx(124.0 / 97.9) and by_level[1].winner == "speculative"
    assert by_level[256].speedup == pytest.approx(1230.0 / 1530.5) and by_level[256].winner == "autoregressive"


def test_dflash_wins_at_c1_loses_at_the_peak_and_the_crossover_is_interpolated(report):
    crossover = report.crossover
    assert crossover.kind == "between_levels" and crossover.between == (32, 64)
    # log2 interpolation of speedups 760/683.9 at C=32 and 905/974.8 at C=64.
    s0, s1 = 760.0 / 683.9, 905.0 / 974.8
    expected = 2 ** (5 + (s0 - 1) / (s0 - s1))
    assert crossover.concurrency == pytest.approx(expected, abs=0.1)
    assert "C=32" in crossover.statement and "C=64" in crossover.statement


def test_recommendation_follows_from_the_comparison(report):
    rec = report.recommendation
    bands = [(b.min_concurrency, b.max_concurrency, b.config) for b in rec.bands]
    assert bands == [(1, 32, "tp8+dflash"), (64, 256, "tp8-ep4")]
    assert rec.bands[0].margin == pytest.approx((760.0 / 683.9, 124.0 / 97.9))
    # One server for every load: tp8 is at worst 97.9/124 of the best (C=1); tp8-ep4 only 69/124.
    assert rec.single_config == "tp8" and rec.single_config_worst_ratio == pytest.approx(97.9 / 124.0)
    assert "C=1..32: serve tp8+dflash" in rec.text and rec.policy_text == HONEST_ANSWER.recommendation


def test_acceptance_section_has_both_weightings_with_intervals_and_method(report):
    a = report.acceptance
    assert a.config == "tp8-ep4+dflash+no-graphs" and a.prompt_counts == {"math": 12, "code": 12, "chat": 12}
    assert 3.5 < a.overall.request_mean < 4.1 and 3.5 < a.overall.token_weighted < 4.1
    low, high = a.overall.token_weighted_ci95
    assert low < a.overall.token_weighted < high
    assert [c.category for c in a.categories] == ["math", "code", "chat"] and "spec_verify_ct" in a.method


def test_failures_name_the_next_action_and_what_recovered_them(report):
    by_kind = {f.kind: f for f in report.failures}
    assert set(by_kind) == {"does_not_fit", "invalid_input", "cli_unusable", "launch_failed"}
    assert all(f.status == "recovered" for f in report.failures)
    assert (
        by_kind["cli_unusable"].next_action.startswith("start_download(")
        and "library" in by_kind["cli_unusable"].next_action
    )
    assert "finished" in by_kind["cli_unusable"].recovered_by
    launch = by_kind["launch_failed"]
    assert launch.cause == "cuda_graph_failure" and "cuda_graphs True -> False" in launch.recovered_by
    assert by_kind["invalid_input"].next_action == "list_freeable()"


def test_a_launch_in_short_names_what_tells_its_layout_and_its_retry_apart():
    config = {
        "model_path": "/m",
        "port": 30000,
        "tp": 8,
        "ep": 8,
        "dp": 8,
        "enable_dp_attention": True,
        "mem_fraction_static": 0.9,
    }
    exchange = ToolExchange(
        seq=2,
        call_seq=1,
        tool="launch_server",
        args={"config": config},
        ok=True,
        result=None,
        error=None,
        duration_s=0.5,
        ts=datetime.now(UTC),
        call_ts=datetime.now(UTC),
    )
    assert exchange.describe() == (
        "launch_server(config={port=30000,tp=8,ep=8,dp=8,enable_dp_attention=True,mem_fraction_static=0.9})"
    )


def test_time_per_todo_item_and_tool(report):
    todos = {t.content: t for t in report.timing.todos}
    assert set(todos) == {
        "Check host and disk",
        "Download the drafter",
        "Benchmark baselines",
        "Deploy DFlash and measure acceptance",
        "Benchmark DFlash and compare",
    }
    assert all(t.final_status == "completed" and t.in_progress_s > 0 for t in todos.values())
    # The download item stays in progress while the baselines are measured: the overlap shows.
    assert todos["Download the drafter"].in_progress_s > todos["Benchmark baselines"].in_progress_s
    tools = {t.tool: t for t in report.timing.tools}
    assert tools["launch_server"].calls == 5 and tools["launch_server"].failed == 1
    assert tools["benchmark"].total_s == pytest.approx(24.0)


def test_left_running_is_the_server_never_stopped(report):
    assert [(s.config, s.port, s.pid) for s in report.left_running.servers] == [("tp8+dflash", 30000, 1004)]
    assert report.left_running.policy_text == HONEST_ANSWER.left_running
    stopped = build_report(seed_run(leave_running=False).events, None, status="completed")
    assert stopped.left_running.servers == []


def test_critique_is_answered_from_the_tables(report):
    c = report.critique
    assert "best autoregressive configuration measured at that same level" in c.baseline
    assert "tp8 at C=1..32" in c.baseline and "tp8-ep4 at C=64..256" in c.baseline
    assert "request mean" in c.acceptance_method and "token weighted" in c.acceptance_method
    assert c.recommendation_per_load == report.recommendation.text


def test_an_honest_answer_raises_no_flag(report):
    assert report.flags == [] and report.notes == []


def test_with_only_ep4_measured_the_baseline_is_ep4_and_the_report_says_so():
    """The seed's own mistake, replayed: one baseline chosen in advance."""
    t = Transcript()
    t.start("benchmark DFlash")
    base, spec = server_config("tp8-ep4"), server_config("tp8+dflash")
    t.tool("launch_server", {"config": base.model_dump(mode="json")}, running(base, 10))
    t.tool("benchmark", {"port": 30000, "levels": LEVELS}, sweep(TOK_S["tp8-ep4"]))
    t.tool("stop_server", {"server": {"pid": 10}}, _stop(10))
    t.tool("launch_server", {"config": spec.model_dump(mode="json")}, running(spec, 11))
    t.tool("benchmark", {"port": 30000, "levels": LEVELS}, sweep(TOK_S["tp8+dflash"], accept=3.8))
    report = build_report(t.events, None, status="completed")
    assert report.comparison[0].best_autoregressive == "tp8-ep4"
    assert report.comparison[0].speedup == pytest.approx(124.0 / 69.0)
    assert "Only one autoregressive configuration was measured" in report.critique.baseline
    assert report.acceptance is None and "no acceptance eval" in report.critique.acceptance_method


def _stop(pid: int) -> StopResult:
    return StopResult(
        host="sim:seed-ct200",
        pid=pid,
        was_running=True,
        port=30000,
        port_free=True,
        gpu_mib_released=1,
        gpu_released=True,
        seconds=0.5,
    )


def test_a_measurement_is_attributed_to_the_server_up_when_it_was_called_even_if_results_interleave():
    """Overlapping calls: the benchmark's call precedes the stop, its result comes after it."""
    t = Transcript()
    config = server_config("tp8")
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 20))
    bench = t.call("benchmark", {"port": 30000, "levels": [1]})
    stop = t.call("stop_server", {"server": {"pid": 20}})
    t.result(stop, "stop_server", _stop(20), 0.5)
    t.result(bench, "benchmark", sweep([97.9], levels=[1]), 2.0)
    report = build_report(t.events, None, status="completed")
    assert [r.config for r in report.benchmarks] == ["tp8"] and report.left_running.servers == []


def test_a_benchmark_of_a_server_this_run_did_not_launch_is_labelled_so():
    t = Transcript()
    t.tool("benchmark", {"port": 30001, "levels": [1]}, sweep([50.0], port=30001, levels=[1]))
    report = build_report(t.events, None, status="completed")
    assert report.benchmarks[0].config == "port 30001 (not launched by this run)"
    assert report.run.goal is None and report.host.source == "none"


def test_unreadable_results_and_calls_without_results_are_left_out_with_a_note():
    t = Transcript()
    t.start("benchmark")
    t.tool("benchmark", {"port": 30000, "levels": [1]}, sweep([50.0], levels=[1]))
    t.add(ToolCallEvent, call_id="broken", tool="benchmark", args={"port": 30000, "levels": [1]})
    broken = t.events[-2].model_copy(
        update={"call_id": "broken", "result": {"levels": "not a list"}, "seq": len(t.events)}
    )
    t.events.append(broken)
    t.add(ToolCallEvent, call_id="never-answered", tool="benchmark", args={"port": 30000, "levels": [1]})
    t.tool("a_tool_from_the_future", {"x": 1}, BenchmarkResult.model_validate(t.events[2].result))
    report = build_report(t.events, None, status="cancelled")
    assert len(report.benchmarks) == 1 and report.run.status == "cancelled"
    assert len(report.notes) == 1 and "does not read as BenchmarkResult" in report.notes[0]
    assert {t.tool for t in report.timing.tools} == {"benchmark", "a_tool_from_the_future"}


def test_a_restart_whose_relaunch_failed_leaves_nothing_listed_as_running_and_names_the_config_tried():
    """restart_server stops s1, then the relaunch fails: s1 is down, and the failure is the changed configuration's."""
    from specops.tools.errors import ToolErrorRecord

    t = Transcript()
    config = server_config("tp8")
    t.tool(
        "launch_server", {"config": config.model_dump(mode="json")}, running(config, 30).model_copy(update={"id": "s1"})
    )
    t.tool(
        "restart_server",
        {"server": "s1", "changes": {"cuda_graphs": False}},
        ToolErrorRecord(
            kind="launch_failed",
            what="s1 was stopped, then its relaunch failed: out of memory",
            remedy="lower mem_fraction_static",
            details={"cause": "out_of_memory", "stopped_server": "s1", "stopped": _stop(30).model_dump(mode="json")},
        ),
    )
    report = build_report(t.events, None, status="failed")
    assert report.left_running.servers == []
    assert [(c.name, c.launched) for c in report.configs] == [("tp8", True), ("tp8+no-graphs", False)]
