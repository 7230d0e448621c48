"""The goal, parsed before anything runs: which Hub repo it is about, and what it asks for.

A goal is one line of free text ("https://huggingface.co/org/drafter -- download,
evaluate accept lens, deploy, benchmark"). The repo id is the one thing every
pipeline needs and the one piece of the goal that reaches commands on the host,
so it is taken only as the text says it: a Hub URL or ORG/NAME standing alone
(between spaces, at either end, or with plain punctuation around it: a quote,
a bracket, a closing period or comma). A goal where a repo id is glued to
anything else (`org/x>/tmp/y`, `org/x$IFS`, `org/x's`) is refused, and so is a
goal holding a newline or another control character: each with a one-line
message naming the character, never a shorter repo id than the one written.

People often name no repo ("find a DFlash drafter for Qwen3-8B"): such a goal is
a hint, not an error. What it says is parsed beside it: which target it names (a
second repo id, as in "Qwen/Qwen3-0.6B as a standalone drafter for
Qwen/Qwen3-32B", or a model name after "on"/"for": "Kimi-K2.6", "Llama 3.1 8B")
and which speculative algorithms its words name ("MTP", "n-gram", "EAGLE-3",
"standalone", "DFlash"; words inside a repo id do not count). A model policy is
given every goal with these hints; the playbook searches the Hub for a drafter
when the goal names none (playbook_goal.py says what it cannot act on).

Where the goal names a drafter repo, the drafter's config settles its algorithm:
a word about another algorithm ("try X and tell me if it beats dflash") is a
mention, not a request. Only the algorithms a config cannot say are taken from
the words there: standalone (a plain model used as a drafter), MTP heads and
n-gram (no drafter at all).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from specops.tools.inputs import SHELL_METACHARACTERS, describe_char, first_unprintable, repo_id_problem

Intent = Literal["deploy", "evaluate", "benchmark", "compare"]

# A Hub URL's start; what follows it up to a space is the repo id (and maybe /tree/main/...).
_HUB_URL = re.compile(r"https?://(?:www\.)?(?:huggingface\.co|hf\.co)/", re.IGNORECASE)
# A run of the characters a repo id (or a path) is made of: a repo id is one of these with exactly one '/'.
_WORD = re.compile(r"[A-Za-z0-9._/-]+")
# What a URL's path may go on with after ORG/NAME (/tree/main, /blob/main/config.json, /resolve/v1.0/x.safetensors).
_URL_TAIL = re.compile(r"[A-Za-z0-9._/+@%=~-]*")
_OPENING = "(['\""  # plain punctuation before a repo id
_CLOSING = ".,:!?)]'\""  # and after it (a sentence goes on after a space)
_NOT_REPOS = {"tok/s", "and/or", "on/off", "i/o", "req/s", "gb/s", "mb/s", "w/o", "n/a"}  # slashes in ordinary prose
_REPO_RULE = "a repo id is letters, digits, '-', '_', '.' and one '/'"
_NOT_MODELS = ("datasets", "spaces", "collections", "docs", "papers", "blog", "settings", "organizations")

_DEPLOY_WORDS = ("deploy", "deply", "serve", "launch", "run it", "host it")
_INTENT_WORDS: dict[Intent, tuple[str, ...]] = {
    "deploy": _DEPLOY_WORDS,
    "evaluate": ("evaluate", "eval", "accept len", "acceptance", "accept rate"),
    "benchmark": ("benchmark", "bench", "throughput", "tok/s", "latency", "measure"),
    "compare": ("compare", " vs ", "versus", "against", "baseline", "better than"),
}


class GoalRefused(ValueError):
    """The goal cannot be acted on as written; the message (one line) says what to write instead.

    `char` is the character the goal was refused for, where one is to blame (`>`, a newline, ...).
    """

    def __init__(self, message: str, *, char: str | None = None) -> None:
        super().__init__(message)
        self.char = char


# The names people give each --speculative-algorithm, the more specific first (EAGLE-3 before EAGLE).
_ALGORITHM_WORDS: tuple[tuple[str, str], ...] = (
    ("DFLASH", r"d-?flash\d*"),
    ("EAGLE3", r"eagle[- ]?3"),
    ("EAGLE", r"eagle"),
    ("NEXTN", r"mtp|nextn|multi[- ]token[- ]prediction"),
    ("STANDALONE", r"stand-?alone"),
    ("NGRAM", r"n-?gram"),
)
# Algorithms that draft without a separate draft model: the goal names only the target.
NO_DRAFTER = ("NEXTN", "NGRAM")
# What the words decide even where a drafter repo is named: no config says a plain model is to be a drafter.
_ASKED_BESIDE_A_REPO = ("STANDALONE", *NO_DRAFTER)
# A model named without its org, after "on" or "for": a name with at least one digit (Kimi-K2.6), or a family's name
# followed by its version and size as people write them (Llama 3.1 8B), joined with '-' as repo names are.
_MODEL_NAME = re.compile(
    r"\b(?:on|for)\s+['\"(]?"
    r"((?:[A-Za-z][A-Za-z0-9._-]*\d[A-Za-z0-9._-]*?)|(?:[A-Za-z][A-Za-z0-9._-]*(?:\s+\d[A-Za-z0-9.]*)+))"
    r"[.,:;!?'\")]*(?:\s|$)"
)


class Goal(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    repo_id: str | None = None  # the drafter's repo; None for MTP heads and n-gram, which need none
    intents: tuple[Intent, ...]
    target: str | None = None  # the target model the goal names: a repo id, or a model's name
    algorithm: str | None = None  # the --speculative-algorithm the goal asks for by name
    mentioned: tuple[str, ...] = ()  # every algorithm the goal's words name, asked for or not
    drafters: tuple[str, ...] = ()  # every drafter repo the goal names, in order (two or more: a comparison)
    author: str | None = None  # the Hub user or organisation a goal naming no repo names ("the z-lab DFlash drafter")

    @property
    def compares_drafters(self) -> bool:
        return len(self.drafters) > 1

    @property
    def compares_algorithms(self) -> tuple[str, ...]:
        """The algorithms a goal naming no drafter asks to compare ("DFlash vs EAGLE-3 for Qwen3-8B"): a drafter of
        each is to be found and measured; empty for any other goal."""
        drafted = tuple(a for a in self.mentioned if a not in NO_DRAFTER)
        return drafted if self.repo_id is None and "compare" in self.intents and len(drafted) > 1 else ()

    @property
    def subject(self) -> str:
        """What the run is about, in a few words: the drafter repo, else the algorithm on its target."""
        if self.repo_id is not None:
            return self.repo_id
        return f"{self.algorithm or 'speculation'} on {self.target}"


def parse_goal(text: str) -> Goal:
    """The goal's repo id and intents; GoalRefused when there is no usable repo id, or the text is not one line."""
    bad = first_unprintable(text.replace("\t", " "))  # a tab is a space; every other control character is refused
    if bad is not None:
        raise GoalRefused(
            f"the goal has {describe_char(text[bad])}{_where(text, bad)}: give the goal as one line of plain text",
            char=text[bad],
        )
    text = " ".join(text.split())
    if not text:
        raise GoalRefused(
            "the goal is empty: say what to do with which drafter, e.g. "
            "'https://huggingface.co/ORG/DRAFTER -- download, evaluate, deploy, benchmark'"
        )
    repos = _repo_ids(text)
    mentioned = _algorithms(text, repos)
    algorithm = mentioned[0] if mentioned else None
    lowered = f" {text.lower()} "
    intents = tuple(intent for intent, words in _INTENT_WORDS.items() if any(w in lowered for w in words))
    if not intents:
        intents = ("deploy", "evaluate", "benchmark")  # a bare repo: the standard pipeline
    if algorithm in NO_DRAFTER:
        target = repos[0] if repos else _model_name(text)
        if target is None:
            raise GoalRefused(
                f"the goal asks for {algorithm} but names no target model: add it, e.g. 'on deepseek-ai/DeepSeek-V3'"
            )
        return Goal(text=text, repo_id=None, intents=intents, target=target, algorithm=algorithm, mentioned=mentioned)
    if not repos:
        # No drafter named: a hint to search by (the target's name, the algorithm asked for), or nothing to go on.
        if len([a for a in mentioned if a not in NO_DRAFTER]) > 1 and _COMPARISON.search(text):
            intents = _comparison_intents(text, intents)
        return Goal(
            text=text,
            repo_id=None,
            intents=intents,
            target=_model_name(text),
            algorithm=algorithm,
            mentioned=mentioned,
            author=_author(text),
        )
    targets = [r for r in repos if _introduced_as_target(text, r)]
    if targets == repos and _DRAFTER_NAME.search(repos[0].split("/")[-1]):
        targets = []  # "benchmark DFlash on SubSir/Kimi-K2.6-DFlash-tmp-long": a drafter's name, not a target's
    if not targets and len(repos) > 1 and not _COMPARISON.search(text):
        targets = [repos[1]]  # "ORG/DRAFTER ORG/TARGET": the second names what the first drafts for
    drafters = tuple(r for r in repos if r not in targets)
    target = targets[0] if targets else _model_name(text) if len(drafters) > 1 else None
    if len(drafters) > 1:
        intents = _comparison_intents(text, intents)
    if not drafters:  # "a drafter for Qwen/Qwen3-8B": the target alone, a drafter to find
        return Goal(text=text, intents=intents, target=target, algorithm=algorithm, mentioned=mentioned)
    asked = next((a for a in mentioned if a in _ASKED_BESIDE_A_REPO or _asked_how(text, repos, a)), None)
    return Goal(
        text=text,
        repo_id=drafters[0],
        intents=intents,
        target=target,
        algorithm=asked,
        mentioned=mentioned,
        drafters=drafters,
    )


