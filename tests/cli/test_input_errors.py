"""Bad input on the command line and damaged input files: one line on stderr in the user's words, a non-zero exit,
nothing created, never a traceback (the commands run with catch_exceptions=False: one would fail the test)."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from specops.agent.replay.golden import SCENARIOS
from specops.cli.main import app
from specops.cli.streams import OneLineErrors

pytestmark = pytest.mark.timeout(120)

GOLDEN = {s.name: s.path for s in SCENARIOS}
GOAL = "deploy SubSir/Kimi-K2.6-DFlash-tmp-long"


def invoke(*args: str):  # noqa: ANN201 - click's Result
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def assert_one_line(result, words: str, code: int = 2) -> str:
    """Exit `code`, one line on stderr saying `words`; no traceback, no usage block, no pydantic dump."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.stderr
    for internal in ("Traceback", "validation error for", "errors.pydantic.dev", "Aborted", "Usage:", "╭"):
        assert internal not in result.stderr, result.stderr
    return lines[0]


# --- flags ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("levels", "words"),
    [
        ("0", "--levels: 0 is not a concurrency; give positive integers separated by commas, e.g. 1,8,32"),
        ("1,,8", "--levels: '1,,8' has an empty item (item 2)"),
        ("1,8,", "--levels: '1,8,' has an empty item (item 3)"),
        ("", "--levels: no level given"),
        ("1,x", "--levels: 'x' is not a concurrency"),
        ("-4", "--levels: '-4' is not a concurrency"),
        ("8,8", "--levels: 8 is given twice"),
        ("5000", "--levels: 5000 is more than 4096 requests in flight"),
    ],
)
def test_bench_levels_are_refused_naming_the_flag(levels, words):
    assert_one_line(invoke("bench", "--host", "sim:/nonexistent", "--levels", levels), words)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bench", "--port", "0"], "--port: should be greater than or equal to 1 (got 0)"),
        (["bench", "--port", "abc"], "--port: should be a valid integer"),
        (["bench", "--rounds", "0"], "--rounds: should be greater than or equal to 1 (got 0)"),
        (["bench", "--requests", "5", "--duration", "3"], "give --requests or --duration, not both"),
        (
            ["accept", "--category", "poetry"],
            "--category item 1: should be 'gsm8k', 'math500', 'humaneval', 'mbpp', 'mt-bench', 'math', 'code' or "
            "'chat' (got 'poetry')",
        ),
        (["accept", "--concurrency", "0"], "--concurrency: should be greater than or equal to 1 (got 0)"),
        (["bench", "--levls", "1"], "No such option: --levls"),
        (["eval", "--repeat", "0"], "--repeat: should be greater than or equal to 1"),
        (["eval", "--pass-bar", "2"], "--pass-bar: should be less than or equal to 1"),
        (["sim", "up", "seed-ct200", "--time-scale", "0"], "--time-scale: 0.0 is not a time scale"),
        (["sim", "up", "seed-ct200", "--fault", "nope"], "--fault: no fault named 'nope'; known faults: full_disk"),
        (["sim", "up", "no-such-profile"], "no host profile 'no-such-profile'"),
        (["run"], "Missing argument"),
    ],
)
def test_tool_and_usage_errors_are_one_line_naming_the_flag(args, words):
    assert_one_line(invoke(*args), words)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--max-requests", "0"], "--max-requests: should be greater than or equal to 1 (got 0)"),
        (["--max-wall", "-1", "--max-tool-calls", "0"], "--max-tool-calls: should be greater than or equal to 1"),
        (["--max-cost", "nan"], "--max-cost: should be greater than 0 (got nan)"),
        (["--time-scale", "0"], "--time-scale: 0.0 is not a time scale"),
        (["--launch-wait", "0"], "--launch-wait: should be greater than 0 (got 0.0)"),
        (["--stall-wait", "0"], "--stall-wait: should be greater than 0 (got 0.0)"),
        (["--answers", "answers.json"], "--answers: answers are read only in the --ask-once round: add --ask-once"),
        (["--sim-fault", "bogus"], "--sim-fault: no fault named 'bogus'; known faults:"),
        (
            ["--sim-fault", "full_disk:colour=red"],
            "--sim-fault: fault 'full_disk:colour=red': colour: no such parameter",
        ),
        (["--host", "local", "--sim-fault", "full_disk"], "--sim-fault and --time-scale apply to sim:PROFILE hosts"),
        (["--host", "sim:no-such-profile"], "--host: no host profile 'no-such-profile'"),
        (["--host", "ssh://root@gpu;reboot"], "--host: host spec 'ssh://root@gpu;reboot' has ';' right after"),
        (["--host", "sim:/tmp/w$(id)"], "--host: host spec 'sim:/tmp/w$(id)' has '$' right after \"sim:/tmp/w\""),
        (["--allow-root", "relative"], "--allow-root: 'relative' is not a directory on the host"),
        (["--budget", "2x"], "--budget: '2x' is not a duration: write it as 2h, 90min, 1h30m or seconds"),
        (["--budget", "0h"], "--budget: '0h' is no time at all"),
    ],
)
def test_run_refuses_bad_flags_before_creating_anything(tmp_path, args, words):
    runs = tmp_path / "runs"
    assert_one_line(invoke("run", GOAL, "--runs-dir", str(runs), *args), words)
    assert not runs.exists()


