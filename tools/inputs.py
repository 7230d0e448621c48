"""Argument types every tool shares, checked before anything runs on a host.

Tools pass arguments to commands as separate argv words, never through a
shell; these types refuse, up front and with a clear message, what no real repo
id, revision or path contains (shell metacharacters, spaces, control
characters, `..` tricks), so that bad input changes nothing.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationError

# Hugging Face repo ids: namespace/name, letters, digits, '-', '_', '.'; no '--' or '..' (the Hub refuses them).
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(rf"{_REPO_PART}/{_REPO_PART}")
# Branches, tags and commit hashes: git ref characters without shell meaning.
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")
# Characters a path may hold: what model paths really use; nothing a shell would read.
_PATH = re.compile(r"[A-Za-z0-9._/~+@%=:,-]+")


# Characters a shell (or a terminal) gives a meaning: glued to a repo id or a host they are never part of it.
SHELL_METACHARACTERS = frozenset(";&|$`<>(){}[]*?!\\'\"#~")
_CHAR_NAMES = {
    "\n": "a newline",
    "\r": "a carriage return",
    "\t": "a tab",
    "\x00": "a NUL byte",
    "\x1b": "an escape character (ESC)",
    "\x7f": "a DEL character",
    " ": "a space",
    "'": '"\'"',
}


def describe_char(ch: str) -> str:
    """One character as a message names it: `'>'`, `"'"`, `a newline`, `a control character (U+0007)`."""
    if ch in _CHAR_NAMES:
        return _CHAR_NAMES[ch]
    category = unicodedata.category(ch)
    code = f"U+{ord(ch):04X}"
    name = unicodedata.name(ch, "")
    label = f"{code} {name}" if name else code
    if category == "Cc":
        return f"a control character ({label})"
    if category in ("Zl", "Zp"):
        return f"a line separator ({label})"
    if category.startswith("Z"):
        return f"a space character ({label})"
    if category.startswith("C"):
        return f"an invisible character ({label})"
    if category.startswith("M"):
        return f"a combining mark ({label})"
    return f"'{ch}'" if ch.isascii() else f"'{ch}' ({label})"


def is_unprintable(ch: str) -> bool:
    """Control, formatting and line-separator characters: nothing a one-line argument holds (a tab is one)."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def first_unprintable(text: str) -> int | None:
    """The index of the first control, formatting or line-separator character of `text`; None when it has none."""
    return next((i for i, ch in enumerate(text) if is_unprintable(ch)), None)


def repo_id_problem(value: str) -> tuple[str, str | None] | None:
    """Why `value` is not a Hugging Face repo id, and the offending character where one is to blame; None if it is."""
    if _REPO_ID.fullmatch(value) and "--" not in value and ".." not in value:
        return None
    allowed = "a repo id is ORG/NAME: letters, digits, '-', '_', '.' and one '/'"
    bad = next((ch for ch in value if not (ch.isascii() and (ch.isalnum() or ch in "._-/"))), None)
    if bad is not None:
        return f"{value!r} has {describe_char(bad)}: {allowed}", bad
    if "/" not in value:
        return f"{value!r} has no '/': {allowed}", None
    if value.count("/") > 1:
        return f"{value!r} has more than one '/': {allowed}", "/"
    for part in value.split("/"):
        if not part:
            return f"{value!r} has an empty {'namespace' if value.startswith('/') else 'name'}: {allowed}", None
        if len(part) > 96:
            return f"{value!r}: a namespace or name is at most 96 characters", None
        if not part[0].isalnum():
            return (
                f"{value!r}: {part!r} starts with {describe_char(part[0])}; {allowed}, each starting and ending with a letter or digit",
                part[0],
            )
        if not part[-1].isalnum():
            return (
                f"{value!r}: {part!r} ends with {describe_char(part[-1])}; {allowed}, each starting and ending with a letter or digit",
                part[-1],
            )
    twice = "-" if "--" in value else "."
    return f"{value!r} has {describe_char(twice)} twice in a row, which the Hub refuses in a repo id", twice


def check_repo_id(value: str) -> str:
    problem = repo_id_problem(value)
    if problem is not None:
        raise ValueError(f"{problem[0]} (e.g. SubSir/Kimi-K2.6-DFlash-tmp-long)")
    return value


def check_revision(value: str) -> str:
    if not _REVISION.fullmatch(value) or ".." in value:
        raise ValueError(f"{value!r} is not a branch, tag or commit hash")
    return value


def check_host_path(value: str) -> str:
    """A path on the host, absolute or relative to its home; normalised."""
    if not value or not _PATH.fullmatch(value):
        bad = sorted({ch for ch in value if not _PATH.fullmatch(ch)})
        raise ValueError(
            f"path {value!r} holds characters a path on the host may not have here: {''.join(bad)!r} "
            "(allowed: letters, digits and . _ / ~ + @ % = : , -)"
        )
    if value.startswith("~") and not (value == "~" or value.startswith("~/")):
        raise ValueError(f"path {value!r}: only ~ and ~/... are understood, not ~user")
    parts = value.split("/")
    if ".." in parts:
        raise ValueError(f"path {value!r} climbs with '..': give the path it means")
    return posixpath.normpath(value) if value not in ("~",) else value


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) made one space."""
    return " ".join(text.split())


# pydantic's wording where it names its own types or says less than it could.
_PLAIN = {
    "missing": "is required",
    "extra_forbidden": "is not a known setting",
    "model_type": "should be a mapping (key: value)",
    "model_attributes_type": "should be a mapping (key: value)",
    "dict_type": "should be a mapping (key: value)",
    "string_pattern_mismatch": "holds characters it may not have",
}


def validation_message(error: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """A pydantic error as one line in the user's words: each field by the name the user gave it (a flag, a key).

    `names` maps field names to what the user typed (`{"levels": "--levels"}`); a field not in it keeps its own
    name. No error types, no URLs, no internal model names.
    """
    names = names or {}
    parts: list[str] = []
    for problem in error.errors(include_url=False):
        loc = [str(part) for part in problem["loc"]]
        field = names.get(loc[0], loc[0]) if loc else ""
        for index in loc[1:]:
            field += f" item {int(index) + 1}" if index.isdigit() else f".{index}"
        kind = problem["type"]
        message = _PLAIN.get(kind) or problem["msg"]
        for prefix in ("Value error, ", "Assertion failed, ", "Input "):
            message = message.removeprefix(prefix)
        message = message[:1].lower() + message[1:]
        if kind not in ("value_error", "assertion_error", "missing", "extra_forbidden"):
            got = problem.get("input")
            if isinstance(got, str | int | float | bool) or got is None:
                message += f" (got {got!r})"
        if not loc:  # a rule across fields: its message names them by their field names
            for name, said in names.items():
                message = re.sub(rf"\b{re.escape(name)}\b", said, message)
        parts.append(f"{field}: {message}" if field else message)
    return one_line("; ".join(parts))


RepoId = Annotated[str, AfterValidator(check_repo_id), Field(description="Hugging Face repo id, namespace/name")]
Revision = Annotated[str, AfterValidator(check_revision), Field(description="Branch, tag or commit hash")]
HostPath = Annotated[
    str, AfterValidator(check_host_path), Field(description="A path on the host (absolute, or relative to its home)")
]
Port = Annotated[int, Field(ge=1, le=65535)]
Concurrency = Annotated[int, Field(ge=1, le=4096, description="Requests in flight at once")]
