"""A deterministic stand-in tokenizer: about four characters a token, and synthetic text.

Prompt lengths are counted, never tokenized for real: ceil(chars / 4), at least 1,
plus a few template tokens per chat message. Generated text is made of common
words, one token each, chosen from the request id, so the same request reads the
same way and the text of n tokens costs O(n).
"""

from __future__ import annotations

import math
from typing import Any

CHARS_PER_TOKEN = 4
CHAT_TOKENS_PER_MESSAGE = 4  # <|im_user|>, role, <|im_middle|>, <|im_end|>
CHAT_GENERATION_PROMPT_TOKENS = 3

_WORDS = (
    " the of and to in is that for it as with was on be by this are at from or an have not which but "
    "all we can more one will there their if so has each about when out up into them then some how its "
    "first two our time may any these other new way could most over such only make than like after very "
    "step value so let us now check next sum total each result then we get thus answer note here code"
).split(" ")
VOCAB = [" " + w for w in _WORDS if w]


def count_text_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def message_text(content: Any) -> str:
    """The text of an OpenAI message content: a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def count_chat_tokens(messages: list[dict[str, Any]]) -> int:
    body = sum(count_text_tokens(message_text(m.get("content"))) for m in messages)
    return body + CHAT_TOKENS_PER_MESSAGE * len(messages) + CHAT_GENERATION_PROMPT_TOKENS


def synthetic_text(seed: int, start: int, end: int) -> str:
    """Tokens [start, end) of a request's answer."""
    n = len(VOCAB)
    return "".join(VOCAB[(seed + i * 7 + (i * i) % 13) % n] for i in range(start, end))


def synthetic_ids(seed: int, start: int, end: int) -> list[int]:
    return [1000 + (seed + i * 7 + (i * i) % 13) % len(VOCAB) for i in range(start, end)]
