"""Where every command prints: its result on stdout, everything else on stderr.

The result is what a script captures with `specops ... > out`: a run's verdict, summary
and directory, a replay's verdict, a table, a rendering, `--json`. Progress, live views,
prompts, logs, warnings about the command itself and errors go to stderr, so a terminal
shows the same as before and a pipe gets the result alone. An error is one line on
stderr (`error: ...`) and a non-zero exit.

Piped, these consoles do not wrap at rich's 80 columns, so a path or a message stays on
one line; in a terminal they wrap as rich always did.
"""

from __future__ import annotations

import sys
from typing import Any

import click
import structlog
import typer
from rich.console import Console
from rich.markup import escape


def _console(*, stderr: bool, **kwargs: Any) -> Console:
    console = Console(stderr=stderr, **kwargs)
    if not console.is_terminal:
        console.soft_wrap = True
    return console


def result_console(**kwargs: Any) -> Console:
    """stdout: the command's result."""
    return _console(stderr=False, **kwargs)


def progress_console(**kwargs: Any) -> Console:
    """stderr: progress, live views and errors."""
    return _console(stderr=True, **kwargs)


def fail(message: str, code: int = 2, *, label: str = "error:", highlight: bool = False) -> typer.Exit:
    """Print `label message` on stderr as one line, never wrapped (the message taken literally, not as markup).

    Returns the Exit to raise: `raise fail(...) from None`.
    """
    error_line(f"[red]{label}[/red] {escape(message)}", highlight=highlight)
    return typer.Exit(code=code)


def error_line(markup: str, *, highlight: bool = False) -> None:
    """One line of markup on stderr, never wrapped (a terminal wraps it as it does any line)."""
    Console(stderr=True, highlight=highlight, soft_wrap=True).print(markup)


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    return structlog.PrintLogger(sys.stderr)  # looked up per log call: the stream in place then


def logs_to_stderr(ctx: click.Context) -> None:
    """Send structlog to stderr for this command (its default logger prints to stdout).

    Only where nothing configured structlog: a run configures it to write run.log and
    log.jsonl. The defaults come back when the command ends, so a program (or test)
    that calls the CLI in-process is left as it was.
    """
    if structlog.is_configured():
        return
    structlog.configure(logger_factory=_stderr_logger)
    ctx.call_on_close(structlog.reset_defaults)
