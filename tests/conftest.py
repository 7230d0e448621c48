"""Shared test settings: no real model calls, no network beyond loopback (but for pip fetching the SGLang
release wheels that tests/sglang_releases/test_committed_data.py checks the committed facts against)."""

import os

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