def _comparison_intents(text: str, intents: tuple[Intent, ...]) -> tuple[Intent, ...]:
    """A comparison's intents: measured and compared; deployed only when the goal says so ("does A beat B?" asks
    nothing to be left running)."""
    if "compare" in intents:
        return intents
    said = intents != ("deploy", "evaluate", "benchmark") or any(w in f" {text.lower()} " for w in _DEPLOY_WORDS)
    return (*intents, "compare") if said else ("evaluate", "benchmark", "compare")


# Words that make a goal naming several drafters a comparison of them ("A vs B", "does A beat B", "which of").
_COMPARISON = re.compile(
    r"\b(?:vs\.?|versus|beats?|better than|compare|against|which (?:of|is|one)|whichever|head to head)(?![a-z])", re.I
)
# What introduces the target model right before a repo id: "for ORG/NAME", "on ORG/NAME", "target ORG/NAME".
_TARGET_CUE = re.compile(r"\b(?:for|on|target(?:\s+model)?)\s+(?:the\s+)?(?:model\s+)?['\"(]?$", re.I)


def _introduced_as_target(text: str, repo: str) -> bool:
    """Whether `repo` stands right after words that name the target ("for", "on"), as itself or as a Hub URL."""
    for found in re.finditer(re.escape(repo), text):
        before = _HUB_URL_END.sub("", text[: found.start()])
        if _TARGET_CUE.search(before):
            return True
    return False


