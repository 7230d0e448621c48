"""Redaction: the one place secrets are taken out of everything a run writes (transcript and logs).

Three nets, applied to every string of every event and log line, recursively:

1. values known to be secret: registered with `add_secret`, and the values of
   environment variables whose names look secret (*TOKEN*, *KEY*, *SECRET*,
   *PASSWORD*, *CREDENTIAL*...), read when the Redactor is made. They become
   `[REDACTED:NAME]` (or `[REDACTED]` when registered without a name);
2. things that look like secrets wherever they appear: Hub and API token
   formats (hf_..., sk-..., ghp_..., AKIA...), `Bearer X`, `Authorization:`
   header values, `--token X` / `--api-key=X` / `--password X` flags (also
   split over two argv elements), `NAME_TOKEN=X` assignments, passwords in
   URLs (`scheme://user:PASSWORD@`), PEM private keys;
3. string values under keys that name a secret (`token`, `api_key`,
   `password`, `authorization`, ...).

What it cannot see: secrets transformed before they reach it (base64, split
across strings, hashed). Tools keep secrets out of argv in the first place
(tools/context.py); this is the net under that rule.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

REDACTED = "[REDACTED]"

# Environment variable names that hold secrets. Names ending in _DIR, _PATH,
# _FILE... hold where a secret is, which is not secret and helps debugging.
_SECRET_ENV_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE", re.IGNORECASE)
_NOT_SECRET_SUFFIX = ("_DIR", "_PATH", "_FILE", "_HOME", "_URL_PATH")
# Values this short or this boolean are flags (HF_HUB_DISABLE_IMPLICIT_TOKEN=1), not
# secrets; redacting them would blank every "1" in a transcript.
_MIN_ENV_SECRET_LENGTH = 4
_FLAG_VALUES = {"true", "false", "yes", "no", "none", "null", "on", "off"}

# Dict keys whose string values are secrets. Anchored at the end so that
# `input_tokens`, `tokenizer` or `token_weighted` are left alone.
_SECRET_KEY = re.compile(
    r"^(?:.*[_\-.])?(?:token|api[_-]?key|apikey|password|passwd|secret|secret[_-]key|access[_-]key|"
    r"private[_-]key|authorization|credentials?|cookie)$",
    re.IGNORECASE,
)
# A command-line flag whose value is a secret; the name must end in the keyword,
# so `--hub-token-env NAME` and `--token-file PATH` keep their (non-secret) value.
_SECRET_FLAG_NAME = r"--?[A-Za-z0-9_-]*(?:token|api[-_]?key|apikey|password|passwd|secret|credentials?)"
_SECRET_FLAG = re.compile(rf"^{_SECRET_FLAG_NAME}$", re.IGNORECASE)

_NOT_ALREADY = r"(?!\[REDACTED)"
_VALUE = r"(?:\"[^\"]*\"|'[^']*'|[^\s\"']+)"

# (pattern, replacement): replacements keep the context (the flag, the header
# name, the URL's user) so that a reader still sees what was there.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
        REDACTED,
    ),
    (re.compile(rf"\b([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+):{_NOT_ALREADY}[^/\s@]+@"), rf"\1:{REDACTED}@"),
    (
        re.compile(
            rf"\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)(?:((?:bearer|basic|token|digest)\s+))?"
            rf"{_NOT_ALREADY}[^\s\"',;]+",
            re.IGNORECASE,
        ),
        rf"\1\2{REDACTED}",
    ),
    (re.compile(rf"\b(bearer\s+){_NOT_ALREADY}[A-Za-z0-9\-._~+/]+=*", re.IGNORECASE), rf"\1{REDACTED}"),
    (re.compile(rf"({_SECRET_FLAG_NAME})(?![A-Za-z0-9_-])(=|\s+){_NOT_ALREADY}{_VALUE}", re.IGNORECASE), rf"\1\2{REDACTED}"),
    (
        re.compile(
            rf"\b([A-Z0-9_]*(?:TOKEN|API_KEY|APIKEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?|ACCESS_KEY|PRIVATE_KEY)"
            rf"(?:_[A-Z0-9]+)*?)(?<!_DIR)(?<!_PATH)(?<!_FILE)(?<!_HOME)={_NOT_ALREADY}{_VALUE}"
        ),
        rf"\1={REDACTED}",
    ),
    (re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{20,}"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![A-Za-z0-9])"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
)


def _scoped(pattern: re.Pattern[str]) -> str:
    flags = ("i" if pattern.flags & re.IGNORECASE else "") + ("s" if pattern.flags & re.DOTALL else "")
    return f"(?{flags}:{pattern.pattern})" if flags else f"(?:{pattern.pattern})"


# One pass that finds whether any pattern matches: most strings hold no secret,
# and one search is several times cheaper than every substitution.
_ANY_PATTERN = re.compile("|".join(_scoped(pattern) for pattern, _ in _PATTERNS))


# For the whole-event check (`Redactor.may_hold_secrets`): a JSON key naming a secret with a string value,
# and a JSON string that is a secret flag on its own (its value is the next argv element).
# Any key ending in a secret's name (a superset of _SECRET_KEY's), looked for in the lowercased text: fast.
_SECRET_KEY_IN_JSON = re.compile(
    r'(?:token|api[_-]?key|apikey|password|passwd|secret|access[_-]key|private[_-]key|authorization|credentials?|'
    r'cookie)":"'
)
_KEY_WORDS = ("token", "key", "password", "passwd", "secret", "credential", "authorization", "cookie")
_SECRET_FLAG_IN_JSON = re.compile(rf'"{_SECRET_FLAG_NAME}"', re.IGNORECASE)
_JSON_ESCAPES = (('\\"', '"'), ("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"))
# A set of literals this large says little about a text: the pattern is scanned instead.
_MAX_LITERALS = 64


def _literals(items: Any, ops: Any) -> frozenset[str] | None:
    """Strings one of which is in every match of the parsed pattern `items`: the most selective set found
    (the longest shortest string), or None. Literal runs, small character classes of literals (expanded),
    alternatives (each one's strings), groups and repeats of at least one are looked into; nothing else."""
    repeats = tuple(getattr(ops, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(ops, name))
    best: frozenset[str] | None = None

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and "" not in found and len(found) <= _MAX_LITERALS:
            if best is None or min(map(len, found)) > min(map(len, best)):
                best = found

    run = frozenset({""})  # what the stretch of literals read so far may spell
    for op, av in items:
        if op is ops.LITERAL:
            run = frozenset(r + chr(av) for r in run)
            continue
        if op is ops.IN and all(kind is ops.LITERAL for kind, _ in av) and len(run) * len(av) <= _MAX_LITERALS:
            run = frozenset(r + chr(c) for r in run for _, c in av)
            continue
        if op is ops.BRANCH:  # the stretch so far, continued by each alternative's leading literals
            consider(frozenset(r + lead for r in run for branch in av[1] for lead in _leading(branch, ops)))
        consider(run)
        run = frozenset({""})
        if op is ops.SUBPATTERN and not (av[1] | av[2]) & re.IGNORECASE:  # (?i:...) inside: not looked into
            consider(_literals(av[3], ops))
        elif op is ops.BRANCH:
            found = [_literals(branch, ops) for branch in av[1]]
            if all(found):
                consider(frozenset().union(*found))  # type: ignore[arg-type]
        elif op in repeats and av[0] >= 1:
            consider(_literals(av[2], ops))
    consider(run)
    return best


def _leading(items: Any, ops: Any) -> frozenset[str]:
    """What a match of `items` may start with, as far as it is literals (at least "")."""
    run = frozenset({""})
    for op, av in items:
        if op is ops.LITERAL:
            run = frozenset(r + chr(av) for r in run)
        elif op is ops.IN and all(kind is ops.LITERAL for kind, _ in av) and len(run) * len(av) <= _MAX_LITERALS:
            run = frozenset(r + chr(c) for r in run for _, c in av)
        else:
            break
    return run


def _gated(pattern: re.Pattern[str]) -> tuple[re.Pattern[str], tuple[str, ...], bool]:
    """(pattern, literals, caseless): one of the literals is in every text `pattern` can match (lowercase, and
    looked for in the folded text, when it ignores case), read from the pattern itself. A substring test is far
    cheaper than a pattern's scan, and most events hold none of them. No literal found: ("",), always scanned."""
    caseless = bool(pattern.flags & re.IGNORECASE)
    try:
        from re import _constants, _parser  # the parser `re` compiles with; should it change, patterns are scanned

        found = _literals(_parser.parse(pattern.pattern, pattern.flags), _constants)
    except Exception:
        found = None
    if found is None or (caseless and not all(literal.isascii() for literal in found)):  # see _fold
        return pattern, ("",), caseless
    return pattern, tuple(sorted({literal.lower() if caseless else literal for literal in found})), caseless


# Each of _PATTERNS with what it cannot match without, derived from it: a pattern added there is gated (or
# always scanned) here by construction.
_GATED: tuple[tuple[re.Pattern[str], tuple[str, ...], bool], ...] = tuple(_gated(pattern) for pattern, _ in _PATTERNS)

# The letters `re` matches with an ASCII letter when it ignores case that lower() does not make that letter.
_CASE_ODDITIES = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}  # İ ı ſ K
_CASE_ODDITIES_TABLE = str.maketrans(_CASE_ODDITIES)


def _fold(text: str) -> str:
    """`text` as caseless (ASCII) literals are looked for in: each letter that matches one of theirs made it."""
    if not text.isascii() and any(odd in text for odd in _CASE_ODDITIES):
        text = text.translate(_CASE_ODDITIES_TABLE)
    return text.lower()


def secret_env_names(environ: Mapping[str, str]) -> list[str]:
    """Names of the variables in `environ` that hold secrets (by name and value, as described above)."""
    return [
        name
        for name, value in environ.items()
        if _SECRET_ENV_NAME.search(name)
        and not name.upper().endswith(_NOT_SECRET_SUFFIX)
        and len(value) >= _MIN_ENV_SECRET_LENGTH
        and value.strip().lower() not in _FLAG_VALUES
    ]


class Redactor:
    """Replaces secrets in strings and JSON-like values. Thread-safe; secrets can be added while in use."""

    def __init__(self, secrets: Iterable[str] = (), *, environ: Mapping[str, str] | None = None) -> None:
        """`environ` defaults to os.environ, read once now; pass {} to take no secrets from the environment."""
        self._lock = threading.Lock()
        self._names: dict[str, str | None] = {}
        self._known: re.Pattern[str] | None = None
        self._escaped_secret = False  # a known secret that JSON escapes (quotes, backslashes, control characters)
        env = os.environ if environ is None else environ
        for name in secret_env_names(env):
            self._names[env[name]] = name
        for value in secrets:
            self._check(value)
            self._names.setdefault(value, None)
        self._compile()

    def add_secret(self, value: str, name: str | None = None) -> None:
        """From now on, `value` is written as [REDACTED:name] (or [REDACTED])."""
        self._check(value)
        with self._lock:
            self._names[value] = name or self._names.get(value)
            self._compile()

    @property
    def secret_count(self) -> int:
        return len(self._names)

    def redact_text(self, text: str) -> str:
        known = self._known
        if known is not None:
            text = known.sub(self._replace_known, text)
        if _ANY_PATTERN.search(text) is None:
            return text
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text

    def may_hold_secrets(self, json_text: str) -> bool:
        """False only when `json_text` (compact JSON) certainly holds nothing `redact` would change.

        One search over the whole serialised event instead of one per string: most events hold no
        secret, and this lets the recorder write them without walking every value. Conservative: the
        JSON escapes of quotes and whitespace are undone first so that every pattern sees the text as
        it was, and known secrets with characters JSON escapes always take the full walk.
        """
        if self._escaped_secret:
            return True
        folded = _fold(json_text)
        if any(word in folded for word in _KEY_WORDS) and (
            _SECRET_KEY_IN_JSON.search(folded) or _SECRET_FLAG_IN_JSON.search(json_text)
        ):
            return True
        text = json_text
        for escaped, plain in _JSON_ESCAPES:
            if escaped in text:
                text = text.replace(escaped, plain)
        known = self._known
        if known is not None and known.search(text):
            return True
        if text is not json_text:
            folded = _fold(text)
        for pattern, literals, caseless in _GATED:
            haystack = folded if caseless else text
            if any(literal in haystack for literal in literals) and pattern.search(text):
                return True
        return False

    def redact(self, value: Any) -> Any:
        """A copy of a JSON-like value (dicts, lists, strings, numbers) with every string redacted."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            return {
                self.redact_text(key) if isinstance(key, str) else key: self._redact_under_key(key, item)
                for key, item in value.items()
            }
        if isinstance(value, (list, tuple)):
            return self._redact_sequence(value)
        return value

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        """A structlog processor. Values that are not JSON-like are turned into their str() first,
        since a renderer would print that text anyway."""
        return {key: self._redact_under_key(key, _loggable(item)) for key, item in event_dict.items()}

    def _redact_under_key(self, key: Any, item: Any) -> Any:
        if isinstance(key, str) and isinstance(item, str) and _SECRET_KEY.match(key) and not item.startswith("[REDACTED"):
            return self._known_name(item) or REDACTED
        return self.redact(item)

    def _redact_sequence(self, items: list[Any] | tuple[Any, ...]) -> list[Any]:
        out: list[Any] = []
        follows_secret_flag = False
        for item in items:
            if follows_secret_flag and isinstance(item, str) and not item.startswith("-"):
                out.append(self._known_name(item) or REDACTED)
            else:
                out.append(self.redact(item))
            follows_secret_flag = isinstance(item, str) and bool(_SECRET_FLAG.match(item))
        return out

    def _known_name(self, value: str) -> str | None:
        if value not in self._names:
            return None
        name = self._names[value]
        return f"[REDACTED:{name}]" if name else REDACTED

    def _replace_known(self, match: re.Match[str]) -> str:
        return self._known_name(match.group(0)) or REDACTED

    def _compile(self) -> None:
        # Longest first, so that a secret containing another is replaced whole.
        values = sorted(self._names, key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, values))) if values else None
        self._escaped_secret = any(json.dumps(v, ensure_ascii=False)[1:-1] != v for v in values)

    @staticmethod
    def _check(value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValueError("a secret to redact must be a non-empty string")


def _loggable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {key: _loggable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_loggable(item) for item in value]
    return str(value)
