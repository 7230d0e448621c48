"""Redaction: the one place secrets are taken out of everything specops writes.

A run's Redactor (its recorder's) cleans the transcript, the logs, the reason it ends with and the report;
each command's (cli/streams.py: output_redactor) cleans what it prints (its consoles, error lines, logs on
stderr, a traceback) and the page `specops show --html` writes.

Three nets, applied to every string of every event and log line, recursively:

1. values known to be secret: registered with `add_secret`, and the values of
   environment variables whose names name a secret (HF_TOKEN, OPENAI_API_KEY,
   *_SECRET, *_PASSWORD, *_CREDENTIALS...), read when the Redactor is made. They
   become `[REDACTED:NAME]` (or `[REDACTED]` when registered without a name);
2. things that look like secrets wherever they appear: Hub and API token
   formats (hf_..., sk-..., ghp_..., AKIA...), `Bearer X`, `Authorization:`
   header values, `--token X` / `--api-key=X` / `--password X` flags (also
   split over two argv elements), `NAME_TOKEN=X` assignments, `"hf_token": "X"`
   pairs in JSON text, passwords in URLs (`scheme://user:PASSWORD@`), PEM
   private keys;
3. string values under keys that name a secret (`token`, `api_key`,
   `password`, `authorization`, ...).

Names are judged by their words, not by substrings (see `is_secret_name`), so
that ordinary text is left alone: `--speculative-num-draft-tokens 16`,
`"mask_token": "<|MASK|>"`, `input_tokens`, `512-token prompts`, `--token-file
PATH` and `cache_key` are not secrets. Values that cannot be secrets are left
too: vocabulary tokens (`<|MASK|>`, `</s>`, `[PAD]`), shell variables
(`--token $HF_TOKEN`), booleans, and an English word after a flag named in prose
("pass --api-key to the server"). tests/transcripts/data/ordinary_text.txt is
the corpus that holds this to no false positives.

What it cannot see: secrets transformed before they reach it (base64, split
across strings, hashed). Tools keep secrets out of argv in the first place
(tools/context.py); this is the net under that rule.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

REDACTED = "[REDACTED]"

# Values this short or this boolean are flags (HF_HUB_DISABLE_IMPLICIT_TOKEN=1), not
# secrets; redacting them would blank every "1" in a transcript. "EMPTY" and "dummy"
# are what OpenAI-compatible clients are given when a local server wants no key.
_MIN_ENV_SECRET_LENGTH = 4
_FLAG_VALUES = {"true", "false", "yes", "no", "none", "null", "on", "off", "0", "1", "empty", "dummy"}

# -- which names hold secrets -----------------------------------------------------------------------
# A name (dict key, command-line flag, environment variable) is split into lowercase words
# (`--admin-api-key`: admin api key; `hfToken`: hf token) and judged by them, never by a substring.

# A name whose last word is one of these names a secret (`--password`, `hf_token`, `client_secret`)...
_SECRET_WORDS = frozenset(
    {
        "token",
        "password",
        "passwd",
        "passphrase",
        "secret",
        "credential",
        "credentials",
        "cookie",
        "authorization",
        "apikey",
    }
)
# ... also glued to the word before it (`authtoken`, `dbpassword`).
_GLUED_WORDS = ("token", "password", "passwd", "passphrase", "secret", "apikey")
# `key` names a secret only after one of these (`api_key`, `--admin-api-key`, `AWS_SECRET_ACCESS_KEY`);
# `cache_key` or `sort_key` do not.
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "private",
        "secret",
        "signing",
        "encryption",
        "master",
        "auth",
        "client",
        "session",
        "license",
    }
)
# `token` after one of these is a token of the model's vocabulary or a count of tokens, not a credential:
# mask_token, eos_token, image_token, --speculative-num-draft-token, max_token, itl_per_token.
_VOCABULARY_TOKEN = frozenset(
    {
        "mask",
        "pad",
        "padding",
        "eos",
        "bos",
        "unk",
        "unknown",
        "sep",
        "separator",
        "cls",
        "special",
        "additional",
        "image",
        "img",
        "video",
        "audio",
        "vision",
        "media",
        "placeholder",
        "boi",
        "eoi",
        "boa",
        "eoa",
        "bov",
        "eov",
        "start",
        "end",
        "begin",
        "stop",
        "eot",
        "eom",
        "eod",
        "im",
        "fim",
        "prefix",
        "suffix",
        "middle",
        "think",
        "thinking",
        "reasoning",
        "tool",
        "assistant",
        "system",
        "role",
        "turn",
        "answer",
        "newline",
        "space",
        "delimiter",
        "sentinel",
        "dummy",
        "reserved",
        "control",
        "draft",
        "bonus",
        "target",
        "verify",
        "next",
        "first",
        "last",
        "new",
        "max",
        "min",
        "num",
        "total",
        "per",
        "each",
        "output",
        "input",
        "prompt",
        "generated",
        "decode",
        "prefill",
        "accepted",
        "rejected",
        "label",
        "ignore",
        "bad",
    }
)
# Environment variables: a secret word anywhere in the name counts (AWS_ACCESS_KEY_ID, HF_TOKEN_RO, WANDB_KEY)...
_ENV_SECRET_WORDS = frozenset(
    {
        "token",
        "key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "credential",
        "credentials",
        "private",
    }
)
# ... except in names of where a secret is, which is not secret and helps debugging.
_NOT_SECRET_SUFFIX = ("_DIR", "_PATH", "_FILE", "_HOME", "_URL_PATH")

# Every name judged secret ends in one of these (lowercased): the patterns below find candidate names by them,
# and the recorder's fast path looks for them.
_KEYWORDS = (
    "token",
    "key",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "credentials",
    "credential",
    "cookie",
    "authorization",
)
_KEYWORD = f"(?:{'|'.join(_KEYWORDS)})"
_ENDS_IN_KEYWORD = re.compile(rf"{_KEYWORD}$")
_FLAG_NAME = rf"--?[A-Za-z0-9_-]*{_KEYWORD}"
_FLAG_WORD = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9_-]*")
# Longer strings are text, not names: not judged (nor cached) as names.
_MAX_NAME = 128

# The letters `re` matches with an ASCII letter when it ignores case that lower() does not make that letter.
_CASE_ODDITIES = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}  # İ ı ſ K
_CASE_ODDITIES_TABLE = str.maketrans(_CASE_ODDITIES)
# The same letters as the ASCII letters of their own case, for splitting names into words.
_NAME_ODDITIES_TABLE = str.maketrans({"\u0130": "I", "\u0131": "i", "\u017f": "s", "\u212a": "K"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


def _keyword_then(end: str) -> str:
    """A keyword and what ends the name after it, as one literal per alternative: the recorder's fast path then
    scans the pattern only in text that holds `token"` or `key:`, not in every text that says "token"."""
    return f"(?:{'|'.join(keyword + end for keyword in _KEYWORDS)})"


def _fold(text: str) -> str:
    """`text` as caseless (ASCII) literals are looked for in: each letter that matches one of theirs made it."""
    if not text.isascii() and any(odd in text for odd in _CASE_ODDITIES):
        text = text.translate(_CASE_ODDITIES_TABLE)
    return text.lower()


def _words(name: str) -> list[str]:
    """`--admin-api-key` -> [admin, api, key]; `hfToken`, `HFToken` -> [hf, token]; `HF_TOKEN` -> [hf, token]."""
    if not name.isascii():
        name = name.translate(_NAME_ODDITIES_TABLE)
    return [word for word in _NOT_WORD.split(_CAMEL.sub("_", name).lower()) if word]


def _token_is_secret(qualifier: str) -> bool:
    return qualifier not in _VOCABULARY_TOKEN


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a dict key or a command-line flag (`--hf-token`, `api_key`, `Authorization`) names a secret.

    Its last word decides: a secret word (token, password, secret, credentials, cookie, authorization, apikey,
    also glued: authtoken), or `key` after api/access/private/secret...; `token` not after a vocabulary word
    (mask_token, eos_token and max_token are not secrets). `--token-file`, `hub_token_env`, `input_tokens`,
    `tokenizer`, `cache_key` end in another word and are not secrets either."""
    if len(name) > _MAX_NAME or not _ENDS_IN_KEYWORD.search(_fold(name)):
        return False
    words = _words(name)
    if not words:
        return False
    last, before = words[-1], (words[-2] if len(words) > 1 else "")
    if last == "key":
        return before in _KEY_QUALIFIERS
    if last in _SECRET_WORDS:
        return last != "token" or _token_is_secret(before)
    for word in _GLUED_WORDS:
        if last.endswith(word):
            return word != "token" or _token_is_secret(last[: -len(word)])
    return last.endswith("key") and last[:-3] in _KEY_QUALIFIERS


