"""The counts the README and docs/ state (eval scenarios, graders, tools) are the code's.

A count is stated as "N eval scenarios", "N graders" (or "N deterministic graders"),
"N tools" (what the agent offers the model in every run: the registry's host tools plus
the ones the loop answers itself) or "N host tools" (the registry's), N in digits or in
words. Counts of a part ("five scenarios' winners") name no "eval" and are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen \
seventeen eighteen nineteen".split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_WORDS = {w: n for n, w in enumerate(_UNITS)} | _TENS
_NUMBER = r"(\d+|(?:" + "|".join(_TENS) + r")(?:[- ](?:" + "|".join(_UNITS[1:10]) + r"))?|" + "|".join(_UNITS) + ")"
STATEMENTS = {
    "scenarios": re.compile(rf"\b{_NUMBER} eval scenarios\b", re.IGNORECASE),
    "graders": re.compile(rf"\b{_NUMBER} (?:deterministic )?graders\b", re.IGNORECASE),
    "tools": re.compile(rf"\b{_NUMBER} tools\b", re.IGNORECASE),
    "host tools": re.compile(rf"\b{_NUMBER} host tools\b", re.IGNORECASE),
}


def number(text: str) -> int:
    text = text.lower()
    if text.isdigit():
        return int(text)
    tens, _, unit = text.replace(" ", "-").partition("-")
    return _WORDS[tens] + (_WORDS[unit] if unit else 0)


def statements(text: str) -> list[tuple[str, int, str]]:
    """(what, count, the words) for every count the text states; line breaks and emphasis do not hide one."""
    flat = re.sub(r"\s+", " ", text.replace("*", "").replace("`", ""))
    return [(what, number(m.group(1)), m.group(0)) for what, rx in STATEMENTS.items() for m in rx.finditer(flat)]


def actual_counts() -> dict[str, int]:
    from specops.agent.toolset import registered_tools, tool_schemas
    from specops.evals.graders import GRADERS

    host_tools = registered_tools()  # imports every tool module, so every tool is registered
    return {
        "scenarios": len(list((ROOT / "evals" / "scenarios").glob("*.yaml"))),
        "graders": len(GRADERS),
        "tools": len(tool_schemas(host_tools)),  # what the model is offered in every run
        "host tools": len(host_tools),
    }


def test_the_statement_finder_reads_words_digits_and_wrapped_lines():
    assert statements("The 37 eval\nscenarios and Sixteen deterministic graders") == [
        ("scenarios", 37, "37 eval scenarios"),
        ("graders", 16, "Sixteen deterministic graders"),
    ]
    assert statements("offered **seventeen** tools: the fifteen host tools") == [
        ("tools", 17, "seventeen tools"),
        ("host tools", 15, "fifteen host tools"),
    ]
    assert statements("thirty-seven eval scenarios; five scenarios' winners; three tool calls") == [
        ("scenarios", 37, "thirty-seven eval scenarios")
    ]


def test_the_docs_state_each_count():
    stated = {what for page in PAGES for what, _, _ in statements(page.read_text(encoding="utf-8"))}
    assert stated >= set(STATEMENTS), f"no page states a count of {sorted(set(STATEMENTS) - stated)}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_count_a_page_states_is_the_codes(page):
    actual = actual_counts()
    wrong = [
        f"{words!r} (the code has {actual[what]} {what})"
        for what, count, words in statements(page.read_text(encoding="utf-8"))
        if count != actual[what]
    ]
    assert not wrong, f"{page.relative_to(ROOT)} states: " + "; ".join(wrong)
