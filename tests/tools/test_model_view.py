"""What a model is shown of a tool's result: compact (no nulls, rounded), capped, saying when it cut."""

from __future__ import annotations

import json

from pydantic import BaseModel

from specops.tools.model_view import CUT_NOTE, RESULT_CHAR_LIMIT, capped, compact, for_model, round_figure, size


def test_compact_drops_nulls_and_empties_and_rounds_fractions_not_integers():
    shown = compact({"a": None, "b": [], "c": {}, "d": 3.861818181, "e": 103642.7, "f": [1.23456, None], "g": 0})
    assert shown == {"d": 3.862, "e": 103643.0, "f": [1.235, None], "g": 0}
    assert round_figure(0.000123456) == 0.0001235 and round_figure(float("inf")) == float("inf")


def test_a_result_that_fits_is_left_whole():
    value = {"levels": [[1, 97.9], [64, 1204.5]], "note": "x" * 100}
    assert capped(value) is value


def test_a_long_log_keeps_its_end_and_the_view_says_it_was_cut():
    log = "\n".join(f"line {i}" for i in range(3000)) + "\nRuntimeError: NCCL watchdog timeout"
    shown = capped({"cause": "crash", "log_tail": log, "lines": list(range(500))})
    assert size(shown) <= RESULT_CHAR_LIMIT and shown["cut"] == CUT_NOTE
    assert shown["cause"] == "crash" and shown["log_tail"].endswith("NCCL watchdog timeout")
    assert shown["lines"][-1].endswith("more") and shown["lines"][0] == 0


def test_a_huge_flat_text_is_cut_to_the_limit_with_a_note():
    shown = capped({"text": "y" * 50_000}, limit=2000)
    assert size(shown) <= 2000 and shown["cut"] == CUT_NOTE


class _Result(BaseModel):
    port: int
    figures: list[float]
    detail: str | None = None


def test_for_model_applies_the_tools_view_to_the_typed_result():
    data = _Result(port=30000, figures=[1.0 / 3, 2.0]).model_dump(mode="json")
    shown = for_model(data, _Result, lambda r: {"port": r.port, "best": max(r.figures), "detail": r.detail})
    assert shown == {"port": 30000, "best": 2.0}
    assert for_model(data, _Result, None) == {"port": 30000, "figures": [0.3333, 2.0]}
    assert json.dumps(shown)  # JSON data, ready for the wire
