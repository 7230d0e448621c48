"""The run's report: built from the recorded tool results, written as report.json, report.md and plots.

    report = build_report(events, final, status="completed")
    paths = write_report(run_dir, report)   # {"json": ..., "markdown": ..., "throughput": ..., ...}

- schema.py: the Report model (report-v1.schema.json is generated from it: json_schema.py);
- evidence.py: tool calls and results paired and parsed with the tools' own models;
- naming.py / servers.py: configuration names, and which server answered a measurement;
- rows.py: the throughput/latency table; comparison.py: per-level comparison and crossover;
- drafters.py: which drafter is which, and which drafter each configuration serves; head_to_head.py: drafter
  against drafter per level;
- recommendation.py: which configuration for which load; failures.py: what failed and what recovered it;
- timing.py: time per todo item and per tool; sections.py: host, drafter, configs, acceptance, left running;
- claims.py: the policy's claims checked; critique.py: the seed's critique answered;
- markdown.py, plots.py, write.py: the files.
"""

from .build import build_report
from .schema import REPORT_SCHEMA_VERSION, Report
from .write import write_report

__all__ = ["REPORT_SCHEMA_VERSION", "Report", "build_report", "write_report"]
