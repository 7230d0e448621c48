"""Fixtures the tool tests share."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def small_fs(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A directory on a 4 MiB real filesystem from the test command (tests/run.sh mounts it as root): ENOSPC for real.

    Without it the test is skipped, except under CI, where a missing filesystem is a failure."""
    given = os.environ.get("SPECOPS_TEST_SMALL_FS")
    if not given:
        reason = "needs SPECOPS_TEST_SMALL_FS (a small real filesystem; tests/run.sh mounts one as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    own = Path(tempfile.mkdtemp(prefix=f"{request.node.name[:40]}-", dir=given))
    try:
        yield own
    finally:
        shutil.rmtree(own, ignore_errors=True)
