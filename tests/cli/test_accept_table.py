"""`specops accept`'s table: each category, then the overall figure of each thinking mode (or the one overall)."""

from __future__ import annotations

from types import SimpleNamespace

from typer.testing import CliRunner

import specops.cli.accept as accept_cli
from specops.cli.main import app


def _stat(category: str, thinking: str | None, value: float) -> SimpleNamespace:
    return SimpleNamespace(
        category=category,
        thinking=thinking,
        prompts=8,
        request_mean=value,
        request_mean_ci95=None,
        token_weighted=value,
        token_weighted_ci95=(value - 0.1, value + 0.1),
    )


def _result(categories, overall, by_thinking) -> SimpleNamespace:
    return SimpleNamespace(
        host="sim",
        port=30000,
        speculative_algorithm="DFLASH",
        block_size=8,
        server_version="0.5",
        categories=categories,
        overall=overall,
        overall_by_thinking=by_thinking,
        warning=None,
        method="m",
    )


def _labels(monkeypatch, result) -> list[str]:
    monkeypatch.setattr(accept_cli, "call_tool", lambda host, tool, args: result)
    out = CliRunner().invoke(app, ["accept", "--host", "local"])
    assert out.exit_code == 0, out.output
    rows = out.output.splitlines()[2:-1]  # between the heading lines and `method:`
    return [row[:22].strip() for row in rows]


def test_thinking_modes_measured_apart_get_one_overall_row_each(monkeypatch):
    result = _result(
        [_stat("math", "on", 3.9), _stat("math", "off", 3.1)],
        _stat("overall", "on", 3.9),
        [_stat("overall", "on", 3.9), _stat("overall", "off", 3.1)],
    )
    assert _labels(monkeypatch, result) == [
        "math, thinking on",
        "math, thinking off",
        "overall, thinking on",
        "overall, thinking off",
    ]


def test_raw_text_has_one_overall_row(monkeypatch):
    result = _result([_stat("math", None, 3.9), _stat("code", None, 3.5)], _stat("overall", None, 3.7), [])
    assert _labels(monkeypatch, result) == ["math", "code", "overall"]
