"""Argument types every tool shares, checked before anything runs on a host.

Tools pass arguments to commands as separate argv words, never through a
shell; these types refuse, up front and with a clear message, what no real repo
id, revision or path contains (shell metacharacters, spaces, control
characters, `..` tricks), so that bad input changes nothing.
"""

from __future__ import annotations

import posixpath
import re
from typing import Annotated

from pydantic import AfterValidator, Field

# Hugging Face repo ids: namespace/name, letters, digits, '-', '_', '.'; no '--' or '..' (the Hub refuses them).
_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(rf"{_REPO_PART}/{_REPO_PART}")
# Branches, tags and commit hashes: git ref characters without shell meaning.
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,127}")
# Characters a path may hold: what model paths really use; nothing a shell would read.
_PATH = re.compile(r"[A-Za-z0-9._/~+@%=:,-]+")


def check_repo_id(value: str) -> str:
    if not _REPO_ID.fullmatch(value) or "--" in value or ".." in value:
        raise ValueError(
            f"{value!r} is not a Hugging Face repo id: expected namespace/name of letters, digits, '-', '_' and '.' "
            "(e.g. SubSir/Kimi-K2.6-DFlash-tmp-long)"
        )
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


RepoId = Annotated[str, AfterValidator(check_repo_id), Field(description="Hugging Face repo id, namespace/name")]
Revision = Annotated[str, AfterValidator(check_revision), Field(description="Branch, tag or commit hash")]
HostPath = Annotated[
    str, AfterValidator(check_host_path), Field(description="A path on the host (absolute, or relative to its home)")
]
Port = Annotated[int, Field(ge=1, le=65535)]
Concurrency = Annotated[int, Field(ge=1, le=4096, description="Requests in flight at once")]
