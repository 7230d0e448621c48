"""A run's logs, beside its transcript: `run.log` for people, `log.jsonl` for machines.

Both go through structlog with the same redaction as the transcript (pass the
recorder's Redactor, so secrets added during the run are covered in both).
Records from other libraries' stdlib loggers (httpx, paramiko, ...) go to the
same files, through the same redaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from .redaction import Redactor

HUMAN_LOG = "run.log"
MACHINE_LOG = "log.jsonl"


@dataclass
class RunLogs:
    """The handlers `configure_logging` installed; `close()` flushes and removes them."""

    human: Path
    machine: Path
    handlers: tuple[logging.Handler, ...]
    previous_root_level: int
    # structlog's configuration before the run (None: it had none), put back by close() so that a program running
    # several runs in-process, or a command after one, logs as it did before.
    previous_structlog: dict[str, Any] | None = None

    def close(self) -> None:
        root = logging.getLogger()
        for handler in self.handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(self.previous_root_level)
        if self.previous_structlog is None:
            structlog.reset_defaults()
        else:
            structlog.configure(**self.previous_structlog)

    def __enter__(self) -> RunLogs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def configure_logging(run_dir: str | Path, *, redactor: Redactor | None = None, level: int = logging.INFO) -> RunLogs:
    """Send structlog and stdlib logging at `level` and above to run_dir/run.log and run_dir/log.jsonl.

    `redactor` defaults to a new one over the environment. Configuring again
    (the next run in the same process) replaces structlog's configuration;
    close the previous RunLogs to stop writing to its files.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    redactor = redactor or Redactor()
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    # Exceptions are rendered to text before redaction, so a secret in a traceback is caught too.
    shared_tail: list[structlog.typing.Processor] = [
        structlog.stdlib.ProcessorFormatter.remove_processors_meta,
        structlog.processors.format_exc_info,
        redactor,
    ]
    pre_chain: list[structlog.typing.Processor] = [
        structlog.stdlib.add_logger_name,
        structlog.stdlib.add_log_level,
        timestamper,
    ]

    def handler(path: Path, renderer: structlog.typing.Processor) -> logging.Handler:
        out = logging.FileHandler(path, encoding="utf-8")
        out.setLevel(level)
        out.setFormatter(
            structlog.stdlib.ProcessorFormatter(processors=[*shared_tail, renderer], foreign_pre_chain=pre_chain)
        )
        return out

    handlers = (
        handler(
            run_dir / HUMAN_LOG,
            structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback),
        ),
        handler(run_dir / MACHINE_LOG, structlog.processors.JSONRenderer(ensure_ascii=False)),
    )
    root = logging.getLogger()
    previous_root_level = root.level
    previous_structlog = structlog.get_config() if structlog.is_configured() else None
    for installed in handlers:
        root.addHandler(installed)
    if root.getEffectiveLevel() > level:
        root.setLevel(level)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.filter_by_level,
            *pre_chain,
            structlog.stdlib.PositionalArgumentsFormatter(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    return RunLogs(
        human=run_dir / HUMAN_LOG,
        machine=run_dir / MACHINE_LOG,
        handlers=handlers,
        previous_root_level=previous_root_level,
        previous_structlog=previous_structlog,
    )
