"""Which kind of prompt a request carries (math, code or chat): acceptance length depends on it.

A simple keyword classifier, documented so that evals can reason about it:
- code: code fences, or programming words ("def ", "function", "python", "implement", ...);
- math: arithmetic on numbers, or math words ("solve", "how many", "equation", "\\frac", ...);
- chat: everything else.
Each marker found scores one point; the higher score wins, code wins a tie with math,
and no points at all is chat.

Thinking: a prompt rendered with a reasoning model's chat template and thinking
switched off ends in an empty think block (`<think></think>`); the model answers at
once and the drafter sees different text (profiles give its acceptance separately).
"""

from __future__ import annotations

import re

from ..profiles.schema import PromptKind

_CODE_MARKERS = [
    r"```",
    r"\bdef\s+\w+\s*\(",
    r"\bfunction\b",
    r"\bclass\s+\w+",
    r"\bimport\s+\w+",
    r"\breturn\b",
    r"\bpython\b",
    r"\bjavascript\b",
    r"\brust\b",
    r"\bjava\b",
    r"\bc\+\+",
    r"\bsql\b",
    r"\bcode\b",
    r"\bprogram\b",
    r"\bimplement\w*\b",
    r"\bscript\b",
    r"#include",
    r"\bcompile\w*\b",
    r"\bbug\b",
    r"\balgorithm\b",
    r"\barray\b",
    r"\blist of integers\b",
    r"\bstring\b",
]
_MATH_MARKERS = [
    r"\d+\s*[-+*/^×÷=]\s*\d+",
    r"\bsolve\b",
    r"\bcalculate\b",
    r"\bcompute\b",
    r"\bhow (many|much)\b",
    r"\bequation\b",
    r"\binteger\w*\b",
    r"\bprove\b",
    r"\bprobability\b",
    r"\bsum of\b",
    r"\bproduct of\b",
    r"\\frac",
    r"\\sqrt",
    r"\$[^$]+\$",
    r"\bremainder\b",
    r"\bpercent\w*\b",
    r"\bfind the value\b",
    r"\bgeometry\b",
    r"\btriangle\b",
    r"\bdigits?\b",
    r"\bmath\w*\b",
]
_CODE = [re.compile(p, re.IGNORECASE) for p in _CODE_MARKERS]
_MATH = [re.compile(p, re.IGNORECASE) for p in _MATH_MARKERS]


def classify_prompt(text: str) -> PromptKind:
    code = sum(1 for p in _CODE if p.search(text))
    math = sum(1 for p in _MATH if p.search(text))
    if code == 0 and math == 0:
        return "chat"
    return "code" if code >= math else "math"


_THINKING_OFF = re.compile(r"<think>\s*</think>\s*$")


def thinking_switched_off(text: str) -> bool:
    return bool(_THINKING_OFF.search(text))
