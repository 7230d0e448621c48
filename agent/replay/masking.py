"""What a replay ignores when it compares two runs: times, ids, durations, temp paths, ports.

Two runs of the same code on the same inputs still differ in what the clock
and the operating system chose. Offline (recorded tool results, the recorded
host's description), that is only what sits under a few keys: timestamps,
run ids, durations, usage; every text is the recording's or today's code's own,
so a text that differs is a real divergence. Against a live host (`live=True`)
the host's choices show up inside texts and results too: loopback ports,
times in log paths, process ids and start times; those are masked as well.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Keys whose values are times, ids or measurements of this run, never behaviour.
_ALWAYS = frozenset({"ts", "timestamp", "run_id", "conversation_id", "duration_s", "provider_response_id", "usage"})
# ...and, against a live host, what the host assigns.
_LIVE = _ALWAYS | {"pid", "pgid", "started_at", "waited_s", "elapsed_s", "created_at", "log_path", "hub_url"}

_PORT = re.compile(r"\b(127\.0\.0\.1|localhost|0\.0\.0\.0):\d{2,5}\b")
_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_STAMP = re.compile(r"\b\d{8}T\d{6,12}Z\b")
_RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")

# All of the above in one pass (most strings match none of them).
_VARYING = re.compile(
    "|".join(
        f"(?P<{name}>{pattern.pattern})"
        for name, pattern in (("port", _PORT), ("time", _ISO_TIME), ("stamp", _STAMP), ("run", _RUN_ID))
    )
)
_PORT_HOST = re.compile(r"^(127\.0\.0\.1|localhost|0\.0\.0\.0)")


def _placeholder(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "port":
        host = _PORT_HOST.match(match.group(0))
        return f"{host.group(0) if host else 'host'}:<port>"
    if kind == "run":
        return "<run-id>"
    return "<time>"


_JSON_VALUE = r'(?:"(?:[^"\\]|\\.)*"|\{(?:[^{}"]|"(?:[^"\\]|\\.)*"|\{[^{}]*\})*\}|[^,{}\[\]]+)'


def _keys_pattern(keys: frozenset[str]) -> re.Pattern[str]:
    return re.compile(r'"(' + "|".join(sorted(keys)) + r')":' + _JSON_VALUE)


_ALWAYS_KEYS = _keys_pattern(_ALWAYS)
_LIVE_KEYS = _keys_pattern(_LIVE)


class Masker:
    def __init__(self, *, live: bool = False, run_ids: tuple[str, ...] = ()) -> None:
        self.live = live
        self._keys = _LIVE if live else _ALWAYS
        self._run_ids = tuple(r for r in run_ids if r)

    def text(self, value: str) -> str:
        for run_id in self._run_ids:
            if run_id in value:
                value = value.replace(run_id, "<run-id>")
        return _VARYING.sub(_placeholder, value)

    def canonical(self, value: Any) -> str:
        """`value` (JSON) as one masked, key-sorted JSON string: what two events are compared by.

        Masking the serialised string with a few regular expressions is far cheaper than walking
        every value of a long run's messages in Python.
        """
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        text = self._key_pattern.sub(r'"\1":"<masked>"', text)
        # Offline, every text an event carries is the recording's or today's code's own: only the keys above
        # (times, ids, durations) vary. Live, the host's paths, ports and clock show up inside texts too.
        return self.text(text) if self.live else text

    @property
    def _key_pattern(self) -> re.Pattern[str]:
        return _LIVE_KEYS if self.live else _ALWAYS_KEYS

    def __call__(self, value: Any) -> Any:
        """`value` (JSON) with what varies run to run replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: ("<masked>" if k in self._keys else self(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        return value
