"""Version strings in what CLIs print: `hf version`, `hf --version`, `Python 3.12.3`.

Output may carry ANSI colours (hf's `✓ hf version` line) and words around the
number; the first dotted number is the version.
"""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_VERSION = re.compile(r"(?<![\w.])(\d+\.\d+(?:\.\d+)?(?:[.+-]?[A-Za-z0-9]+)*)")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def first_version(text: str) -> str | None:
    match = _VERSION.search(strip_ansi(text))
    return match.group(1) if match else None


def version_tuple(version: str) -> tuple[int, ...]:
    """`0.5.10rc1` -> (0, 5, 10): the numeric release, for comparisons."""
    parts: list[int] = []
    for piece in version.split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group()))
        if digits.group() != piece:
            break
    return tuple(parts)
