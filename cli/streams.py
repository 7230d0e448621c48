"""Where every command prints: its result on stdout, everything else on stderr.

The result is what a script captures with `specops ... > out`: a run's verdict, summary
and directory, a replay's verdict, a table, a rendering, `--json`. Progress, live views,
prompts, logs, warnings about the command itself and errors go to stderr, so a terminal
shows the same as before and a pipe gets the result alone. An error is one line on
stderr (`error: ...`) and a non-zero exit: the usage errors click and typer raise too
(a bad flag value, a missing argument), named by the flag the user typed (OneLineErrors).

Piped, these consoles do not wrap at rich's 80 columns, so a path or a message stays on
one line; in a terminal they wrap as rich always did.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click
import structlog
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from ..tools.inputs import one_line, validation_message

# The click exceptions typer raises: its own copy of click (typer 0.2x vendors it as typer._click), else click's.
_click = importlib.import_module(
    "typer._click.exceptions" if importlib.util.find_spec("typer._click") is not None else "click.exceptions"
)
_ABORTS = (typer.Abort, getattr(_click, "Abort", typer.Abort))
_NO_ARGS_IS_HELP = getattr(_click, "NoArgsIsHelpError", ())  # click 8.2+: no arguments, so the help was asked for


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
    """One line of markup on stderr, never wrapped (a terminal wraps it as it does any line).

    A control character in it (a newline in a file name the user gave, say) is written escaped, as `\\n`:
    the line stays one line and says what was there.
    """
    Console(stderr=True, highlight=highlight, soft_wrap=True).print(_escaped_controls(markup))


def _escaped_controls(text: str) -> str:
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


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


def usage_error_line(error: Any) -> str:
    """A click/typer usage error as one line in the user's words: `--levels: 0 is not a concurrency; ...`."""
    param = getattr(error, "param", None)
    if isinstance(error, _click.BadParameter) and not isinstance(error, _click.MissingParameter) and param:
        if param.param_type_name == "option":
            name = next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])
        else:  # an argument, as the docstrings name them: RUN, GOAL
            name = (param.name or "argument").upper()
        cause = error.__cause__  # typer converts values with pydantic: say what was given
        said = validation_message(cause) if isinstance(cause, ValidationError) else error.message
        message = f"{name}: {said}"
    else:
        message = error.format_message()
    if isinstance(error, _click.UsageError) and error.ctx is not None:
        message = f"{message.rstrip('.')} (see `{error.ctx.command_path} --help`)"
    return one_line(message)


class OneLineErrors(TyperGroup):
    """The `specops` group: every error it ends with is one line on stderr and a non-zero exit.

    Click prints a usage error as a usage line, a hint and the error (typer as a box of them); here it is
    `error: --flag: what is wrong (see `specops cmd --help`)`, exit 2. An Abort (Ctrl-D at a prompt) is
    `error: ...` and exit 1, never a bare "Aborted.". No arguments still prints the help.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, windows_expand_args, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except _NO_ARGS_IS_HELP as error:
            error.show()
            _exit(error.exit_code)
        except _click.ClickException as error:
            error_line(f"[red]error:[/red] {escape(usage_error_line(error))}")
            _exit(error.exit_code)
        except _ABORTS as error:
            cause = error.__cause__
            said = one_line(str(cause)) if cause is not None else ""
            error_line(f"[red]error:[/red] {escape(said or 'aborted: no input')}")
            _exit(1)
        _exit(result if isinstance(result, int) else 0)


def _exit(code: int) -> NoReturn:
    sys.exit(code)
