"""The acceptance length a drafter's model card states per dataset, read from its tables either way round."""

from __future__ import annotations

from specops.tools.drafters.card_acceptance import card_acceptance

DATASETS_AS_COLUMNS = """# A drafter

| Method | GSM8K | MATH-500 | HumanEval | MBPP | MT-Bench |
|:---|---:|---:|---:|---:|---:|
| Speedup | 5.2x | 6.1x | 5.0x | 4.6x | 3.1x |
| Acceptance length (τ) | 6.55 | 7.87 | 6.55 | 6.00 | 4.25 |
"""

DATASETS_AS_ROWS = """Some text.

| Dataset | Speedup | tau |
|---|---|---|
| gsm8k | 3.1x | 3.89 |
| math500 | 3.3x | **4.02** |
| Alpaca | 2.0x | 2.68 |

| Dataset | Speedup | tau |
|---|---|---|
| gsm8k | 9x | 9.99 |
"""


def test_datasets_as_columns_with_an_acceptance_row():
    stated = card_acceptance(DATASETS_AS_COLUMNS)
    assert stated is not None and stated.label == "Acceptance length (τ)"
    assert stated.figures == {"gsm8k": 6.55, "math500": 7.87, "humaneval": 6.55, "mbpp": 6.0, "mt-bench": 4.25}


def test_datasets_as_rows_with_an_acceptance_column_and_the_first_table_wins():
    stated = card_acceptance(DATASETS_AS_ROWS)
    assert stated is not None and stated.label == "tau"
    assert stated.figures == {"gsm8k": 3.89, "math500": 4.02, "alpaca": 2.68}


def test_a_card_without_such_a_table_states_nothing():
    assert card_acceptance("| Dataset | Speedup |\n|---|---|\n| GSM8K | 3x |\n| MBPP | 2x |\n") is None
    assert card_acceptance("| Model | MMLU | GSM8k |\n|---|---|---|\n| base | 73.0 | 90.9 |\n") is None
    assert card_acceptance("no tables here") is None
