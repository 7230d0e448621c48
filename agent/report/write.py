"""write_report: report.json, report.md, benchmarks.csv and the plots, into a run's directory."""

from __future__ import annotations

from pathlib import Path

from specops.transcripts.redaction import Redactor

from .csv_export import write_benchmarks_csv
from .markdown import render_markdown
from .plots import has_latency, plot_acceptance, plot_latency, plot_pareto, plot_throughput
from .schema import Report


def write_report(run_dir: Path, report: Report, *, redactor: Redactor | None = None) -> dict[str, Path]:
    """Write the report's files; returns their paths by kind (json, markdown, csv, throughput, latency, acceptance,
    pareto).

    latency.png, acceptance.png and pareto.png are written only when there is data for them. With `redactor` (a run's, as its
    transcript has) every string of the report is redacted before any file is written.
    """
    if redactor is not None:
        report = Report.model_validate(redactor.redact(report.model_dump(mode="json")))
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
    json_path = run_dir / "report.json"
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    markdown_path = run_dir / "report.md"
    markdown_path.write_text(
        render_markdown(report, latency_plot="latency" in paths, pareto_plot="pareto" in paths), encoding="utf-8"
    )
    return {"json": json_path, "markdown": markdown_path, **paths}
