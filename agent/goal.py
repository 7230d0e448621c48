"""The goal, parsed before anything runs: which Hub repo it is about, and what it asks for.

A goal is one line of free text ("https://huggingface.co/org/drafter -- download,
evaluate accept lens, deploy, benchmark"). The repo id is the one thing every
pipeline needs and the one piece of the goal that reaches commands on the host,
so a goal without one, or with one that carries shell metacharacters, is refused
here with a message saying what to write instead, before a host is opened.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from specops.tools.inputs import check_repo_id

Intent = Literal["deploy", "evaluate", "benchmark", "compare"]

# A token that could be a repo reference: a Hub URL, or owner/name (with anything glued to it).
_HUB_URL = re.compile(r"https?://(?:www\.)?(?:huggingface\.co|hf\.co)/(?:models/)?(\S+)", re.IGNORECASE)
_SLASHED = re.compile(r"(?<![\w/.:])([^\s/]+/[^\s/]+)(?![\w/])")
_SHELL_META = set(";&|$`<>(){}[]*?!\\'\"\n")
_TRAILING = ".,:)"  # sentence punctuation after a repo id, not part of it
_NOT_REPOS = {"tok/s", "and/or", "on/off", "i/o", "req/s", "gb/s", "mb/s"}  # slashes in ordinary prose

_INTENT_WORDS: dict[Intent, tuple[str, ...]] = {
    "deploy": ("deploy", "deply", "serve", "launch", "run it", "host it"),
    "evaluate": ("evaluate", "eval", "accept len", "acceptance", "accept rate"),
    "benchmark": ("benchmark", "bench", "throughput", "tok/s", "latency", "measure"),
    "compare": ("compare", " vs ", "versus", "against", "baseline", "better than"),
}


class GoalRefused(ValueError):
    """The goal cannot be acted on as written; the message says what to write instead."""


class Goal(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    repo_id: str
    intents: tuple[Intent, ...]


def parse_goal(text: str) -> Goal:
    """The goal's repo id and intents; GoalRefused when there is no usable repo id."""
    text = " ".join(text.split())
    if not text:
        raise GoalRefused(
            "the goal is empty: say what to do with which drafter, e.g. "
            "'https://huggingface.co/ORG/DRAFTER -- download, evaluate, deploy, benchmark'"
        )
    repo_id = _repo_id(text)
    lowered = f" {text.lower()} "
    intents = tuple(intent for intent, words in _INTENT_WORDS.items() if any(w in lowered for w in words))
    if not intents:
        intents = ("deploy", "evaluate", "benchmark")  # a bare repo: the standard pipeline
    return Goal(text=text, repo_id=repo_id, intents=intents)


def _repo_id(text: str) -> str:
    candidates = [m.group(1) for m in _HUB_URL.finditer(text)]
    if not candidates:
        candidates = [
            m.group(1)
            for m in _SLASHED.finditer(text)
            if "://" not in m.group(1) and m.group(1).lower() not in _NOT_REPOS
        ]
    if not candidates:
        raise GoalRefused(
            "the goal names no Hugging Face repo: add the drafter's repo id (ORG/NAME) or its URL "
            "(https://huggingface.co/ORG/NAME)"
        )
    raw = candidates[0].rstrip(_TRAILING)
    # A URL may go on to /tree/main or /blob/...: the repo id is its first two segments.
    if raw.count("/") > 1:
        raw = "/".join(raw.split("/")[:2])
    bad = sorted(set(raw) & _SHELL_META)
    if bad:
        raise GoalRefused(
            f"the repo id {raw!r} contains shell metacharacters ({' '.join(bad)}): a Hub repo id is ORG/NAME "
            "of letters, digits, '.', '_' and '-' only; write it plainly"
        )
    try:
        return check_repo_id(raw)
    except ValueError as exc:
        raise GoalRefused(f"{raw!r} is not a Hugging Face repo id ({exc}); write it as ORG/NAME") from None
