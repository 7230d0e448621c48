"""What a replay ignores when it compares two runs: times, ids, durations, temp paths, ports.

Two runs of the same code on the same inputs still differ in what the clock
and the operating system chose: timestamps, run ids, durations, the temporary
directory a simulated world got (/tmp/specops-sim-seed-ct200-ab12cd34), the
loopback ports its Hub and servers listen on. The Masker replaces those with
placeholders before events are compared. With `live=True` (real tools on a
fresh host) process ids and start times are masked too: a live host gives new
ones every time.
"""

from __future__ import annotations

import re
from typing import Any

# Keys whose values are times, ids or measurements of this run, never behaviour.
_ALWAYS = frozenset({"ts", "timestamp", "run_id", "conversation_id", "duration_s", "provider_response_id", "usage"})
# ...and, against a live host, what the host assigns.
_LIVE = _ALWAYS | {"pid", "pgid", "started_at", "waited_s", "elapsed_s", "created_at", "log_path", "hub_url"}

_SIM_ROOT = re.compile(r"(?:/[^/\s\"']+)*?/specops-sim-[\w.-]+")
_PORT = re.compile(r"\b(127\.0\.0\.1|localhost|0\.0\.0\.0):\d{2,5}\b")
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_STAMP = re.compile(r"\b\d{8}T\d{6,12}Z\b")
_RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")

SIM_ROOT = "<sim-root>"


class Masker:
    def __init__(self, *, live: bool = False, run_ids: tuple[str, ...] = ()) -> None:
        self.live = live
        self._keys = _LIVE if live else _ALWAYS
        self._run_ids = tuple(r for r in run_ids if r)

    def text(self, value: str) -> str:
        if "specops-sim-" in value:
            value = _SIM_ROOT.sub(SIM_ROOT, value)
        for run_id in self._run_ids:
            value = value.replace(run_id, "<run-id>")
        value = _RUN_ID.sub("<run-id>", value)
        if ":" in value:
            value = _PORT.sub(r"\1:<port>", value)
            value = _ISO_TIME.sub("<time>", value)
        return _STAMP.sub("<time>", value)

    def __call__(self, value: Any) -> Any:
        """`value` (JSON) with what varies run to run replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: ("<masked>" if k in self._keys else self(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        return value


def translate_sim_root(value: Any, old: str, new: str) -> Any:
    """`value` (JSON) with the recorded world's directory replaced by the live one's (recorded actions on a new world)."""
    if not old or not new or old == new:
        return value
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: translate_sim_root(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [translate_sim_root(v, old, new) for v in value]
    return value
