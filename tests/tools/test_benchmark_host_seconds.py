"""The benchmark converts no time: its figures are in the seconds of the clock its client read.

A client on the host reads the host's clock (on a simulated host, the one the host's python gives its programs:
sim/host/host_time.py); a local client reads this machine's, and where the host's clock advanced materially more or
less over the run, the result says its figures are not the host's seconds.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from specops.tools.benchmark import BenchmarkArgs, sweep
from specops.tools.benchmark.sweep import _clock_warning, _timed_local_run, client_config
from specops.tools.hosts import HostError


def test_open_loop_rates_go_to_the_client_as_asked() -> None:
    args = BenchmarkArgs(levels=[4], rates=[2.5, 10.0], duration_s=1.0)
    levels = client_config(args, "http://127.0.0.1:30000")["levels"]
    assert [level["rate"]["per_s"] for level in levels] == [2.5, 10.0]


def test_a_local_client_whose_seconds_were_the_hosts_gets_no_warning() -> None:
    assert _clock_warning("ssh://gpu", None) == []
    assert _clock_warning("ssh://gpu", (61.2, 60.0)) == []  # two readings over SSH: a round trip apart
    assert _clock_warning("ssh://gpu", (1.9, 0.5)) == []  # a short run: within the readings' round trips


def test_a_local_client_whose_seconds_were_not_the_hosts_says_so() -> None:
    (warning,) = _clock_warning("sim:seed-ct200", (80.0, 10.0))
    assert "advanced 80.0 s while this machine's advanced 10.0 s" in warning and "client='host'" in warning


class _Host:
    def __init__(self, readings: list[float] | None) -> None:
        self.readings = readings

    def clock(self) -> float:
        if self.readings is None:
            raise HostError("no date here", host="fake")
        return self.readings.pop(0)


def test_the_local_run_is_bracketed_by_the_hosts_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep, "run_client", lambda ctx, args, config: {"levels": []})
    args = BenchmarkArgs(levels=[1], client="local")
    raw, clocks = _timed_local_run(SimpleNamespace(host=_Host([1000.0, 1040.0])), args, {})  # type: ignore[arg-type]
    assert raw == {"levels": []} and clocks is not None and clocks[0] == pytest.approx(40.0)
    _, unread = _timed_local_run(SimpleNamespace(host=_Host(None)), args, {})  # type: ignore[arg-type]
    assert unread is None  # a host whose clock cannot be read: no comparison, no warning
