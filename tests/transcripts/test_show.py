"""`specops show`: the terminal timeline, and the HTML page opened in headless Chromium (what it shows, offline)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specops.agent.final import FinalAnswer
from specops.agent.replay.golden import SCENARIOS
from specops.agent.report import build_report, write_report
from specops.cli.main import app
from specops.transcripts import read_transcript
from specops.transcripts.timeline import build_timeline

from ..needs import missing

GOLDEN = {s.name: s.path for s in SCENARIOS}


def _run_dir(tmp_path: Path, golden: Path, *, keep_lines: int | None = None, report: bool = True) -> Path:
    """A run directory from a golden transcript (cut after `keep_lines` events), with its report and plots written."""
    lines = gzip.decompress(golden.read_bytes()).decode().splitlines(keepends=True)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "transcript.jsonl").write_text("".join(lines[:keep_lines]))
    if report:
        events = read_transcript(run_dir / "transcript.jsonl").events
        final_call = [
            p
            for e in events
            if e.type == "model_response"
            for p in e.response["parts"]
            if p.get("tool_name") == "final_result"
        ][-1]
        write_report(
            run_dir, build_report(events, FinalAnswer.model_validate(final_call["args"]), status=events[-1].status)
        )
    return run_dir


def test_terminal_shows_plan_calls_failures_and_the_report(tmp_path):
    out = CliRunner().invoke(app, ["show", str(GOLDEN["incompatible-drafter"])], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    text = out.output
    assert "deploy and benchmark SubSir/Kimi-K2.6-DFlash-bad-layers" in text and "failed" in text
    assert "[x] facts" in re.sub(r"\s+", " ", text)  # the plan, with each item's state
    assert re.search(r"read_drafter_config\s+[\d.]+ s\s+incompatible_drafter", text), text  # a failure, its kind
    assert re.search(r"host_facts\s+[\d.]+ s\s+ok", text)
    assert "unresolved:" in text and "final answer" in text


def test_terminal_shows_a_run_that_was_cut_off(tmp_path):
    golden = GOLDEN["evaluate-acceptance"]
    events = read_transcript(golden).events
    wait = next(e for e in events if e.type == "tool_call" and e.tool == "wait_download")
    run_dir = _run_dir(tmp_path, golden, keep_lines=wait.seq + 1, report=False)
    out = CliRunner().invoke(app, ["show", str(run_dir)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "did not finish" in out.output and "specops resume" in out.output
    assert re.search(r"wait_download\s+cut off", out.output)


def test_a_cut_last_line_is_said_in_one_line_and_the_report_beside_it_is_shown(tmp_path):
    """The run_end line was cut mid-write (report.md and report.json were already written): show says so in one
    line and shows the report's facts from report.json, not "the run did not finish"."""
    golden = GOLDEN["incompatible-drafter"]
    run_dir = _run_dir(tmp_path, golden)
    transcript = run_dir / "transcript.jsonl"
    whole = transcript.read_text().splitlines(keepends=True)
    transcript.write_text("".join(whole[:-1]) + whole[-1][: len(whole[-1]) // 2])  # run_end, half written
    out = CliRunner().invoke(app, ["show", str(run_dir)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    notes = [line for line in out.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "its last line was cut after event" in notes[0], out.stderr
    assert "did not finish" not in out.stdout and "no report" not in out.stdout
    assert "unresolved:" in out.stdout and "failed" in out.stdout
    replayed = CliRunner().invoke(app, ["replay", str(run_dir)])
    assert [line for line in replayed.stderr.splitlines() if "its last line was cut" in line], replayed.stderr


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        missing(
            "chromium is not installed",
            "run `bash tests/run.sh` as root (it installs Debian's chromium), or apt-get install chromium",
        )
    return found


@pytest.mark.slow
def test_html_page_is_self_contained_and_shows_the_run_in_chromium(tmp_path):
    golden = GOLDEN["evaluate-full-disk-broken-cli"]
    run_dir = _run_dir(tmp_path, golden)
    plots = sorted(p.name for p in run_dir.glob("*.png"))
    assert plots, "the report wrote no plot to embed"
    page = tmp_path / "out.html"
    out = CliRunner().invoke(app, ["show", str(run_dir), "--html", str(page)])
    assert out.exit_code == 0, out.output
    source = page.read_text()
    # One file, nothing fetched: no external scripts, styles, images or links.
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?!data:|#)""", source)
    assert "<link" not in source and "@import" not in source

    dom = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-extensions",
            "--no-first-run",
            "--virtual-time-budget=5000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout

    timeline = build_timeline(read_transcript(golden).events)
    # The inline script ran: it drew one bar per todo, and every embedded plot decoded into an image.
    assert f'data-rendered="{len(timeline.todos)}"' in dom
    assert len(re.findall(r'<div class="bar (?:completed|cancelled|pending|in_progress)"', dom)) == len(timeline.todos)
    assert f'data-plots-shown="{len(plots)}"' in dom
    # What a reader sees: the status, the goal, every step as an expandable element, the report.
    assert re.search(r'id="run-status">completed<', dom)
    assert timeline.goal in dom
    assert len(re.findall(r'<details class="step', dom)) == len(timeline.entries)
    free = next(e for e in timeline.entries if e.kind == "call" and e.title == "free_space")
    step = re.search(rf'<details class="step kind-call" data-seq="{free.seq}".*?</details>', dom, re.S).group(0)
    assert "free_space" in step and "dry_run" in step  # its arguments are inside, shown when opened
    assert 'id="final-answer"' in dom and "acceptance length (overall)" in dom
    assert "request mean" in dom and 'id="report-md"' in dom
    report = json.loads((run_dir / "report.json").read_text())
    assert report["run"]["goal"] in dom
