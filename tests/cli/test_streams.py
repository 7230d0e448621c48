"""Every command: its result on stdout, progress, live views and logs on stderr, an error as one line on stderr.

`specops run` goes through the quick path the eval's cannot-do-goal scenario takes (the playbook refuses a
fine-tuning goal after one model turn, on a simulated host started for the run): a few seconds.
"""

from __future__ import annotations

import gzip
import json
import shutil
import signal
import socket
import subprocess
from types import SimpleNamespace

import pytest
import structlog
from typer.testing import CliRunner

import specops.cli.accept as accept_cli
import specops.cli.bench as bench_cli
from specops.agent.replay.golden import SCENARIOS
from specops.cli.main import app
from specops.tools.hosts import ssh

from ..jobs import job_timeout, started_job
from ..tools.worlds import start_world
from .terminal import SPECOPS, run_on_a_terminal

pytestmark = [job_timeout(), pytest.mark.slow]  # runs and evals, each a whole job: only a hang fails

GOLDEN = {s.name: s.path for s in SCENARIOS}
QUICK_GOAL = "fine-tune SubSir/Kimi-K2.6-DFlash-tmp-long on my logs"  # refused by the playbook: a quick run


def invoke(*args: str):  # noqa: ANN201 - click's Result, stdout and stderr apart
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def assert_error(result, code: int, words: str) -> None:
    """Exit `code`, nothing on stdout, one line on stderr that says `words`."""
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == "", result.stdout
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- run ----------------------------------------------------------------------------------------------------------


def test_run_prints_its_verdict_on_stdout_and_its_live_view_on_the_terminal(tmp_path):
    """stderr a terminal, stdout a pipe (`specops run ... > out`): the live view stays on the terminal."""
    code, out, err = run_on_a_terminal(["run", QUICK_GOAL, "--runs-dir", str(tmp_path)])
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert code == 1, (out, err)  # the playbook's cannot_do: a failed run
    lines = out.splitlines()
    assert lines[0] == f"run {run_dir.name}: failed — the policy ended with status cannot_do", out
    assert lines[-2] == f"transcript and report: {run_dir}", out  # one line, not wrapped
    # The cause and what to do instead, last and once.
    assert lines[-1].startswith("why: the goal asks to train or fine-tune") and out.count("the goal asks") == 1, out
    assert "steps done" in err and "tool calls" in err, err  # the live view
    assert "steps done" not in out and "\x1b[" not in out and "transcript and report" not in err


def test_run_json_is_the_report_alone_on_stdout(tmp_path):
    result = invoke("run", QUICK_GOAL, "--runs-dir", str(tmp_path), "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["run"]["status"] == "failed" and report["run"]["policy_status"] == "cannot_do"
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("goal", "words"),
    [
        ("deploy the drafter", "error: the goal names no drafter repo and no target model to find one for"),
        (
            "deploy the drafter org/[/data]",
            "error: the goal has '[' right after \"org/\"",
        ),  # not read as markup
    ],
)
def test_run_refused_is_one_line_on_stderr(tmp_path, goal, words):
    assert_error(invoke("run", goal, "--runs-dir", str(tmp_path)), 2, words)
    assert list(tmp_path.iterdir()) == []


def test_run_with_a_policy_it_cannot_use_is_one_line_on_stderr(tmp_path):
    result = invoke(
        "run", "deploy SubSir/Kimi-K2.6-DFlash-tmp-long", "--model", "nope:nothing", "--runs-dir", str(tmp_path)
    )
    assert_error(result, 2, "error: cannot use policy 'nope:nothing'")


# --- resume, replay, show -----------------------------------------------------------------------------------------


def test_resume_of_a_run_whose_host_is_gone_is_one_line_and_changes_nothing(tmp_path):
    """A run cut off after its first events whose simulated host is gone: refused on stderr, nothing written."""
    lines = gzip.decompress(GOLDEN["evaluate-acceptance"].read_bytes()).decode().splitlines(keepends=True)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "transcript.jsonl").write_text("".join(lines[:3]))
    result = invoke("resume", str(run_dir))
    assert_error(result, 2, "cannot be reached")
    assert result.stdout == "" and (run_dir / "transcript.jsonl").read_text() == "".join(lines[:3])
    assert [p.name for p in run_dir.iterdir()] == ["transcript.jsonl"]


def test_resume_refused_is_one_line_on_stderr(tmp_path):
    assert_error(invoke("resume", str(tmp_path)), 2, "holds no transcript.jsonl")


def test_replay_prints_its_verdict_on_stdout(tmp_path):
    result = invoke("replay", str(GOLDEN["incompatible-drafter"]))
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == 1 and "no divergence in" in result.stdout and result.stderr == ""


def test_replay_refused_is_one_line_on_stderr(tmp_path):
    assert_error(invoke("replay", str(tmp_path / "nope")), 2, "error: ")
    assert_error(invoke("replay", str(GOLDEN["incompatible-drafter"]), "--live-tools"), 2, "--host")


