"""write_report: report.json, report.md, benchmarks.csv, requests.jsonl and the plots, into a run's directory."""

from __future__ import annotations

from pathlib import Path

from specops.transcripts.redaction import Redactor

from .csv_export import write_benchmarks_csv
from .markdown import render_markdown
from .plots import has_latency, plot_acceptance, plot_latency, plot_pareto, plot_throughput
from .requests import REQUESTS_FILE, write_requests_jsonl
from .schema import Report


def write_report(run_dir: Path, report: Report, *, redactor: Redactor | None = None) -> dict[str, Path]:
    """Write the report's files; returns their paths by kind (json, markdown, csv, requests, throughput, latency,
    acceptance, pareto).

    latency.png, acceptance.png and pareto.png are written only when there is data for them. With `redactor` (a run's, as its
    transcript has) every string of the report is redacted before any file is written.
    """
    if redactor is not None:
        # report.json leaves the requests out (Report.requests): they are kept, their one string (the configuration's
        # name; the rest are numbers and a status word) redacted as the report's own names are.
        names = {name: redactor.redact_text(name) for name in {r.config for r in report.requests}}
        requests = [
            r if names[r.config] == r.config else r.model_copy(update={"config": names[r.config]})
            for r in report.requests
        ]
        report = Report.model_validate(redactor.redact(report.model_dump(mode="json")))
        report = report.model_copy(update={"requests": requests})
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    paths = {"throughput": plot_throughput(report.benchmarks, run_dir / "throughput.png")}
    if has_latency(report.benchmarks):
        paths["latency"] = plot_latency(report.benchmarks, run_dir / "latency.png")
    if report.acceptance is not None:
        paths["acceptance"] = plot_acceptance(report.acceptance, run_dir / "acceptance.png")
    if report.pareto:
        paths["pareto"] = plot_pareto(report.pareto, run_dir / "pareto.png")
    paths["csv"] = write_benchmarks_csv(report.benchmarks, run_dir / "benchmarks.csv")
    paths["requests"] = write_requests_jsonl(report.requests, run_dir / REQUESTS_FILE)
    json_path = run_dir / "report.json"
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    markdown_path = run_dir / "report.md"
    markdown_path.write_text(
        render_markdown(report, latency_plot="latency" in paths, pareto_plot="pareto" in paths), encoding="utf-8"
    )
    return {"json": json_path, "markdown": markdown_path, **paths}
