"""configure_logging: the run's logs go to its files, and closing them leaves logging as it was before the run."""

from __future__ import annotations

import structlog

from specops.transcripts import configure_logging


def test_closing_the_run_logs_puts_structlog_back_as_it_was(tmp_path):
    """A command after an in-process run (or a second run) logs where it did before, not into a closed run's files."""
    structlog.reset_defaults()
    with configure_logging(tmp_path) as logs:
        assert structlog.is_configured()
        structlog.get_logger("t").info("inside the run")
    assert "inside the run" in logs.human.read_text()
    assert not structlog.is_configured()
    structlog.configure(logger_factory=structlog.PrintLoggerFactory())
    before = structlog.get_config()
    with configure_logging(tmp_path):
        pass
    assert structlog.get_config() == before
    structlog.reset_defaults()