@pytest.mark.parametrize("command", [["bench", "--levels", "1"], ["accept"]])
@pytest.mark.parametrize(
    ("host", "words"),
    [
        ("ssh://gpu;reboot", "host spec 'ssh://gpu;reboot' has ';' right after"),
        ("sim:", "sim: needs a running world's name"),
    ],
)
def test_the_tool_commands_refuse_a_host_that_names_none_as_run_does(command, host, words):
    """The same exit code as run's for what the user typed: 2, one line."""
    assert_one_line(invoke(command[0], *command[1:], "--host", host), words)


@pytest.mark.parametrize(
    ("goal", "words"),
    [
        ("foo/bar>/tmp/x", "error: the goal has '>' right after \"foo/bar\"; a repo id is letters, digits"),
        ("deploy foo/bar$IFS", "error: the goal has '$' right after \"foo/bar\""),
        ("deploy foo/bar\nrm -rf ~", 'error: the goal has a newline right after "deploy foo/bar"'),
    ],
)
def test_run_refuses_what_a_goal_cannot_mean(tmp_path, goal, words):
    runs = tmp_path / "runs"
    assert_one_line(invoke("run", goal, "--runs-dir", str(runs)), words)
    assert not runs.exists()


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("answers.json", b'{"Which port?": ', "is not valid JSON: Expecting value at line 1 column 17"),
        ("answers.yaml", b"- a\n b: [\n", "is not valid YAML:"),
        ("answers.yaml", b"just words\n", "holds str: expected a list of answers or a mapping"),
        ("answers.json", b"\xff\xfe", "is not UTF-8 text"),
        ("missing.json", None, "does not exist"),
    ],
)
def test_run_refuses_an_answers_file_it_cannot_read(tmp_path, name, content, words):
    answers = tmp_path / name
    if content is not None:
        answers.write_bytes(content)
    runs = tmp_path / "runs"
    line = assert_one_line(invoke("run", GOAL, "--ask-once", "--answers", str(answers), "--runs-dir", str(runs)), words)
    assert f"--answers: answers file {answers}" in line
    assert not runs.exists()