def test_show_prints_the_timeline_or_where_the_page_went_on_stdout(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(GOLDEN["incompatible-drafter"], run_dir / "transcript.jsonl.gz")
    shown = invoke("show", str(run_dir))
    assert shown.exit_code == 0 and "Timeline" in shown.stdout and shown.stderr == "", shown.output
    page = tmp_path / "page.html"
    written = invoke("show", str(run_dir), "--html", str(page))
    assert written.exit_code == 0 and written.stdout.startswith(f"wrote {page} (") and written.stderr == ""
    assert page.exists()


def test_show_refused_is_one_line_on_stderr(tmp_path):
    assert_error(invoke("show", str(tmp_path / "nope")), 2, "error: ")


# --- doctor, bench, accept ----------------------------------------------------------------------------------------


def test_doctor_prints_its_findings_on_stdout_and_progress_on_stderr():
    with start_world() as world:
        result = invoke("doctor", world.host_spec)
    assert result.exit_code == 1, result.output  # the seed host's problems are findings: on stdout
    assert "RTX PRO 6000" in result.stdout and "problem(s):" in result.stdout and "98% full" in result.stdout
    assert result.stderr.strip() == f"reached {world.host_spec}" and "reached" not in result.stdout


def test_doctor_on_a_host_it_cannot_reach_is_one_line_on_stderr():
    assert_error(invoke("doctor", "sim:/nonexistent/world"), 2, "cannot reach sim:/nonexistent/world: ")


def _logging_tool(result):  # noqa: ANN001, ANN202
    """A call_tool that logs on the way, as the SSH backend does on a reconnect, then returns `result`."""

    def call_tool(host, tool, args):  # noqa: ANN001, ANN202
        ssh.log.warning("ssh.reconnect", host=host, attempt=2)
        return result

    return call_tool


def _ms(value: float) -> SimpleNamespace:
    return SimpleNamespace(p50_ms=value, p99_ms=value)


BENCH = SimpleNamespace(
    host="sim",
    port=30000,
    api="sglang",
    client="host",
    server_version="0.5.23",
    warnings=["level 64 is client-bound"],
    method="m",
    model_dump_json=lambda indent: '{"port": 30000}',
    levels=[
        SimpleNamespace(
            concurrency=1,
            achieved_concurrency=1.0,
            output_tok_s=94.0,
            output_tok_s_ci95=(93.0, 95.0),
            request_rate_per_s=0.4,
            ttft=_ms(20),
            tpot=_ms(10),
            itl_per_token=_ms(10),
            inter_chunk_gap=_ms(10),
            e2e=_ms(2500),
            tokens_per_chunk=1.0,
            accept_length=None,
            requests_failed=0,
            unstable=False,
            client=None,
        )
    ],
)
_OVERALL = SimpleNamespace(
    category="overall",
    thinking=None,
    prompts=8,
    request_mean=3.7,
    request_mean_ci95=None,
    token_weighted=3.6,
    token_weighted_ci95=(3.5, 3.7),
)
ACCEPT = SimpleNamespace(
    host="sim",
    port=30000,
    speculative_algorithm="DFLASH",
    block_size=8,
    server_version="0.5.23",
    categories=[],
    overall=_OVERALL,
    overall_by_thinking=[],
    warning=None,
    method="m",
    model_dump_json=lambda indent: '{"port": 30000}',
)


@pytest.mark.parametrize(
    ("command", "module", "result", "words"),
    [
        ("bench", bench_cli, BENCH, "TTFT p50"),
        ("accept", accept_cli, ACCEPT, "request mean"),
    ],
)
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_bench_and_accept_print_the_result_on_stdout_and_logs_on_stderr(
    monkeypatch, command, module, result, words, as_json
):
    monkeypatch.setattr(module, "call_tool", _logging_tool(result))
    done = invoke(command, *(["--json"] if as_json else []))
    assert done.exit_code == 0, done.output
    if as_json:
        assert json.loads(done.stdout) == {"port": 30000}
    else:
        assert words in done.stdout and done.stdout.rstrip().endswith("method: m")
    assert "ssh.reconnect" in done.stderr and "ssh.reconnect" not in done.stdout  # structlog: stderr
    assert not structlog.is_configured()  # as it was before the command


@pytest.mark.parametrize("command", [["bench", "--levels", "1"], ["accept"]])
def test_bench_and_accept_on_a_host_that_does_not_answer_is_one_line_on_stderr(command):
    assert_error(invoke(*command, "--host", f"ssh://root@127.0.0.1:{_closed_port()}"), 1, "error: ")


def test_bad_arguments_are_on_stderr():
    result = invoke("bench", "--levels", "x")
    assert result.exit_code == 2 and result.stdout == "" and "--levels: 'x' is not a concurrency" in result.stderr


# --- eval ---------------------------------------------------------------------------------------------------------


def test_eval_prints_its_table_on_stdout_and_progress_on_stderr(tmp_path):
    result = invoke("eval", "--scenario", "cannot-do-goal", "--jobs", "1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "cannot-do-goal" in result.stdout and "1/1 scenario runs pass" in result.stdout
    assert f"wrote {tmp_path / 'eval-report.json'}" in result.stdout and "running 1 scenario" not in result.stdout
    assert result.stderr.startswith("running 1 scenario(s) x 1, 1 at once"), result.stderr


def test_eval_that_cannot_run_is_one_line_on_stderr(tmp_path):
    assert_error(
        invoke("eval", "--scenario", "no-such-thing", "--out", str(tmp_path)), 2, "eval could not run: no scenario in"
    )


# --- sim ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "words"), [("profiles", "seed-ct200"), ("faults", "full_disk")])
def test_sim_lists_on_stdout(command, words):
    result = invoke("sim", command)
    assert result.exit_code == 0 and words in result.stdout and result.stderr == ""


def test_sim_up_prints_its_json_line_on_stdout():
    with started_job(
        [*SPECOPS, "sim", "up", "seed-ct200"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        summary = json.loads(process.stdout.readline())
        assert summary["profile"] == "seed-ct200" and summary["host"].startswith("sim:seed-ct200-")
        process.send_signal(signal.SIGINT)
        rest, err = process.communicate(timeout=60)
    assert process.returncode == 0 and rest == "" and err == "", (rest, err)


def test_sim_errors_are_one_line_on_stderr(tmp_path):
    assert_error(invoke("sim", "up", "no-such-profile"), 2, "error: ")
    assert_error(invoke("sim", "exec", f"sim:{tmp_path}", "--", "true"), 2, "error: ")