def is_secret_flag(word: str) -> bool:
    """Whether an argv word is a flag whose value (`=X` or the next word) is a secret: --token, --hf-token,
    --api-key, --admin-api-key, --password; not --speculative-num-draft-tokens, --mask-token, --token-file."""
    return (
        word.startswith("-")
        and len(word) <= _MAX_NAME
        and _FLAG_WORD.fullmatch(_fold(word)) is not None
        and is_secret_name(word)
    )


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret: a secret word anywhere in it (HF_TOKEN,
    OPENAI_API_KEY, AWS_ACCESS_KEY_ID, SPECOPS_DB_PASSWORD), not only within a longer word (TOKENIZERS_PARALLELISM,
    MAX_TOTAL_TOKENS, KEYBOARD), nor a vocabulary token (SGLANG_MASK_TOKEN), nor where a secret is (HF_TOKEN_PATH)."""
    if name.upper().endswith(_NOT_SECRET_SUFFIX):
        return False
    words = _words(name)
    for i, word in enumerate(words):
        before = words[i - 1] if i else ""
        if word in _ENV_SECRET_WORDS:
            if word != "token" or _token_is_secret(before):
                return True
            continue
        for glued in _GLUED_WORDS:
            if word.endswith(glued):
                if glued != "token" or _token_is_secret(word[: -len(glued)]):
                    return True
                break
    return False


# -- which values cannot be secrets -----------------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"<\|?[^\s<>]{1,64}?\|?>"  # a vocabulary token or a placeholder: <|MASK|>, </s>, <pad>, <YOUR_TOKEN>
    r"|\[[A-Z][A-Z0-9_]{0,31}\]"  # [MASK], [PAD], [CLS]
    r"|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"  # a shell variable: $HF_TOKEN, ${HF_TOKEN}
)
# Words that follow a flag named in prose ("pass --api-key to the server", "--token or HF_TOKEN").
_PROSE_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "to",
        "or",
        "and",
        "nor",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "with",
        "without",
        "when",
        "if",
        "in",
        "on",
        "of",
        "for",
        "from",
        "as",
        "at",
        "by",
        "but",
        "so",
        "then",
        "not",
        "instead",
        "flag",
        "flags",
        "option",
        "options",
        "argument",
        "only",
        "also",
        "it",
        "its",
        "that",
        "this",
        "which",
        "must",
        "should",
        "can",
        "will",
        "would",
        "may",
        "set",
        "given",
        "unset",
        "here",
        "there",
        "too",
        "has",
        "have",
        "had",
        "does",
        "did",
        "value",
        "you",
        "we",
        "they",
    }
)


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _not_a_secret(value: str) -> bool:
    """A value that no name makes a secret: no letter or digit in it ("...", "***"), a boolean, already redacted,
    a vocabulary token (<|MASK|>), a variable ($HF_TOKEN)."""
    value = _unquoted(value)
    return (
        not any(c.isalnum() for c in value)
        or "[REDACTED" in value
        or value.lower() in _FLAG_VALUES
        or _PLACEHOLDER.fullmatch(value) is not None
    )


def _secret_flag_value(match: re.Match[str]) -> str:
    name, separator, value = match.group(1), match.group(2), match.group(3)
    if not is_secret_name(name) or _not_a_secret(value) or (separator != "=" and value.lower() in _PROSE_WORDS):
        return match.group(0)
    return f"{name}{separator}{REDACTED}"


def _secret_assignment(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    if not is_secret_env_name(name) or _not_a_secret(value):
        return match.group(0)
    return f"{name}={REDACTED}"


def _secret_query_value(match: re.Match[str]) -> str:
    lead, name, value = match.group(1), match.group(2), match.group(3)
    if not is_secret_name(name) or _not_a_secret(value):
        return match.group(0)
    return f"{lead}{name}={REDACTED}"


def _secret_line_value(match: re.Match[str]) -> str:
    lead, name, space, value = match.group(1), match.group(2) + match.group(3)[:-1], match.group(4), match.group(5)
    if not is_secret_name(name) or _not_a_secret(value.strip()):
        return match.group(0)
    return f"{lead}{name}:{space}{REDACTED}"


def _secret_json_pair(match: re.Match[str]) -> str:
    name, close, colon, value = match.group(2) + match.group(3)[:-1], match.group(3)[-1], match.group(4), match.group(5)
    if not is_secret_name(name) or _not_a_secret(value):
        return match.group(0)
    return f"{match.group(1)}{name}{close}{colon}{value[0]}{REDACTED}{value[0]}"


_NOT_ALREADY = r"(?!\[REDACTED)"
_QUOTE = "[\"']"
# Just after a keyword; a name read whole (possessively) and checked here is rejected without backtracking.
_ENDS_IN_A_KEYWORD = f"(?:{'|'.join(f'(?<={keyword})' for keyword in _KEYWORDS)})"
_VALUE = r"(?:\"[^\"]*\"|'[^']*'|[^\s\"']+)"

# (pattern, replacement): replacements keep the context (the flag, the header
# name, the URL's user) so that a reader still sees what was there. A replacement
# that is a function judges the name and value the pattern found, and gives the
# text back unchanged when they are not a secret's.
_PATTERNS: tuple[tuple[re.Pattern[str], Any], ...] = (
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
    # A flag starts a word: the `-token` of "512-token prompts" is no flag. (The dash first, then what is before
    # it: most positions of a text are rejected at once.)
    (
        re.compile(
            rf"(-(?<![\w\-./]-)-?[A-Za-z0-9_-]*{_KEYWORD})(?![A-Za-z0-9_-])(=|[ \t]+){_NOT_ALREADY}(?!--)({_VALUE})",
            re.IGNORECASE,
        ),
        _secret_flag_value,
    ),
    (
        re.compile(
            rf"\b([A-Z0-9_]*(?:TOKEN|KEY|PASSWORD|PASSWD|PASSPHRASE|SECRET|CREDENTIALS?|PRIVATE)[A-Z0-9_]*)="
            rf"{_NOT_ALREADY}({_VALUE})"
        ),
        _secret_assignment,
    ),
    # "name": "value" in JSON or a Python repr.
    (
        re.compile(
            rf"([\"'])(?=[A-Za-z0-9_.\-]*+{_ENDS_IN_A_KEYWORD}{_QUOTE})([A-Za-z0-9_.\-]*?)({_keyword_then(_QUOTE)})"
            rf"(\s*:\s*)(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')",
            re.IGNORECASE,
        ),
        _secret_json_pair,
    ),
    (
        re.compile(rf"([?&;])([A-Za-z0-9_.\-]*{_KEYWORD})={_NOT_ALREADY}([^\s&#\"'<>]+)", re.IGNORECASE),
        _secret_query_value,
    ),
    # A line that is a header or a YAML entry, also as curl -v shows it (`> X-Api-Key: ...`) or in a YAML list.
    # A quote may start the line too, so that the recorder's fast path sees a string's first line in JSON text.
    (
        re.compile(
            rf"((?:^|(?<=[\n\"']))[ \t]*(?:[<>][ \t]*)?(?:-[ \t]+)?)((?=[A-Za-z])[A-Za-z0-9_-]*?)({_keyword_then(':')})"
            rf"([ \t]+){_NOT_ALREADY}([^\s][^\n]*)",
            re.IGNORECASE,
        ),
        _secret_line_value,
    ),
    (re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-]{20,}"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![A-Za-z0-9])"), REDACTED),
    (re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
)


# For the whole-event check (`Redactor.may_hold_secrets`): a JSON key naming a secret with a string value,
# and a JSON string that is a secret flag on its own (its value is the next argv element).
# Any key ending in a secret word (a superset of the keys `is_secret_name` accepts), looked for in the lowercased
# text: fast.
_SECRET_KEY_IN_JSON = re.compile(rf'{_KEYWORD}":"')
_KEY_WORDS = ("token", "key", "password", "passwd", "passphrase", "secret", "credential", "authorization", "cookie")
_SECRET_FLAG_IN_JSON = re.compile(rf'"{_FLAG_NAME}"', re.IGNORECASE)
_JSON_ESCAPES = (('\\"', '"'), ("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"))
# A set of literals this large says little about a text: the pattern is scanned instead.
_MAX_LITERALS = 64


def _literals(items: Any, ops: Any) -> frozenset[str] | None:
    """Strings one of which is in every match of the parsed pattern `items`: the most selective set found
    (the longest shortest string), or None. Literal runs, small character classes of literals (expanded),
    alternatives (each one's strings), groups and repeats of at least one are looked into; nothing else."""
    repeats = tuple(
        getattr(ops, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(ops, name)
    )
    best: frozenset[str] | None = None

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if (
            found
            and "" not in found
            and len(found) <= _MAX_LITERALS
            and (best is None or min(map(len, found)) > min(map(len, best)))
        ):
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
            sets = [f for f in found if f]
            if len(sets) == len(found):  # every alternative has its literals
                consider(frozenset().union(*sets))
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
        # The parser `re` compiles with, a private module without type stubs (so imported by name); should it
        # change, patterns are scanned.
        parser, constants = importlib.import_module("re._parser"), importlib.import_module("re._constants")
        found = _literals(parser.parse(pattern.pattern, pattern.flags), constants)
    except Exception:  # noqa: BLE001 - any failure of a private API means: scan the pattern
        found = None
    if found is None or (caseless and not all(literal.isascii() for literal in found)):  # see _fold
        return pattern, ("",), caseless
    return pattern, tuple(sorted({literal.lower() if caseless else literal for literal in found})), caseless


# Each of _PATTERNS with what it cannot match without, derived from it: a pattern added there is gated (or
# always scanned) here by construction.
_GATED: tuple[tuple[re.Pattern[str], tuple[str, ...], bool], ...] = tuple(_gated(pattern) for pattern, _ in _PATTERNS)


def _any_literal(caseless: bool) -> re.Pattern[str]:
    """Finds any literal of the patterns that ignore case (in folded text) or of those that do not: a string with
    none skips every pattern at once."""
    return re.compile("|".join(sorted({re.escape(lit) for _, lits, c in _GATED if c is caseless for lit in lits})))


_ANY_LITERAL = _any_literal(caseless=False)
_ANY_CASELESS_LITERAL = _any_literal(caseless=True)
_GATED_REPLACEMENTS = tuple(zip(_GATED, (replacement for _, replacement in _PATTERNS), strict=True))


def secret_env_names(environ: Mapping[str, str]) -> list[str]:
    """Names of the variables in `environ` that hold secrets (by name and value, as described above)."""
    return [
        name
        for name, value in environ.items()
        if is_secret_env_name(name)
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
        # Each pattern only where its literals are (see _GATED): most strings hold none, and a search for literals
        # is far cheaper than the patterns' scans.
        if _ANY_LITERAL.search(text) is None and _ANY_CASELESS_LITERAL.search(_fold(text)) is None:
            return text
        folded: str | None = None
        for (pattern, literals, caseless), replacement in _GATED_REPLACEMENTS:
            if caseless:
                if folded is None:
                    folded = _fold(text)
                haystack = folded
            else:
                haystack = text
            if any(literal in haystack for literal in literals):
                replaced = pattern.sub(replacement, text)
                if replaced != text:
                    text, folded = replaced, None
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
        if isinstance(key, str) and isinstance(item, str) and is_secret_name(key) and not _not_a_secret(item):
            return self._known_name(item) or REDACTED
        return self.redact(item)

    def _redact_sequence(self, items: list[Any] | tuple[Any, ...]) -> list[Any]:
        out: list[Any] = []
        follows_secret_flag = False
        for item in items:
            if follows_secret_flag and isinstance(item, str) and not item.startswith("-") and not _not_a_secret(item):
                out.append(self._known_name(item) or REDACTED)
            else:
                out.append(self.redact(item))
            follows_secret_flag = isinstance(item, str) and is_secret_flag(item)
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
