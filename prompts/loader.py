"""The agent's prompt texts (prompts/*.md), each with its version line and the sha256 of the exact text.

A prompt file starts with `<!-- version: N -->`; bump N when its meaning changes.
The run records every prompt's version and hash in its run_start event, so a
transcript says which words drove it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

_DIR = Path(__file__).parent
_VERSION = re.compile(r"\A<!--\s*version:\s*([\w.\-]+)\s*-->\s*\n")
AGENT_PROMPTS = ("system", "tools")


class PromptFileInvalid(ValueError):
    """A prompt file lacks its version line."""


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    text: str  # without the version line: what the model is sent

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def load_prompt(name: str, directory: Path = _DIR) -> Prompt:
    path = directory / f"{name}.md"
    raw = path.read_text(encoding="utf-8")
    match = _VERSION.match(raw)
    if match is None:
        raise PromptFileInvalid(f"{path} must start with a version line: <!-- version: N -->")
    return Prompt(name=name, version=match.group(1), text=raw[match.end() :].strip() + "\n")


def agent_prompts(directory: Path = _DIR) -> dict[str, Prompt]:
    """The system prompt and the tool guidance, by name."""
    return {name: load_prompt(name, directory) for name in AGENT_PROMPTS}