@pytest.mark.slow
def test_the_real_entry_point_prints_one_line_and_exits_2():
    done = subprocess.run(
        [sys.executable, "-m", "specops.cli.main", "bench", "--levels", "1,,8"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        "error: --levels: '1,,8' has an empty item (item 2); give positive integers separated by commas, e.g. 1,8,32"
    )


def test_an_abort_is_one_line_never_a_bare_aborted():
    group = typer.Typer(cls=OneLineErrors)

    @group.command()
    def ended() -> None:
        raise EOFError("the input ended")

    @group.command()
    def stopped() -> None:
        raise typer.Abort()

    result = CliRunner().invoke(group, ["ended"], catch_exceptions=False)
    assert (result.exit_code, result.stderr.strip()) == (1, "error: the input ended")  # after the prompt's newline
    result = CliRunner().invoke(group, ["stopped"], catch_exceptions=False)
    assert (result.exit_code, result.stderr.strip()) == (1, "error: aborted: no input")


def test_no_arguments_still_print_the_help():
    result = invoke()
    assert result.exit_code == 2 and "Commands" in result.output


# --- damaged files --------------------------------------------------------------------------------------------------


def _transcript() -> bytes:
    return gzip.decompress(GOLDEN["evaluate-acceptance"].read_bytes())


def _damaged() -> dict[str, tuple[str, bytes, str]]:
    """name -> (file name, bytes, what the error says)"""
    whole = _transcript()
    lines = whole.splitlines(keepends=True)
    return {
        "not-gzip": ("transcript.jsonl.gz", b"plain text, not gzip\n", "not a gzip file, though named .gz"),
        "truncated-gzip": ("transcript.jsonl.gz", gzip.compress(whole)[:300], "the gzip file is cut short (truncated)"),
        "damaged-gzip": ("transcript.jsonl.gz", _flipped(gzip.compress(whole)), "the gzip data is damaged"),
        "broken-line": (
            "transcript.jsonl",
            b"".join(lines[:3]) + b'{"oops\n' + b"".join(lines[3:6]),
            "transcript.jsonl:4: not a JSON line",
        ),
        "too-deep": ("transcript.jsonl", lines[0] + b"[" * 5000 + b"\n", "transcript.jsonl:2: not a JSON line"),
        "not-an-event": ("transcript.jsonl", lines[0] + b"[1, 2]\n", "an event is a JSON object, not list"),
        "lines-lost": ("transcript.jsonl", lines[0] + lines[2], "seq 2 where 1 was expected"),
    }


def _flipped(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


@pytest.mark.parametrize("damage", sorted(_damaged()))
@pytest.mark.parametrize("command", ["show", "replay", "resume"])
def test_damaged_transcripts_are_one_line_naming_the_file(tmp_path, command, damage):
    name, data, words = _damaged()[damage]
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    path = run_dir / name
    path.write_bytes(data)
    args = [command, str(run_dir)] + (["--runs-dir", str(tmp_path / "runs")] if command == "replay" else [])
    if command == "resume" and name.endswith(".gz"):
        words = "is a compressed (golden) transcript"  # resume continues transcript.jsonl only
    line = assert_one_line(invoke(*args), words)
    assert str(path) in line
    assert path.read_bytes() == data  # nothing appended, nothing cut
    assert not (tmp_path / "runs").exists()


def test_a_transcript_file_named_directly_is_read_the_same(tmp_path):
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00")  # a gzip header, then nothing
    assert_one_line(invoke("show", str(path)), f"{path}: the gzip file is cut short")


def test_a_damaged_simulated_world_is_one_line(tmp_path):
    state = tmp_path / ".sim" / "world.json"
    state.parent.mkdir()
    state.write_text('{"root": ')
    words = f"the simulated world at {tmp_path} cannot be used: {state} is damaged: not JSON"
    assert_one_line(invoke("bench", "--host", f"sim:{tmp_path}", "--levels", "1"), words, code=1)
    assert_one_line(invoke("sim", "exec", f"sim:{tmp_path}", "true"), f"{state} is damaged")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"gpus: [\n", "is not valid YAML: expected the node content, but found '<stream end>' at line 2 column 1"),
        (b"gpus: 2\n", "is not a host profile: name: Field required; description: Field required"),
    ],
)
def test_a_damaged_profile_file_is_one_line(tmp_path, content, words):
    profile = tmp_path / "mine.yaml"
    profile.write_bytes(content)
    assert_one_line(invoke("sim", "up", str(profile)), f"profile {profile} {words}")


def test_a_damaged_inventory_is_one_line(tmp_path, monkeypatch):
    inventory = tmp_path / "hosts.yaml"
    inventory.write_text("gpu-a:\n  url: ssh://root@10.0.0.1\n  keepalive_s: -1\n  colour: blue\n")
    monkeypatch.setenv("SPECOPS_INVENTORY", str(inventory))
    assert_one_line(
        invoke("bench", "--host", "gpu-a", "--levels", "1"),
        f"inventory entry 'gpu-a' in {inventory} is invalid: keepalive_s: should be greater than or equal to 0 "
        "(got -1); colour: is not a known setting",
    )


def test_eval_refuses_a_baseline_that_is_no_eval_report_before_running_anything(tmp_path):
    baseline = tmp_path / "eval-report.json"
    baseline.write_text("{not json")
    out = tmp_path / "out"
    assert_one_line(
        invoke("eval", "--baseline", str(baseline), "--out", str(out)), f"--baseline: {baseline} is not an eval-report"
    )
    assert not out.exists()


def test_show_html_where_nothing_can_be_written_is_one_line(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "transcript.jsonl.gz").write_bytes(GOLDEN["evaluate-acceptance"].read_bytes())
    target = tmp_path / "no-such-dir" / "page.html"
    assert_one_line(invoke("show", str(run_dir), "--html", str(target)), f"--html: cannot write {target}")


@pytest.mark.parametrize(
    ("run", "words"),
    [
        ("a\x00b", "error: RUN: embedded null byte"),
        ("x" * 5000, "error: cannot look at xxx"),  # a name too long for the file system
        ("no\nsuch", "error: no\\nsuch does not exist"),  # the newline written escaped: still one line
    ],
)
@pytest.mark.parametrize("command", ["show", "replay", "resume"])
def test_run_paths_no_file_can_have_are_one_line(command, run, words):
    assert_one_line(invoke(command, run), words)
