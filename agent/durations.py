"""Durations as people write and read them: "--budget 1h30m" in, "2 h 41 min" out."""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(hours?|h|minutes?|mins?|m|seconds?|secs?|s)?", re.IGNORECASE)
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text: str) -> float:
    """Seconds in `text`: "2h", "90min", "1h30m", "45m 30s", "5400" (bare seconds). ValueError when it is not one."""
    compact = text.strip()
    parts = list(_DURATION_PART.finditer(compact))
    if not parts or "".join(m.group(0) for m in parts).replace(" ", "") != compact.replace(" ", ""):
        raise ValueError(f"{text!r} is not a duration: write it as 2h, 90min, 1h30m or seconds")
    if len(parts) > 1 and any(m.group(2) is None for m in parts):
        raise ValueError(f"{text!r} is not a duration: give every part a unit (1h30m), or seconds alone")
    seconds = sum(float(m.group(1)) * _UNIT_S[(m.group(2) or "s")[0].lower()] for m in parts)
    if seconds <= 0:
        raise ValueError(f"{text!r} is no time at all: give a duration above zero")
    return seconds


def duration_words(seconds: float) -> str:
    """2 h 41 min, 12 min 5 s, 30 min, 45 s, 0.4 s (a zero remainder is not said)."""
    whole = round(seconds)
    if whole >= 3600:
        hours, rest = divmod(round(seconds / 60), 60)
        return f"{hours} h {rest} min" if rest else f"{hours} h"
    if whole >= 60:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    return f"{whole} s" if seconds >= 10 else f"{seconds:.1f} s"
