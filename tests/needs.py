"""Test support: what a test needs that the test command provides (tests/run.sh installs it, or fetches or mounts it).

CI runs tests/run.sh as root on a clean Debian machine, where every such need is met: a test whose need is missing
fails, in one line saying what to run. A skip would be a test that never runs. The one exception is a user who is
not root (never CI): tests/run.sh cannot install a system package for them, so the test is skipped, saying so.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str, remedy: str = "run `bash tests/run.sh` as root: it installs it") -> NoReturn:
    """Fail (root, or CI=true) or, for a user who is not root, skip: `what` is missing; `remedy` says what to run."""
    if os.geteuid() == 0 or os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what}: {remedy}", pytrace=False)
    pytest.skip(f"{what} (skipped: not root, so tests/run.sh could not install it; CI runs as root and never skips)")


def missing_package(what: str) -> NoReturn:
    """A Python package of the test extra is missing: tests/run.sh installs it for any user, so always a failure."""
    pytest.fail(f"{what}: run `bash tests/run.sh` (it installs the project with its test extra)", pytrace=False)