# Words in a repo's name that make it a drafter's (z-lab/Qwen3-8B-DFlash-b16, AngelSlim/Qwen3-8B_eagle3).
_DRAFTER_NAME = re.compile(r"d-?flash|eagle|draft|speculat|(?<![a-z])mtp(?![a-z])|medusa", re.I)
_HUB_URL_END = re.compile(r"https?://(?:www\.)?(?:huggingface\.co|hf\.co)/(?:models/)?$", re.I)


def _algorithms(text: str, repos: list[str]) -> tuple[str, ...]:
    """The algorithms the goal's own words name, in the order the goal names them (not a repo id's words:
    Kimi-K2.6-DFlash is a name, not a request)."""
    prose = _prose(text, repos)
    found: list[tuple[int, str]] = []
    for algorithm, words in _ALGORITHM_WORDS:
        match = re.search(rf"(?<![a-z0-9/])(?:{words})(?![a-z0-9/])", prose)
        if match and not (algorithm == "EAGLE" and any(a == "EAGLE3" for _, a in found)):
            found.append((match.start(), algorithm))
    return tuple(algorithm for _, algorithm in sorted(found))


def _asked_how(text: str, repos: list[str], algorithm: str) -> bool:
    """Whether the goal asks to serve its drafter with `algorithm` ("serve org/x with EAGLE-3", "using DFlash")."""
    words = dict(_ALGORITHM_WORDS)[algorithm]
    return (
        re.search(rf"\b(?:with|as|using|via|under)\s+(?:an?\s+)?(?:{words})(?![a-z0-9/])", _prose(text, repos))
        is not None
    )


