"""Where every command prints: its result on stdout, everything else on stderr.

The result is what a script captures with `specops ... > out`: a run's verdict, summary
and directory, a replay's verdict, a table, a rendering, `--json`. Progress, live views,
prompts, logs, warnings about the command itself and errors go to stderr, so a terminal
shows the same as before and a pipe gets the result alone. An error is one line on
stderr (`error: ...`) and a non-zero exit: the usage errors click and typer raise too
(a bad flag value, a missing argument), named by the flag the user typed (OneLineErrors).

Piped, these consoles do not wrap at rich's 80 columns, so a path or a message stays on
one line; in a terminal they wrap as rich always did.

Nothing a command writes shows a secret: every console here is a RedactingConsole, the
one-line errors and the logs on stderr go through the same redaction, and an unexpected
exception's traceback too. The command's redactor (output_redactor) knows the secrets the
environment names, the secret patterns of transcripts/redaction.py, and what the command
adds (a run's API key and Hub token); a run's own files have the run's redactor.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any, NoReturn

import click
import structlog
import typer
from pydantic import ValidationError
from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.protocol import rich_cast
from rich.rule import Rule
from rich.segment import Segment
from rich.text import Text
from typer.core import TyperGroup

from ..tools.inputs import one_line, validation_message
from ..transcripts.redaction import Redactor

# The click exceptions typer raises: its own copy of click (typer 0.2x vendors it as typer._click), else click's.
_click = importlib.import_module(
    "typer._click.exceptions" if importlib.util.find_spec("typer._click") is not None else "click.exceptions"
)
_ABORTS = (typer.Abort, getattr(_click, "Abort", typer.Abort))
_NO_ARGS_IS_HELP = getattr(_click, "NoArgsIsHelpError", ())  # click 8.2+: no arguments, so the help was asked for


class _CommandOutput:
    """The redactor of the command running in this process (see output_redactor)."""

    redactor: Redactor | None = None


_OUTPUT = _CommandOutput()


def output_redactor() -> Redactor:
    """The redactor everything this command prints goes through: made when the command starts (redact_output) from
    the environment as it is then; a command adds the secrets it finds to it (`add_secret`). Outside a command (a
    test printing through these consoles): a new one over the environment as it is now."""
    return _OUTPUT.redactor or Redactor()


def redact_output(ctx: click.Context | typer.Context) -> None:
    """A fresh output redactor for this command, dropped when it ends: the next command in this process (a test's)
    reads the environment anew."""
    _OUTPUT.redactor = Redactor()
    ctx.call_on_close(_forget_redactor)


def _forget_redactor() -> None:
    _OUTPUT.redactor = None


class RedactingConsole(Console):
    """A Console that takes secrets out of everything it writes.

    Every string and Text is redacted where it is rendered, at every depth of a renderable (table cells and titles,
    a live view's parts, progress columns), before wrapping, truncation or highlighting can split a secret; so are
    the titles panels and rules draw themselves. Then the text written is redacted once more, as a net for what
    a renderable draws without the console. `redactor` defaults to the command's (output_redactor), looked up each
    time, so the secrets a command adds after making its consoles are covered.
    """

    def __init__(self, *args: Any, redactor: Redactor | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.redactor = redactor

    @property
    def current_redactor(self) -> Redactor:
        return self.redactor or output_redactor()

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        renderable = rich_cast(renderable)
        if isinstance(renderable, (str, Text)):
            renderable = self._redacted(renderable)
        elif isinstance(renderable, Panel) and (renderable.title or renderable.subtitle):
            renderable = copy.copy(renderable)
            renderable.title = self._redacted(renderable.title) if renderable.title else renderable.title
            renderable.subtitle = self._redacted(renderable.subtitle) if renderable.subtitle else renderable.subtitle
        elif isinstance(renderable, Rule) and renderable.title:
            renderable = copy.copy(renderable)
            renderable.title = self._redacted(renderable.title)
        return super().render(renderable, options)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return self.current_redactor.redact_text(super()._render_buffer(buffer))

    def _redacted(self, renderable: str | Text) -> str | Text:
        redactor = self.current_redactor
        if isinstance(renderable, str):
            return redactor.redact_text(renderable)
        plain = renderable.plain
        clean = redactor.redact_text(plain)
        if clean == plain:
            return renderable
        # The styles' spans no longer fit the text: the text keeps its own style only.
        return Text(
            clean,
            style=renderable.style,
            justify=renderable.justify,
            overflow=renderable.overflow,
            no_wrap=renderable.no_wrap,
            end=renderable.end,
            tab_size=renderable.tab_size,
        )


def _console(*, stderr: bool, **kwargs: Any) -> Console:
    console = RedactingConsole(stderr=stderr, **kwargs)
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


def note_line(message: str) -> None:
    """`note: message` on stderr as one line: something a person should know that is not an error."""
    error_line(f"[yellow]note:[/yellow] {escape(message)}")


def error_line(markup: str, *, highlight: bool = False) -> None:
    """One line of markup on stderr, never wrapped (a terminal wraps it as it does any line).

    A control character in it (a newline in a file name the user gave, say) is written escaped, as `\\n`:
    the line stays one line and says what was there.
    """
    RedactingConsole(stderr=True, highlight=highlight, soft_wrap=True).print(_escaped_controls(markup))


def _escaped_controls(text: str) -> str:
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    return structlog.PrintLogger(sys.stderr)  # looked up per log call: the stream in place then


def _redact_log(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    return output_redactor()(logger, method_name, event_dict)


def logs_to_stderr(ctx: click.Context | typer.Context) -> None:
    """Send structlog to stderr for this command (its default logger prints to stdout), redacted.

    Only where nothing configured structlog: a run configures it to write run.log and
    log.jsonl (through the run's redactor). The defaults come back when the command ends,
    so a program (or test) that calls the CLI in-process is left as it was.
    """
    if structlog.is_configured():
        return
    *processors, renderer = structlog.get_config()["processors"]
    # An exception is rendered to text before redaction, so a secret in a traceback is caught too.
    structlog.configure(
        processors=[*processors, structlog.processors.format_exc_info, _redact_log, renderer],
        logger_factory=_stderr_logger,
    )
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
        except Exception:  # a bug: its traceback, as Python prints it, but redacted (a message may quote a secret)
            sys.stderr.write(output_redactor().redact_text(traceback.format_exc()))
            _exit(1)
        _exit(result if isinstance(result, int) else 0)


def _exit(code: int) -> NoReturn:
    sys.exit(code)
