"""The performance model over real HTTP: seed-ct200's TP and PP calibration comes back out.

Each configuration runs as a real `launch_server` process; a plain aiohttp client
measures steady-state tok/s at each calibrated concurrency and divides by time_scale.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .serving_calibration import check_autoregressive_calibration

pytestmark = [pytest.mark.serial, pytest.mark.slow]  # measures time: run alone (tests/run.sh)


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["tp8_no_graphs", "tp8_tuned", "pp8"])
def test_autoregressive_calibration(tmp_path: Path, name: str) -> None:
    check_autoregressive_calibration(tmp_path, name)