def _prose(text: str, repos: list[str]) -> str:
    """The goal's words without its repo ids and URLs, lower case."""
    for repo in repos:
        text = text.replace(repo, " ")
    return _HUB_URL.sub(" ", text).lower()


# An organisation named before the algorithm ("the z-lab DFlash drafter") or after "from" ("a drafter from z-lab").
_AUTHOR = re.compile(
    r"\b(?:the\s+([A-Za-z0-9][A-Za-z0-9._-]*)(?:'s)?\s+(?:d-?flash\d*|eagle[- ]?3?|mtp|standalone)\b"
    r"|from\s+([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]))",
    re.I,
)
_NOT_AUTHORS = {"best", "fastest", "official", "latest", "newest", "new", "right", "same", "hub", "huggingface"}


def _author(text: str) -> str | None:
    """The Hub organisation the goal names for its drafter, when it names one the way people do."""
    for match in _AUTHOR.finditer(text):
        name = match.group(1) or match.group(2)
        words = dict(_ALGORITHM_WORDS)
        if name.lower() in _NOT_AUTHORS or any(re.fullmatch(w, name.lower()) for w in words.values()):
            continue
        if match.group(2) and not re.search(r"[-_.\d]|[a-z][A-Z]", name):
            continue  # "from memory", "from scratch": an organisation's name has a separator, a digit or a capital inside
        return name
    return None


def _model_name(text: str) -> str | None:
    match = _MODEL_NAME.search(text)
    return "-".join(match.group(1).split()) if match else None


def _where(text: str, index: int) -> str:
    before = " ".join(text[:index].split())
    if not before:
        return " at its start"
    return f' right after "{_last(before)}"'


def _last(context: str) -> str:
    return context if len(context) <= 40 else "..." + context[-40:]


def _glued(ch: str, where: str) -> GoalRefused:
    """The refusal for a repo id (or what starts like one) with `ch` glued to it."""
    return GoalRefused(f"the goal has {describe_char(ch)} {where}; {_REPO_RULE}", char=ch)


def _stands_alone_before(text: str, start: int, what: str) -> bool:
    """Whether `what` (at text[start]) starts a word: at the start, after a space, or after an opening quote or
    bracket that does. False when a letter or other plain character precedes it (host:port/path, a@b/c: no repo
    reference); a shell character glued before it is refused."""
    i = start
    while i > 0 and text[i - 1] in _OPENING:
        i -= 1
    if i == 0 or text[i - 1].isspace():
        return True
    if text[i - 1] in SHELL_METACHARACTERS:
        raise _glued(text[i - 1], f'right before "{_last(text[i:start] + what)}"')
    return False


