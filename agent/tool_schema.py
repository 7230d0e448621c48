"""A tool's parameters as the model is sent them: pydantic's JSON Schema without what only repeats itself.

pydantic gives every property a `title` (its name again, capitalised), every
optional field `anyOf: [X, {"type": "null"}]` with `default: null`, and every
object `additionalProperties: false`. A model needs none of them: the name is
the key, a field left out of `required` may be left out, and an unknown
argument is refused with a message anyway. They go, with bounds that only
refuse absurd input (maxima of 1000 and more, string lengths of 64 and more)
and the argument models' own descriptions (the tool's says it); descriptions, types, bounds, enums and defaults stay, and
the arguments are still validated against the full model (toolset.py).

Knobs a run rarely turns (timeouts, retry back-off, the client's seed) are
left out of the schema and named in one line of the tool's description: a
model that needs one can still pass it, and every request is shorter by
what it would otherwise repeat (ADVANCED, by argument model).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from specops.transcripts.records import json_schema_of

_NULL = {"type": "null"}

ADVANCED: dict[str, tuple[str, ...]] = {
    "CheckDiskArgs": ("include", "exclude", "margin_fraction", "margin_min_bytes"),
    "StartDownloadArgs": ("include", "exclude", "max_attempts", "retry_backoff_s"),
    "FindModelsArgs": ("roots",),
    "DownloadStatusArgs": ("log_lines",),
    "WaitDownloadArgs": ("poll_s", "log_lines"),
    "LaunchArgs": ("ready_timeout_s", "stall_timeout_s", "log_dir", "python", "keep_on_timeout"),
    "RestartArgs": ("ready_timeout_s", "log_dir", "python"),
    "StopArgs": ("pid", "allow_foreign", "port", "grace_s", "release_timeout_s"),
    "FreeSpaceArgs": ("approved_paths",),
    "ServerConfig": (
        "disable_cuda_graph_padding",
        "host",
        "enable_metrics",
        "tool_call_parser",
        "reasoning_parser",
        "served_model_name",
        "speculative_num_steps",
        "speculative_eagle_topk",
    ),
    "AcceptanceArgs": (
        "prompts_per_category",
        "max_new_tokens",
        "ignore_eos",
        "concurrency",
        "prompt_template",
        "break_even_accept_length",
        "flush_cache",
        "request_timeout_s",
    ),
    "BenchmarkArgs": (
        "ignore_eos",
        "warmup_requests",
        "requests_per_level",
        "rounds",
        "end",
        "flush_cache",
        "api",
        "model",
        "client",
        "temperature",
        "seed",
        "request_timeout_s",
        "timeout_s",
        "rates",
        "arrival",
        "ttft_target_ms",
        "tpot_target_ms",
    ),
    "ShellArgs": ("cwd", "timeout_s"),
}


# Bounds only there to refuse absurd input (a 1e6-token prompt, a 64 KiB id): validation still enforces them.
_SANITY_MAXIMUM = 1000
_SANITY_MAX_LENGTH = 64


def parameters_schema(args: type[BaseModel]) -> dict[str, Any]:
    schema: dict[str, Any] = _lean(_without_advanced(json_schema_of(args)))
    # A model's own description repeats the tool's: properties keep theirs.
    schema.pop("description", None)
    for definition in schema.get("$defs", {}).values():
        if "properties" in definition:
            definition.pop("description", None)
    return schema


def advanced_note(args: type[BaseModel]) -> str:
    """The line the tool's description gains for the arguments its schema leaves out ('' when none)."""
    schema = json_schema_of(args)
    names = [*_advanced_of(schema), *(n for d in schema.get("$defs", {}).values() for n in _advanced_of(d))]
    return f"\nMore, rarely needed: {', '.join(names)}." if names else ""


def _advanced_of(model_schema: dict[str, Any]) -> list[str]:
    hidden = ADVANCED.get(str(model_schema.get("title")), ())
    return [name for name in hidden if name in model_schema.get("properties", {})]


def _without_advanced(schema: dict[str, Any]) -> dict[str, Any]:
    def strip(model_schema: dict[str, Any]) -> dict[str, Any]:
        hidden = set(_advanced_of(model_schema))
        if not hidden:
            return model_schema
        properties = {k: v for k, v in model_schema["properties"].items() if k not in hidden}
        return {**model_schema, "properties": properties}

    stripped = strip(schema)
    if "$defs" in stripped:
        stripped = {**stripped, "$defs": {k: strip(v) for k, v in stripped["$defs"].items()}}
    return stripped


def _lean(node: Any) -> Any:
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    lean = {
        key: _lean(value)
        for key, value in node.items()
        if not (key == "title" and isinstance(value, str)) and not (key == "additionalProperties" and value is False)
    }
    if isinstance(lean.get("maximum"), int | float) and lean["maximum"] >= _SANITY_MAXIMUM:
        del lean["maximum"]
    if isinstance(lean.get("maxLength"), int) and lean["maxLength"] >= _SANITY_MAX_LENGTH:
        del lean["maxLength"]
    items = lean.get("items")
    if isinstance(items, dict) and "description" in items and "description" in lean:
        lean["items"] = {k: v for k, v in items.items() if k != "description"}  # the list's own says it
    options = lean.get("anyOf")
    if isinstance(options, list) and _NULL in options and lean.get("default", ...) is None:
        rest = [option for option in options if option != _NULL]
        if len(rest) == 1 and isinstance(rest[0], dict):
            del lean["anyOf"], lean["default"]
            lean = {**rest[0], **lean}  # the field's own description wins over the option's
    return lean
