"""A server is ready when its ready line says, not when a poll happens to see it (readiness.ready_at)."""

from __future__ import annotations

import time

import pytest

from specops.tools.hosts import LocalHost
from specops.tools.sglang.readiness import READY_LINE, ready_at


@pytest.fixture(scope="module")
def host():
    with LocalHost() as local:
        yield local


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def test_the_host_reads_its_own_stamps(host):
    assert host.time_of_stamp("2026-12-07 14:40:01") == time.mktime(
        time.strptime("2026-12-07 14:40:01", "%Y-%m-%d %H:%M:%S")
    )


def test_ready_is_the_middle_of_the_stamped_second_however_late_the_poll(host):
    start = 1_800_000_000.25
    text = f"[{_stamp(start + 40)} TP0] Capture cuda graph end.\n[{_stamp(start + 60)}] {READY_LINE}\n"
    # Seen 25 s late (a slow link, a busy host): still ready at the stamp, 60 s after the launch.
    assert ready_at(host, text, start=start, seen_at=start + 85) == pytest.approx(start + 60.25)
    # Never later than the poll that saw it, nor before the launch.
    assert ready_at(host, text, start=start, seen_at=start + 60.1) == start + 60.1
    quick = f"[{_stamp(start)}] {READY_LINE}\n"
    assert ready_at(host, quick, start=start + 0.4, seen_at=start + 2) == start + 0.4


def test_a_line_without_its_stamp_or_from_an_earlier_run_is_seen_when_polled(host):
    start = 1_800_000_000.0
    assert ready_at(host, f"{READY_LINE}\n", start=start, seen_at=start + 9) == start + 9
    earlier = f"[{_stamp(start - 3600)}] {READY_LINE}\n"
    assert ready_at(host, earlier, start=start, seen_at=start + 9) == start + 9
