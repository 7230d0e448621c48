"""Whole tool results for scripted histories: one real result per tool, with a test's own values laid over it.

The playbook reads every result back as its tool's typed result, so a scripted
answer must be a whole, valid one. `sample(tool, **fields)` is the recorded
result of `tool` with `fields` laid over it (dicts merged, everything else
replaced), checked against the tool's result type.

The samples (tests/data/tool-results.json) are the first successful result of
each tool in a run of the playbook on the seed host, with the sim root taken
out of the paths. Record them again after a result type changes:

    specops run "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long" --host sim:seed-ct200 \\
        --sim-fault full_disk --sim-fault crash_under_load:at_running=56 \\
        --allow-delete cache:Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 \\
        --model "playbook:levels=1,64;ar_layouts=1;spec_layouts=1" --runs-dir /tmp/samples
    python -m tests.agent.tool_results /tmp/samples/<run-id>
"""

from __future__ import annotations

import copy
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

from specops.agent.toolset import result_type
from specops.transcripts import pair_tool_calls, read_transcript

SAMPLES = Path(__file__).parent.parent / "data" / "tool-results.json"


@cache
def _samples() -> dict[str, dict[str, Any]]:
    return json.loads(SAMPLES.read_text(encoding="utf-8"))


def _laid_over(base: Any, fields: Any) -> Any:
    if isinstance(base, dict) and isinstance(fields, dict):
        return {**base, **{k: _laid_over(base.get(k), v) for k, v in fields.items()}}
    return copy.deepcopy(fields)


def sample(tool: str, **fields: Any) -> dict[str, Any]:
    """The recorded result of `tool` with `fields` laid over it, as JSON data that validates as the tool's result."""
    data = _laid_over(copy.deepcopy(_samples()[tool]), fields)
    model = result_type(tool)
    assert model is not None, f"no tool {tool}"
    model.model_validate(data)
    return data


def record(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The first successful result of each tool in the run's transcript, the sim root taken out of its paths."""
    events = read_transcript(run_dir / "transcript.jsonl").events
    found: dict[str, dict[str, Any]] = {}
    for pair in pair_tool_calls(events):
        if pair.ok and pair.result is not None and pair.tool not in found:
            found[pair.tool] = pair.result.result
    text = json.dumps(found, indent=1, sort_keys=True)
    text = re.sub(r"sim:/tmp/specops-sim-[\w-]+", "sim:seed-ct200", text)
    text = re.sub(r"/tmp/specops-sim-[\w-]+(?=/)", "", text)
    return json.loads(re.sub(r"/tmp/specops-sim-[\w-]+", "/", text))


if __name__ == "__main__":
    SAMPLES.write_text(json.dumps(record(Path(sys.argv[1])), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SAMPLES}")
