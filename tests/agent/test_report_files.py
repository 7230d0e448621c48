"""write_report: report.json valid against the committed schema, report.md for people, non-empty PNG plots."""

from __future__ import annotations

import csv
import json

import jsonschema
import pytest
from matplotlib.image import imread

from specops.agent.report import Report, build_report, json_schema, write_report
from specops.agent.report.json_schema import SCHEMA_PATH, render

from .test_report_scenario import HONEST_ANSWER, Transcript, running, seed_run, server_config, sweep

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    report = build_report(seed_run().events, HONEST_ANSWER, status="completed")
    return report, write_report(run_dir, report)


def test_committed_schema_is_the_one_the_model_generates():
    assert SCHEMA_PATH.name == "report-v1.schema.json"
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "agent/report/report-v1.schema.json is stale: run python -m specops.agent.report.json_schema"
    )
    assert json_schema.main(["--check"]) == 0


def test_check_reports_a_stale_file(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "report-v1.schema.json"
    stale.write_text(render().replace("output_tok_s", "tok_s"), encoding="utf-8")
    monkeypatch.setattr(json_schema, "SCHEMA_PATH", stale)
    assert json_schema.main(["--check"]) == 1 and "is stale" in capsys.readouterr().err


def test_schema_documents_the_fields_scripts_rely_on():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    assert {"acceptance", "benchmarks", "comparison", "crossover", "recommendation"} <= set(schema["required"])
    assert {"request_mean", "token_weighted"} <= set(defs["AcceptanceStat"]["required"])
    assert {"config", "speculative", "concurrency", "output_tok_s", "ttft_ms_p50", "itl_ms_p50"} <= set(
        defs["BenchmarkRow"]["required"]
    )
    assert defs["BenchmarkRow"]["properties"]["itl_ms_p50"]["description"].startswith("Per token")


def test_report_json_is_valid_against_the_schema(written):
    report, paths = written
    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    jsonschema.validate(document, json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    assert Report.model_validate(document) == report
    assert document["acceptance"]["overall"]["request_mean"] == report.acceptance.overall.request_mean
    assert {"config", "speculative", "concurrency", "output_tok_s", "ttft_ms_p50", "itl_ms_p50"} <= set(
        document["benchmarks"][0]
    )


def test_markdown_renders_every_section_with_its_tables(written):
    report, paths = written
    text = paths["markdown"].read_text(encoding="utf-8")
    for heading in (
        "## Answers to the seed's critique",
        "## Host",
        "## Drafter",
        "## Configurations tried",
        "## Throughput (output tok/s) per concurrency",
        "## Speculative vs the best autoregressive configuration, per concurrency",
        "## Recommendation",
        "## Acceptance length",
        "## Failures and how they were handled",
        "## Time spent",
        "## Left running",
    ):
        assert heading in text, heading
    assert "| tp8-ep4 | 69.0 | 658.5 | 974.8 | 1449.2 | 1530.5 |" in text
    assert "| 1 | tp8 | 97.9 | tp8+dflash | 124.0 | 1.27x |" in text
    assert "| overall | math-v1 + code-v1 + chat-v1 | 36 |" in text
    assert "cuda_graph_failure" in text and "cli_unusable" in text and "does_not_fit" in text
    assert report.crossover.statement in text and report.recommendation.text in text
    assert "![throughput](throughput.png)" in text and "![latency](latency.png)" in text
    assert "server tp8+dflash on port 30000 (pid 1004)" in text


def test_plots_are_written_and_hold_an_image(written):
    _, paths = written
    for kind in ("throughput", "latency", "acceptance", "pareto"):
        image = imread(paths[kind])
        assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600, kind
        assert image.std() > 0.05, f"{kind}.png is blank"


def test_without_latency_or_acceptance_data_only_the_throughput_plot_is_written(tmp_path):
    t = Transcript()
    config = server_config("tp8")
    t.tool("launch_server", {"config": config.model_dump(mode="json")}, running(config, 1))
    result = sweep([97.9, 683.9], levels=[1, 32])
    bare = [
        level.model_copy(update={"ttft": level.ttft.model_copy(update={"p50_ms": None}), "itl_per_token": None})
        for level in result.levels
    ]
    t.tool("benchmark", {"port": 30000, "levels": [1, 32]}, result.model_copy(update={"levels": bare}))
    paths = write_report(tmp_path, build_report(t.events, None, status="completed"))
    assert set(paths) == {"json", "markdown", "throughput", "pareto", "csv", "requests"}
    assert imread(paths["throughput"]).std() > 0.05
    assert not (tmp_path / "latency.png").exists() and not (tmp_path / "acceptance.png").exists()
    assert "No acceptance eval was run." in paths["markdown"].read_text(encoding="utf-8")


def test_benchmarks_csv_holds_every_row_with_its_interval_split(written):
    report, paths = written
    with paths["csv"].open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(report.benchmarks) and rows
    first, row = report.benchmarks[0], rows[0]
    assert row["config"] == first.config and float(row["output_tok_s"]) == pytest.approx(first.output_tok_s)
    assert "output_tok_s_ci95_low" in row and "output_tok_s_ci95" not in row
    assert row["seqs"] == " ".join(map(str, first.seqs))


def test_markdown_has_the_frontier_and_its_plot(written):
    report, paths = written
    text = paths["markdown"].read_text(encoding="utf-8")
    assert "## Throughput per GPU against speed per user" in text and "![pareto](pareto.png)" in text
    assert any(p.on_frontier and p.speculative for p in report.pareto)
    assert any(p.on_frontier and not p.speculative for p in report.pareto)
