"""The small typed records that transcript events carry (policy, prompt and tool versions, usage, errors).

They mirror shapes defined elsewhere (a tool's ToolErrorRecord, pydantic-ai's
usage) without importing them: transcripts/ depends on neither agent/ nor
tools/, so the agent converts its objects into these records (usually through
`model_dump()`), and a transcript stays readable when those modules change.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# Readers keep fields they do not know (a newer writer of the same schema
# version may add optional ones); the recorder forbids them when writing so a
# misspelt field is an error, not silent data. See transcripts/README.md.
# Records are values: frozen once made.
RECORD_CONFIG = ConfigDict(extra="allow", frozen=True, json_schema_serialization_defaults_required=True)


class PolicyInfo(BaseModel):
    """Which policy drove the run and with which settings (model name, temperature, retries...)."""

    model_config = RECORD_CONFIG

    name: str
    settings: dict[str, Any] = {}


class PromptVersion(BaseModel):
    """A prompt file's version and the sha256 of the exact text used."""

    model_config = RECORD_CONFIG

    version: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @classmethod
    def of(cls, text: str, *, version: str) -> PromptVersion:
        return cls(version=version, sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())


class ToolSchema(BaseModel):
    """A tool as the model saw it: JSON Schemas of its arguments and result, and whether it changes the host."""

    model_config = RECORD_CONFIG

    args: dict[str, Any]
    result: dict[str, Any]
    mutates: bool
    description: str = ""

    @classmethod
    def of(cls, args: type[BaseModel], result: type[BaseModel], *, mutates: bool, description: str = "") -> ToolSchema:
        return cls(args=json_schema_of(args), result=json_schema_of(result), mutates=mutates, description=description)


def json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON Schema, a fresh copy each time; generated once per class (it is slow, and every run asks)."""
    schema: dict[str, Any] = json.loads(_json_schema_text(model))
    return schema


@functools.lru_cache(maxsize=256)
def _json_schema_text(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema())


class Usage(BaseModel):
    """Token and call counts, for one model response or totalled over a run."""

    model_config = RECORD_CONFIG

    requests: int = Field(default=0, ge=0)
    tool_calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)

    @classmethod
    def of(cls, usage: Any) -> Usage:
        """From a pydantic-ai RequestUsage or RunUsage (read by attribute; counts it lacks are 0)."""
        return cls(**{name: getattr(usage, name, 0) or 0 for name in cls.model_fields})


class ErrorRecord(BaseModel):
    """A typed tool failure: the same shape as tools' ToolErrorRecord (`record().model_dump()` fits)."""

    model_config = RECORD_CONFIG

    kind: str
    what: str
    remedy: str
    details: dict[str, Any] = {}


class HostTime(BaseModel):
    """A tool call's start and end on its host's own clock, epoch seconds as the host reads them (`Host.clock()`):
    the modelled host's seconds on a simulated host, wall time on a real one. This machine's clock (`ts`,
    `duration_s`) says how long the agent waited; only the host's says how long the host was busy. A reading the
    host could not give (a dropped connection) is None, and the call's host seconds are unknown, never guessed."""

    model_config = RECORD_CONFIG

    start: float | None
    end: float | None

    @property
    def seconds(self) -> float | None:
        """The call's seconds on the host; None when either reading is missing."""
        if self.start is None or self.end is None:
            return None
        return max(0.0, self.end - self.start)  # a host clock stepped back (NTP) within a call counts as no time
