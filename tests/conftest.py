"""Shared test settings: no real model calls, no network beyond loopback (but for pip fetching the SGLang
release wheels that tests/sglang_releases/test_committed_data.py checks the committed facts against)."""

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from specops.cli.simulated_hosts import offer_simulated_hosts

offer_simulated_hosts()  # the tests open `sim:` hosts as the CLI does

# Real model requests are never made from tests (pydantic-ai's switch).
try:
    from pydantic_ai import models

    models.ALLOW_MODEL_REQUESTS = False
except ImportError:  # pragma: no cover - pydantic-ai is a hard dependency
    pass

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_UPDATE_CHECK", "1")


@pytest.fixture(autouse=True)
def _structlog_as_it_was():
    """Every test starts with structlog unconfigured and leaves it so: a configuration one test leaves behind (a run
    that was cut off, a test that configured it) would decide where the next test's logs go."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture
def small_fs(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A directory on a small real filesystem no other process writes to: the test command's 4 MiB tmpfs
    (SPECOPS_TEST_SMALL_FS; tests/run.sh mounts it as root), or one this fixture mounts as root. ENOSPC for real, and
    figures that hold still. Tests using it are `serial`: the filesystem is one for the whole run.

    Without either the test is skipped, except under CI, where a missing filesystem is a failure."""
    given = os.environ.get("SPECOPS_TEST_SMALL_FS")
    if given:
        own = Path(tempfile.mkdtemp(prefix=f"{request.node.name[:40]}-", dir=given))
        try:
            yield own
        finally:
            shutil.rmtree(own, ignore_errors=True)
        return
    reason = "needs a small real filesystem: SPECOPS_TEST_SMALL_FS, or root to mount a tmpfs"
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    mount_dir = Path(tempfile.mkdtemp(prefix="specops-test-tmpfs-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_dir)], capture_output=True)
    if mounted.returncode != 0:
        mount_dir.rmdir()
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} ({mounted.stderr.decode().strip()})")
        pytest.skip(reason)
    try:
        yield mount_dir
    finally:
        subprocess.run(["umount", str(mount_dir)], check=False)
        mount_dir.rmdir()
