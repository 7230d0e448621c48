"""Short handles: servers and downloads named s1, d1 in the order they started; unknown ids refused with the known ones."""

from __future__ import annotations

import pytest

from specops.tools.handles import RunHandles, UnknownHandle
from specops.tools.sglang import RunningServer, ServerInfoSummary
from specops.tools.sglang.config import ServerConfig


def _server(pid: int) -> RunningServer:
    return RunningServer(
        host="sim:x",
        pid=pid,
        pgid=pid,
        started_at="2026-01-01T00:00:00Z",
        argv=["python3"],
        log_path="/x.log",
        port=30000,
        base_url="http://127.0.0.1:30000",
        config=ServerConfig(model_path="/m"),
        ready_after_s=1.0,
        info=ServerInfoSummary.from_server_info({}),
    )


def test_ids_count_up_in_start_order_and_name_the_object():
    handles = RunHandles()
    first, second = handles.add_server(_server(10)), handles.add_server(_server(11))
    assert (first.id, second.id) == ("s1", "s2") and handles.server("s2").pid == 11
    handles.mark_stopped("s1")
    assert [s.id for s in handles.running()] == ["s2"]


def test_an_unknown_id_is_refused_with_what_the_run_has():
    handles = RunHandles()
    handles.add_server(_server(10))
    with pytest.raises(UnknownHandle) as refused:
        handles.server("s9")
    assert refused.value.details["known"] == ["s1"] and "s1" in refused.value.what
    with pytest.raises(UnknownHandle, match="no downloads"):
        handles.download("d1")


def test_restore_rebuilds_from_recorded_outcomes_and_a_failed_restart_stopped_its_server():
    live = RunHandles()
    s1 = live.add_server(_server(10)).model_dump(mode="json")
    s2 = live.add_server(_server(11)).model_dump(mode="json")
    restored = RunHandles()
    restored.restore(
        [
            ("launch_server", True, s1),
            ("launch_server", True, s2),
            ("stop_server", True, {"server": "s1", "pid": 10}),
            ("restart_server", False, {"kind": "launch_failed", "details": {"stopped_server": "s2"}}),
        ]
    )
    assert set(restored.servers) == {"s1", "s2"} and restored.running() == []
    assert restored.add_server(_server(12)).id == "s3"  # the next id follows the recorded ones