def _check_after(text: str, end: int) -> None:
    """Refuse unless text[end:] starts with the end, a space, or closing punctuation followed by the end or a space."""
    i = end
    while i < len(text) and text[i] in _CLOSING:
        i += 1
    if i == len(text) or text[i].isspace():
        return
    word_end = next((j for j in range(end, len(text)) if text[j].isspace()), len(text))
    tail = text[end:word_end]
    # Name the character that breaks it: a shell character first, else the first one after the repo id.
    offset = next(
        (k for k, ch in enumerate(tail) if ch in SHELL_METACHARACTERS and ch not in _CLOSING),
        next((k for k, ch in enumerate(tail) if ch in SHELL_METACHARACTERS), 0),
    )
    word_start = end
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    raise _glued(tail[offset], f'right after "{_last(text[word_start : end + offset])}"')


def _url_repo(text: str, match: re.Match[str]) -> str | None:
    """The repo id of the Hub URL at `match`, checked to stand alone and name ORG/NAME; None: no repo reference."""
    path = _WORD.match(text, match.end())
    path_end = path.end() if path else match.end()
    url = text[match.start() : path_end]
    if not _stands_alone_before(text, match.start(), url):
        return None
    segments = text[match.end() : path_end].split("/")
    if segments[0] == "models":
        segments = segments[1:]
    if segments[0].lower() in _NOT_MODELS:
        raise GoalRefused(
            f"{url!r} is a Hub {segments[0]} page, not a model repo: "
            "give the drafter's URL (https://huggingface.co/ORG/NAME) or its repo id"
        )
    if len(segments) < 2 or not segments[0] or not segments[1].rstrip("."):
        _check_after(text, path_end)
        raise GoalRefused(f"the URL {url!r} names no repo: write https://huggingface.co/ORG/NAME")
    end = path_end
    if len(segments) > 2:  # /tree/main/...: the rest of the URL may hold a few more URL characters
        rest = _URL_TAIL.match(text, path_end)
        end = rest.end() if rest else path_end
    while end > match.end() and text[end - 1] == ".":  # a sentence's period is no part of the URL
        end -= 1
    _check_after(text, end)
    return f"{segments[0]}/{segments[1].rstrip('.') if len(segments) == 2 else segments[1]}"


def _slashed_repo(text: str, match: re.Match[str]) -> str | None:
    """The ORG/NAME at word `match`, checked to stand alone; None when the word is no repo reference."""
    word = match.group(0)
    owner = word.split("/")[0]
    if "/" not in word or not any(c.isalnum() for c in owner):
        return None  # no slash, or /an/absolute/path, ../x: not a repo reference
    if word.count("/") > 1:
        # A relative path (a/b/c): no repo reference, but a shell character glued to it is refused all the same.
        end = match.end()
        if end < len(text) and text[end] in SHELL_METACHARACTERS and text[end] not in _CLOSING:
            if _stands_alone_before(text, match.start(), word):
                _check_after(text, end)
        return None
    core = word.rstrip(".")
    if core.lower() in _NOT_REPOS or not _stands_alone_before(text, match.start(), core):
        return None
    _check_after(text, match.start() + len(core))
    if not core.split("/")[1]:  # ORG/ and then a space: prose, not a repo id
        return None
    return core


def _repo_ids(text: str) -> list[str]:
    """Every repo id the goal names, in order (URLs first when there are any); each checked."""
    urls: list[str] = []
    in_urls: list[tuple[int, int]] = []
    for match in _HUB_URL.finditer(text):
        end = next((j for j in range(match.end(), len(text)) if text[j].isspace()), len(text))
        in_urls.append((match.start(), end))
        repo = _url_repo(text, match)
        if repo is not None:
            urls.append(repo)
    slashed: list[str] = []
    for match in _WORD.finditer(text):
        if not any(start <= match.start() < end for start, end in in_urls):
            repo = _slashed_repo(text, match)
            if repo is not None:
                slashed.append(repo)
    candidates = list(dict.fromkeys(urls or slashed))
    for candidate in candidates:
        problem = repo_id_problem(candidate)
        if problem is not None:
            message, char = problem
            raise GoalRefused(f"{message}; write it as ORG/NAME", char=char)
    return candidates
