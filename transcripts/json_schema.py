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
    """The schema of one line (one event) of a version-1 transcript, as written."""
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed file differs from the models")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not SCHEMA_PATH.exists() or SCHEMA_PATH.read_text(encoding="utf-8") != text:
            print(f"{SCHEMA_PATH} is stale: run python -m specops.transcripts.json_schema", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.write_text(text, encoding="utf-8")
    print(SCHEMA_PATH)
    return 0


if __name__ == "__main__":
    sys.exit(main())
