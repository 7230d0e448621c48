"""Shared test settings: no real model calls, no network beyond loopback (but for pip fetching the SGLang
release wheels that tests/sglang_releases/test_committed_data.py checks the committed facts against)."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from specops.cli.simulated_hosts import offer_simulated_hosts

from .jobs import SUITE_VARIABLE, end_marked
from .needs import missing

offer_simulated_hosts()  # the tests open `sim:` hosts as the CLI does

# Real model requests are never made from tests (pydantic-ai's switch).
try:
    from pydantic_ai import models

    models.ALLOW_MODEL_REQUESTS = False
except ImportError:  # pragma: no cover - pydantic-ai is a hard dependency
    pass

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_DISABLE_UPDATE_CHECK", "1")

# Every process the suite starts carries SUITE_VARIABLE=<this run's id> (inherited: whatever a test starts, and what
# that starts on simulated hosts); when the suite ends, those still alive are killed (pytest_sessionfinish). The id
# is made by the process pytest was started as and handed to xdist's workers in _SUITE_ID, which is no mark: a worker
# sets the mark in its own environment once started, so that only what it starts carries it, never the worker.
# A pytest started by a test (its environment already marked) guards nothing: the outer suite does.
_SUITE_ID = "PYTEST_SPECOPS_SUITE_ID"
_NESTED = SUITE_VARIABLE in os.environ
os.environ.setdefault(_SUITE_ID, uuid.uuid4().hex)


def _guards() -> bool:
    """Whether this process ends the suite's leftovers: the process pytest was started as, not a worker of it."""
    return not _NESTED and not os.environ.get("PYTEST_XDIST_WORKER")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _NESTED:
        return
    distributing = session.config.pluginmanager.hasplugin("dsession")  # xdist's controller: it runs no test
    if os.environ.get("PYTEST_XDIST_WORKER") or not distributing:
        os.environ[SUITE_VARIABLE] = os.environ[_SUITE_ID]
    if _guards():
        # Stopped from outside (`timeout`, CI cancelling the job): what the suite started goes with it.
        signal.signal(signal.SIGTERM, lambda signum, _frame: _end_leftovers(session, then_die_of=signum))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Kill what the suite started and left running (a test that timed out, a run killed mid-way), and say what."""
    if _guards():
        _end_leftovers(session)


def _end_leftovers(session: pytest.Session, then_die_of: int | None = None) -> None:
    ended = end_marked(SUITE_VARIABLE, os.environ[_SUITE_ID], worlds=True)
    capture = session.config.pluginmanager.get_plugin("capturemanager")
    if then_die_of is not None and capture is not None:
        capture.suspend_global_capture(in_=True)  # mid-test: the lines go to the terminal, not into a test's capture
    if ended:
        lines = [f"tests/conftest.py: killed {len(ended)} process(es) the suite left running:", *ended]
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in lines:
            if reporter is not None and then_die_of is None:
                reporter.write_line(line, yellow=True)
            else:
                print(line, file=sys.stderr, flush=True)
    if then_die_of is not None:
        signal.signal(then_die_of, signal.SIG_DFL)
        os.kill(os.getpid(), then_die_of)


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

    Without either the test fails (tests/needs.py), or, for a user who is not root (CI always is), is skipped."""
    given = os.environ.get("SPECOPS_TEST_SMALL_FS")
    if given:
        own = Path(tempfile.mkdtemp(prefix=f"{request.node.name[:40]}-", dir=given))
        try:
            yield own
        finally:
            shutil.rmtree(own, ignore_errors=True)
        return
    reason = "needs a small real filesystem: SPECOPS_TEST_SMALL_FS, or root to mount a tmpfs"
    remedy = "run `bash tests/run.sh` as root (it mounts one and names it in SPECOPS_TEST_SMALL_FS)"
    if os.geteuid() != 0:
        missing(reason, remedy)
    mount_dir = Path(tempfile.mkdtemp(prefix="specops-test-tmpfs-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_dir)], capture_output=True)
    if mounted.returncode != 0:
        mount_dir.rmdir()
        missing(f"{reason} (mount failed: {' '.join(mounted.stderr.decode().split())})", remedy)
    try:
        yield mount_dir
    finally:
        subprocess.run(["umount", str(mount_dir)], check=False)
        mount_dir.rmdir()
