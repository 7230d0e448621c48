"""The JSON Schema of report.json, generated from the Report model, and its committed file.

    python -m specops.agent.report.json_schema          # rewrite the committed file
    python -m specops.agent.report.json_schema --check  # exit 1 if it is stale

The file is for scripts outside Python; schema.py is the source of truth, and
a test fails when the two differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from specops.transcripts.json_schema import schema_file_main

from .schema import REPORT_SCHEMA_VERSION, Report

SCHEMA_PATH = Path(__file__).parent / f"report-v{REPORT_SCHEMA_VERSION}.schema.json"


def report_json_schema() -> dict[str, Any]:
    body = Report.model_json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://specops.dev/schemas/report-v{REPORT_SCHEMA_VERSION}.schema.json",
        "title": f"specops run report, schema version {REPORT_SCHEMA_VERSION}",
        "description": (
            "report.json of a specops run. Numbers come from the tools' recorded results; the policy's words are in "
            "*_text fields and checked in `flags`. Within version 1 fields are only added, as optional ones. "
            "See agent/report/schema.py."
        ),
        **body,
    }


def render() -> str:
    return json.dumps(report_json_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    return schema_file_main(SCHEMA_PATH, render(), "specops.agent.report.json_schema", argv)


if __name__ == "__main__":
    sys.exit(main())
