"""Where an SSH host is and how to talk to it: the target (user, host, port) and the connection options."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Host names and addresses as DNS and IP literals spell them: nothing a shell would read.
HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?\Z|\[?[0-9A-Fa-f:.]+\]?\Z")
USERNAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")

DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"


class SshTarget(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hostname: str
    user: str
    port: int = Field(default=22, ge=1, le=65535)

    @property
    def url(self) -> str:
        host = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return f"ssh://{self.user}@{host}" + ("" if self.port == 22 else f":{self.port}")


class SshOptions(BaseModel):
    """Options of an SSH host; every field can also come from an inventory entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key_filename: list[str] = Field(default=[], description="Private key files to offer (IdentityFile)")
    allow_agent: bool = Field(default=True, description="Offer the keys of a running ssh-agent")
    look_for_keys: bool = Field(default=True, description="Offer ~/.ssh/id_* too")
    known_hosts: str = Field(default=DEFAULT_KNOWN_HOSTS, description="Host keys checked, and new ones recorded")
    accept_unknown_host_key: bool = Field(
        default=False,
        description="Trust a host key not yet in known_hosts and record it there (trust on first use). "
        "Off: an unknown key is refused. A changed key is refused either way.",
    )
    connect_timeout_s: float = Field(default=10.0, gt=0, description="TCP connect")
    auth_timeout_s: float = Field(default=15.0, gt=0, description="Banner and authentication")
    keepalive_s: int = Field(default=15, ge=0, description="Keepalive interval; 0 turns it off")
    connect_attempts: int = Field(default=4, ge=1, description="Attempts to re-establish a dropped connection")
    rerun_attempts: int = Field(
        default=2, ge=0, description="Re-runs of an idempotent command whose connection dropped mid-way"
    )

    @field_validator("key_filename", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, (str, Path)) else value

    @field_validator("key_filename")
    @classmethod
    def _expand_keys(cls, value: list[str]) -> list[str]:
        return [str(Path(v).expanduser()) for v in value]

    @property
    def known_hosts_path(self) -> Path:
        return Path(self.known_hosts).expanduser()
