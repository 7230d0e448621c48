"""The acceptance length a drafter's model card states per dataset, read from its markdown tables.

Drafter cards (DFlash, EAGLE-3, SpecForge) state acceptance length per standard
dataset in a table, either way round:

    | Dataset | Speedup | Acceptance length |        | Method | GSM8K | MATH-500 | HumanEval |
    | GSM8K   | 5.2x    | 6.55              |   or   | tau    | 6.55  | 7.87     | 6.55      |

A table counts when it names at least two of the standard datasets (in its header
row or first column) and has a row or column labelled acceptance, tau or τ; the
first such table and line are read. The report puts these figures beside the
measured ones; the card's weighting and settings are its own (the label says what
the card called the figure).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

# Dataset names as cards spell them (lower case, punctuation and spaces dropped) -> the short names specops uses.
_DATASETS = {
    "gsm8k": "gsm8k",
    "math500": "math500",
    "math": "math500",
    "humaneval": "humaneval",
    "mbpp": "mbpp",
    "mtbench": "mt-bench",
    "alpaca": "alpaca",
}
_ACCEPTANCE_LABEL = re.compile(r"accept|\btau\b|τ", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class CardAcceptance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    figures: dict[str, float] = Field(description="Acceptance length per dataset (gsm8k, math500, ...) as stated")
    label: str = Field(description="What the card calls the figures (the row or column they came from)")


def _dataset(cell: str) -> str | None:
    return _DATASETS.get(re.sub(r"[^a-z0-9]", "", cell.lower()))


def _number(cell: str) -> float | None:
    found = _NUMBER.search(cell.replace(",", ""))
    return float(found.group()) if found else None


def _tables(card: str) -> list[list[list[str]]]:
    """Each markdown table of the card as rows of cells, the separator row (|---|---|) left out."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*card.splitlines(), ""]:
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _datasets_as_columns(table: list[list[str]]) -> CardAcceptance | None:
    header = table[0]
    columns = {i: name for i, cell in enumerate(header) if (name := _dataset(cell))}
    if len(columns) < 2:
        return None
    for row in table[1:]:
        if row and _ACCEPTANCE_LABEL.search(row[0]):
            figures = {name: n for i, name in columns.items() if i < len(row) and (n := _number(row[i])) is not None}
            if figures:
                return CardAcceptance(figures=figures, label=row[0])
    return None


def _datasets_as_rows(table: list[list[str]]) -> CardAcceptance | None:
    rows = {r[0]: r for r in table[1:] if r and _dataset(r[0])}
    if len(rows) < 2:
        return None
    column = next((i for i, cell in enumerate(table[0]) if i > 0 and _ACCEPTANCE_LABEL.search(cell)), None)
    if column is None:
        return None
    figures = {
        name: n
        for cell, row in rows.items()
        if (name := _dataset(cell)) and column < len(row) and (n := _number(row[column])) is not None
    }
    return CardAcceptance(figures=figures, label=table[0][column]) if figures else None


def card_acceptance(card: str) -> CardAcceptance | None:
    """The first per-dataset acceptance table of a model card; None when it states none."""
    for table in _tables(card):
        found = _datasets_as_columns(table) or _datasets_as_rows(table)
        if found is not None:
            return found
    return None
