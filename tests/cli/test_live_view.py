"""The live view of `specops run`: bars for downloads and sweeps, drawn from the events the recorder writes."""

from __future__ import annotations

from rich.console import Console

from specops.cli.live_view import LiveView
from specops.transcripts import Recorder, TodoChangeEvent, TodoItem, ToolCallEvent, ToolResultEvent


def _render(view: LiveView) -> str:
    console = Console(record=True, width=140, force_terminal=False)
    console.print(view)
    return console.export_text()


def test_download_and_sweep_bars_follow_the_events(tmp_path):
    view = LiveView()
    with Recorder(tmp_path / "t.jsonl", "run-live", environ={}, fsync=False) as recorder:

        def record(cls, **fields):
            view.on_event(recorder.record(cls, **fields))

        record(
            TodoChangeEvent,
            todos=[TodoItem(id="download", content="Download the drafter", status="in_progress", priority="high")],
            changes=[],
        )
        status = {
            "repo_id": "SubSir/Kimi-K2.6-DFlash-tmp-long",
            "target_dir": "/data/dflash",
            "state": "running",
            "expected_bytes": 8_000_000_000,
            "done_bytes": 2_000_000_000,
        }
        record(ToolCallEvent, call_id="c1", tool="download_status", args={})
        record(
            ToolResultEvent, call_id="c1", tool="download_status", ok=True, result=status, duration_s=0.1, host="sim"
        )
        record(ToolCallEvent, call_id="c2", tool="benchmark", args={"port": 30000, "levels": [1, 32, 64]})
        running = _render(view)
        assert (
            "download SubSir/Kimi-K2.6-DFlash-tmp-long" in running and "2.0/8.0 GB" in running and "running" in running
        )
        assert "benchmark port 30000" in running and "0/3 levels" in running
        assert "[>] Download the drafter" in running

        record(
            ToolResultEvent,
            call_id="c2",
            tool="benchmark",
            ok=True,
            duration_s=2.0,
            host="sim",
            result={"levels": [{}, {}, {}], "best_output_tok_s": 1465.3, "best_at_concurrency": 64},
        )
        record(
            ToolResultEvent,
            call_id="c1",
            tool="download_status",
            ok=True,
            duration_s=0.1,
            host="sim",
            result={**status, "state": "finished", "done_bytes": 8_000_000_000},
        )
    done = _render(view)
    assert "3/3 levels" in done and "best 1465 tok/s at C=64" in done
    assert "8.0/8.0 GB" in done and "finished" in done
    assert "2 tool calls · 0 failed" in done


def test_a_failed_sweep_says_so(tmp_path):
    view = LiveView()
    with Recorder(tmp_path / "t.jsonl", "run-live", environ={}, fsync=False) as recorder:
        view.on_event(
            recorder.record(ToolCallEvent, call_id="c9", tool="benchmark", args={"port": 30001, "levels": [1]})
        )
        died = {"kind": "server_died", "what": "the server died", "remedy": "read its log"}
        view.on_event(
            recorder.record(
                ToolResultEvent, call_id="c9", tool="benchmark", ok=False, error=died, duration_s=1.0, host="sim"
            )
        )
    assert "failed: server_died" in _render(view)
