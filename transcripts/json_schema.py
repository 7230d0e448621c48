"""The JSON Schema of a transcript line, generated from the event models, and its committed file.

    python -m specops.transcripts.json_schema          # rewrite the committed file
    python -m specops.transcripts.json_schema --check  # exit 1 if it is stale

The file is for people and tools outside Python; the pydantic models in
events.py are the source of truth, and a test fails when the two differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .events import EVENT_ADAPTER, SCHEMA_VERSION

SCHEMA_PATH = Path(__file__).parent / "schema" / f"transcript-v{SCHEMA_VERSION}.schema.json"


def transcript_json_schema() -> dict[str, Any]:
    """The schema of one line (one event) of a transcript, as this version writes it."""
    body = EVENT_ADAPTER.json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://specops.dev/schemas/transcript-v{SCHEMA_VERSION}.schema.json",
        "title": f"specops transcript event, schema version {SCHEMA_VERSION}",
        "description": (
            "One line of a specops run transcript (JSONL). Events are discriminated by `type`. "
            "Readers must ignore properties they do not know: a writer of the same schema version may add "
            "optional ones. See transcripts/README.md."
        ),
        **body,
    }


def render() -> str:
    return json.dumps(transcript_json_schema(), indent=2, sort_keys=True) + "\n"


def schema_file_main(path: Path, text: str, module: str, argv: list[str] | None = None) -> int:
    """The command line of a committed schema file: rewrite it, or with --check exit 1 when it is stale.

    Shared by every committed JSON Schema of the project (transcripts, reports).
    """
    parser = argparse.ArgumentParser(description=f"Rewrite {path.name} from its models, or check that it is current.")
    parser.add_argument("--check", action="store_true", help="fail if the committed file differs from the models")
    args = parser.parse_args(argv)
    if args.check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run python -m {module}", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    return schema_file_main(SCHEMA_PATH, render(), "specops.transcripts.json_schema", argv)


if __name__ == "__main__":
    sys.exit(main())
