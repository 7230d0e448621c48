"""What a run's transcript says its tools were asked and answered, for tests that read a finished run."""

from __future__ import annotations

import json


def tool_calls(run_dir) -> list[tuple[str, dict, dict]]:
    """(tool, args, result event) of every call in the transcript, in order."""
    events = [json.loads(line) for line in (run_dir / "transcript.jsonl").read_text().splitlines()]
    calls = {e["call_id"]: e for e in events if e["type"] == "tool_call"}
    return [(e["tool"], calls[e["call_id"]]["args"], e) for e in events if e["type"] == "tool_result"]
