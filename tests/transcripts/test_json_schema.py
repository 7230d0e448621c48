"""The committed JSON Schema file is the one the event models generate, and it describes every event type."""

from __future__ import annotations

import json
import subprocess
import sys

from specops.transcripts import EVENT_TYPES
from specops.transcripts.json_schema import SCHEMA_PATH, render, transcript_json_schema


def test_committed_schema_equals_generated():
    assert SCHEMA_PATH.name == "transcript-v2.schema.json"
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "transcripts/schema/transcript-v2.schema.json is stale: run python -m specops.transcripts.json_schema"
    )


def test_schema_covers_every_event_type_with_its_envelope():
    schema = transcript_json_schema()
    tags = set(schema["discriminator"]["mapping"])
    assert tags == {cls.model_fields["type"].default for cls in EVENT_TYPES}
    for cls in EVENT_TYPES:
        definition = schema["$defs"][cls.__name__]
        assert {"type", "seq", "ts", "schema_version", "run_id"} <= set(definition["required"])
        assert definition["additionalProperties"] is True  # readers tolerate fields added later


def test_check_command_reports_stale_file(tmp_path):
    ok = subprocess.run(
        [sys.executable, "-m", "specops.transcripts.json_schema", "--check"], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(SCHEMA_PATH.read_text())["title"].startswith("specops transcript event")
