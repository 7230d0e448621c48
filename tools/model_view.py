"""What a model is shown of a tool's result: what a planner needs, compact, never over a size cap.

Every tool returns its full typed result; the transcript and the report keep
it whole. The model is shown a view of it: the tool's own `view` when it
registers one (a benchmark as a per-level table, a server as its id and a
few figures), else the result itself; either way compacted (no nulls or
empty lists, floats to 4 significant digits) and capped at
RESULT_CHAR_LIMIT characters of JSON. A capped view says so in `cut`,
and long log text keeps its end, where the error is. An error is shown with
its log tail's end and without the configuration the model itself sent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

RESULT_CHAR_LIMIT = 4000
CUT_NOTE = "this view was shortened to fit; the full result is in the run's transcript"
# Shortening steps, gentlest first: (longest string kept, most list items kept).
_STEPS = ((1200, 24), (500, 12), (200, 6), (80, 3))
_TAIL_KEYS = ("tail", "log", "stderr", "output", "stdout")

View = Callable[[Any], Any]  # the typed result -> JSON data for the model


def round_figure(value: float, digits: int = 4) -> float:
    """`value` to `digits` significant digits, never cutting its integer part: 3.8618 -> 3.862, 1234.56 -> 1235.0."""
    if value == 0 or not math.isfinite(value):
        return value
    magnitude = int(math.floor(math.log10(abs(value))))
    return round(value, max(digits - 1 - magnitude, 0))


def compact(value: Any) -> Any:
    """JSON data without nulls, empty lists and dicts; floats rounded (round_figure), whole ones as integers."""
    if isinstance(value, dict):
        kept = {k: compact(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != [] and v != {}}
    if isinstance(value, list | tuple):
        return [compact(v) for v in value]
    if isinstance(value, float):
        rounded = round_figure(value)
        return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded  # 1355.0 -> 1355
    return value


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


def capped(value: Any, limit: int = RESULT_CHAR_LIMIT) -> Any:
    """`value` as it is when its JSON fits in `limit` characters, else shortened step by step, saying so."""
    if size(value) <= limit:
        return value
    for longest, items in _STEPS:
        shorter = _shorten(value, longest, items, key="")
        if isinstance(shorter, dict):
            shorter = {"cut": CUT_NOTE, **shorter}
        if size(shorter) <= limit:
            return shorter
    text = json.dumps(value, separators=(",", ":"), default=str)
    return {"cut": CUT_NOTE, "head": text[: limit - len(CUT_NOTE) - 40]}


def _shorten(value: Any, longest: int, items: int, key: str) -> Any:
    if isinstance(value, str):
        return _shorten_text(value, longest, keep_end=any(word in key for word in _TAIL_KEYS))
    if isinstance(value, dict):
        return {k: _shorten(v, longest, items, k) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_shorten(v, longest, items, key) for v in value[:items]]
        if len(value) > items:
            kept.append(f"... {len(value) - items} more")
        return kept
    return value


def _shorten_text(text: str, longest: int, *, keep_end: bool) -> str:
    if len(text) <= longest:
        return text
    cut = len(text) - longest
    return f"[{cut} chars cut] " + text[-longest:] if keep_end else text[:longest] + f" [{cut} chars cut]"


# An error's details the model needs no copy of: the configuration it sent itself.
_ECHOED_DETAILS = ("config",)
ERROR_TAIL_CHARS = 600  # the end of a log, where the error is; the whole tail stays in the transcript


def error_for_model(error: dict[str, Any]) -> Any:
    """What the model is shown of a tool's error: what happened, the remedy, and details without echoes."""
    details = {k: v for k, v in (error.get("details") or {}).items() if k not in _ECHOED_DETAILS}
    if details.get("lines"):  # the log's lines that name the cause were found: the tail adds nothing but length
        details = {k: v for k, v in details.items() if not any(word in k for word in _TAIL_KEYS)}
    for key, value in details.items():
        if isinstance(value, str) and any(word in key for word in _TAIL_KEYS):
            details[key] = _shorten_text(value, ERROR_TAIL_CHARS, keep_end=True)
    return capped(compact({**error, "details": details}))


def for_model(result: dict[str, Any], result_type: type[BaseModel], view: View | None) -> Any:
    """What the model is shown of a tool's full result (its JSON data): the tool's view of it, compacted and capped."""
    shown = view(result_type.model_validate(result)) if view is not None else result
    return capped(compact(shown))
