"""A secret planted in every input specops takes shows in no output channel: terminal, logs, transcript, report, HTML.

The inputs: the model's API key (in the variable --api-key-env names, and echoed back by a server that refuses it with
401, as OpenAI's "Incorrect API key provided: sk-..." does), HF_TOKEN in the environment, the Hub token file
(HF_TOKEN_PATH: huggingface_hub reads it when imported, so each command is a fresh process), an --answers file, and
the goal itself. The outputs: the command's stdout and stderr (its stderr a terminal, so the live view draws), every
file of the run directory (transcript, logs, report.json, report.md, todos.json, the plots), and `specops show RUN`
in the terminal and as an HTML page.

Two runs: an openai-chat model against a scripted server that asks its questions (answered from the file) and is then
refused with 401 echoing the key (a few seconds), and the quick playbook on a simulated host with a Hub emulator,
which lists and downloads with the token from the token file. Then each sink on its own, in-process: the consoles,
error lines, logs on stderr, an unexpected exception, the verdict, the report files and the HTML page.

The one other key file specops takes, an SSH identity (IdentityFile, ssh options' key_filename), is handed to
paramiko by path and never read by specops itself.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import secrets
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import click
import pytest
import structlog
import typer
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from specops.agent.final import FinalAnswer
from specops.agent.report import build_report, write_report
from specops.agent.run import RunOutcome
from specops.cli.run import print_outcome
from specops.cli.streams import (
    OneLineErrors,
    RedactingConsole,
    error_line,
    logs_to_stderr,
    output_redactor,
    progress_console,
    redact_output,
    result_console,
)
from specops.transcripts.redaction import Redactor
from specops.transcripts.show_html import render_html
from specops.transcripts.timeline import Timeline

from ..agent.chat_server import ScriptedChatServer, calls, invalid_api_key
from ..jobs import job_timeout, run_job
from .terminal import SPECOPS, run_on_a_terminal

# A whole run each (the playbook's takes minutes on a busy machine): only a hang fails.
pytestmark = [job_timeout(), pytest.mark.slow]

REPO = "SubSir/Kimi-K2.6-DFlash-tmp-long"
QUICK = "playbook:levels=1;ar_layouts=1;spec_layouts=1;acceptance_prompts=4"
HUB_TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "HF_TOKEN_PATH", "OPENAI_API_KEY")


def _alnum(n: int) -> str:
    return secrets.token_hex(n // 2 + 1)[:n]


@dataclass(frozen=True)
class Planted:
    """One distinct, recognisable random value per input."""

    api_key: str = field(default_factory=lambda: f"sk-proj-{_alnum(40)}")
    env_token: str = field(default_factory=lambda: f"hf_{_alnum(34)}")
    # The Hub emulator grants gated repos to hf_granted_ tokens; no pattern knows this shape: only its value can hide it.
    file_token: str = field(default_factory=lambda: f"hf_granted_{_alnum(30)}")
    answer_token: str = field(default_factory=lambda: f"ghp_{_alnum(36)}")
    goal_token: str = field(default_factory=lambda: f"hf_{_alnum(34)}")

    def found_in(self, text: str) -> list[str]:
        return [name for name, value in vars(self).items() if value in text]


def _environment(tmp_path: Path, planted: Planted, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in HUB_TOKEN_VARIABLES and not k.startswith("SPECOPS_")}
    token_file = tmp_path / "hub-token"
    token_file.write_text(planted.file_token + "\n")
    return env | {"HF_HOME": str(tmp_path / "hf-home"), "HF_TOKEN_PATH": str(token_file), "TERM": "xterm", **extra}


def _specops(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_job([*SPECOPS, *args], env=env)


def _file_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", errors="replace")


def _channels(tmp_path: Path, run_dir: Path, env: dict[str, str], out: str, err: str) -> dict[str, str]:
    """Every output of the run and of `specops show` on it, by where it went."""
    channels = {"run: stdout": out, "run: stderr (terminal)": err}
    for path in sorted(run_dir.rglob("*")):
        if path.is_file():
            channels[f"run dir: {path.relative_to(run_dir)}"] = _file_text(path)
    shown = _specops(["show", str(run_dir), "--verbose"], env)
    assert shown.returncode == 0, shown.stderr
    channels |= {"show: stdout": shown.stdout, "show: stderr": shown.stderr}
    page = tmp_path / "page.html"
    written = _specops(["show", str(run_dir), "--html", str(page)], env)
    assert written.returncode == 0, written.stderr
    channels |= {"show --html: stdout": written.stdout, "show --html: stderr": written.stderr}
    channels["show --html: the page"] = page.read_text(encoding="utf-8")
    return channels


def _assert_no_secret(channels: dict[str, str], planted: Planted) -> None:
    leaks = {channel: planted.found_in(text) for channel, text in channels.items()}
    leaks = {channel: names for channel, names in leaks.items() if names}
    assert not leaks, "secrets leaked: " + "; ".join(f"{channel}: {', '.join(n)}" for channel, n in leaks.items())


def _the_run(runs: Path) -> Path:
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    return run_dir


@pytest.mark.parametrize(
    ("key_env", "key_shape"),
    [
        ("MY_KEY", "sk-proj-{}"),  # the issue's: a variable whose name says key, a key of OpenAI's shape
        ("LLM_GATEWAY", "gw{}"),  # neither the name nor the value gives it away: only --api-key-env does
    ],
)
def test_a_refused_model_key_and_every_other_secret_stay_out_of_every_output(tmp_path, key_env, key_shape):
    """openai-chat: the model asks its questions (answered from the file), then its server refuses the key with 401,
    echoing it back."""
    planted = Planted(api_key=key_shape.format(_alnum(40)))
    answers = tmp_path / "answers.yaml"
    answers.write_text(f'- "use my GitHub token {planted.answer_token} for the private fork"\n')
    asked = calls(("ask_user", {"questions": ["Which token should I use for the private fork?"]}))
    env = _environment(tmp_path, planted, **{key_env: planted.api_key}, HF_TOKEN=planted.env_token)
    goal = f"deploy and benchmark {REPO} with token {planted.goal_token}"
    with ScriptedChatServer([asked, invalid_api_key()]) as server:
        code, out, err = run_on_a_terminal(
            [
                "run",
                goal,
                "--model",
                "openai-chat:gpt-test",
                "--base-url",
                server.base_url,
                "--api-key-env",
                key_env,
                "--ask-once",
                "--answers",
                str(answers),
                "--runs-dir",
                str(tmp_path / "runs"),
            ],
            env,
        )
    # The scenario happened: the key was sent, refused and echoed; the answer went to the model.
    assert [r.status for r in server.requests] == [200, 401], (out, err)
    assert server.requests[1].headers["Authorization"] == f"Bearer {planted.api_key}"
    assert planted.answer_token in str(server.requests[1].messages)
    assert code == 1 and "why: " in out and "401" in out and "steps done" in err, (out, err)
    _assert_no_secret(_channels(tmp_path, _the_run(tmp_path / "runs"), env, out, err), planted)


def test_a_playbook_run_with_the_hub_token_file_shows_no_secret(tmp_path):
    """The playbook on a simulated host: the Hub token comes from the token file (the run lists and downloads the
    repo from the Hub emulator with it)."""
    planted = Planted()
    env = _environment(tmp_path, planted, OPENAI_API_KEY=planted.api_key)
    goal = f"deploy and benchmark {REPO} (my token is {planted.goal_token})"
    code, out, err = run_on_a_terminal(
        ["run", goal, "--model", QUICK, "--host", "sim:seed-ct200", "--runs-dir", str(tmp_path / "runs")],
        env,  # a whole run: what is checked is what it printed, never how long it took
    )
    run_dir = _the_run(tmp_path / "runs")
    assert "steps done" in err and f"transcript and report: {run_dir}" in out, (code, out, err)
    assert (run_dir / "report.md").exists() and (run_dir / "run.log").exists()
    _assert_no_secret(_channels(tmp_path, run_dir, env, out, err), planted)


# --- each sink on its own: what a new code path printing a secret would go through ----------------------------------

KEY = "gw" + "3f9c0a7e1b2d4c6e8a0b2d4f6a8c0e2a4c"  # a shape no pattern knows: hidden as a known value only


def test_every_console_hides_a_known_secret_however_it_is_drawn():
    """Strings, markup, Text with styles, table cells and titles, panel and rule titles, JSON, log lines, a live
    display: on a narrow terminal, where wrapping, truncation and highlighting would split a secret."""
    buffer = io.StringIO()
    console = RedactingConsole(file=buffer, width=24, force_terminal=True, redactor=Redactor([KEY], environ={}))
    console.print(f"the key is [bold]{KEY}[/bold] 12345")
    console.print(Text.assemble(("goal ", "dim"), f"with {KEY}", style="bold"))
    table = Table(title=f"title {KEY}")
    table.add_column(f"column {KEY}")
    table.add_row(f"cell {KEY}")
    table.add_row(Text(f"text {KEY}", style="red"))
    console.print(table)
    console.print(Panel(f"in {KEY}", title=f"title {KEY}", subtitle=Text(KEY)))
    console.rule(f"rule {KEY}")
    console.print_json(data={"key": KEY})
    console.log(f"log {KEY}")
    console.out(f"out {KEY}")
    with Live(Text(f"live {KEY}"), console=console, refresh_per_second=20):
        pass
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())
    assert "REDACTED" in drawn
    assert KEY[:10] not in re.sub(r"[^A-Za-z0-9]", "", drawn), drawn  # not even a piece of it, across lines


def test_the_consoles_errors_and_logs_of_a_command_use_its_redactor(capsys):
    """Secrets a command adds after it made its consoles (a run's API key) are hidden on stdout and stderr, in an
    error line and in structlog's lines on stderr, with an exception's traceback."""
    with click.Context(click.Command("test")) as ctx:
        redact_output(ctx)
        logs_to_stderr(ctx)
        out, err = result_console(), progress_console()
        output_redactor().add_secret(KEY, "LLM_GATEWAY")
        out.print(f"why: {KEY}")
        err.print(f"progress {KEY}")
        error_line(f"[red]error:[/red] {KEY}")
        try:
            raise RuntimeError(f"refused {KEY}")
        except RuntimeError:
            structlog.get_logger().exception("request failed", key=KEY)
    captured = capsys.readouterr()
    assert "[REDACTED:LLM_GATEWAY]" in captured.out and "[REDACTED:LLM_GATEWAY]" in captured.err
    assert "RuntimeError" in captured.err and "request failed" in captured.err
    assert KEY not in captured.out + captured.err, captured


def test_an_unexpected_exception_is_a_redacted_traceback(monkeypatch):
    monkeypatch.setenv("SPECOPS_TEST_TOKEN", KEY)
    app = typer.Typer(cls=OneLineErrors, pretty_exceptions_enable=False)

    @app.callback()
    def _before(ctx: typer.Context) -> None:
        redact_output(ctx)

    @app.command()
    def boom() -> None:
        raise RuntimeError(f"the server said: {KEY}")

    result = CliRunner().invoke(app, ["boom"], catch_exceptions=False)
    assert result.exit_code == 1
    assert (
        "Traceback" in result.stderr and "RuntimeError: the server said: [REDACTED:SPECOPS_TEST_TOKEN]" in result.stderr
    )
    assert KEY not in result.stderr + result.stdout


def test_print_outcome_hides_the_commands_secrets(tmp_path):
    outcome = RunOutcome(run_id="r", run_dir=tmp_path, status="failed", reason=f"401: {KEY}", final=None)
    buffer = io.StringIO()
    print_outcome(outcome, RedactingConsole(file=buffer, redactor=Redactor([KEY], environ={})))
    assert "why: 401: [REDACTED]" in buffer.getvalue() and KEY not in buffer.getvalue()


def test_the_report_files_and_the_html_page_are_redacted(tmp_path):
    """write_report with the run's redactor, render_html with the viewer's: a secret in the report's words (its
    notes, the final answer) or in the timeline (a reason) is in neither."""
    redactor = Redactor([KEY], environ={})
    final = FinalAnswer(status="failed", summary=f"the key {KEY} was refused", unresolved=[f"fix {KEY}"])
    report = build_report([], final, status="failed")
    paths = write_report(tmp_path, report, redactor=redactor)
    for path in (paths["json"], paths["markdown"]):
        assert KEY not in path.read_text(encoding="utf-8") and "[REDACTED]" in path.read_text(encoding="utf-8")
    timeline = Timeline(
        run_id="r",
        goal=f"deploy with {KEY}",
        policy="playbook",
        host="sim:/root",
        started=datetime.now(UTC),
        duration_s=1.0,
        status="failed",
        reason=f"401: {KEY}",
        entries=[],
        todos=[],
        model_turns=1,
        tool_calls=0,
        failures=0,
        recovered=0,
    )
    (tmp_path / "report.md").write_text(f"# report\n{KEY}\n", encoding="utf-8")
    page = render_html(timeline, tmp_path, redactor=redactor)
    assert KEY not in page and "401: [REDACTED]" in page
