"""The serving model between and beyond the calibrated points: through every point, rising, saturating."""

from __future__ import annotations

import pytest

from specops.sim.profiles import load_profile
from specops.sim.serving.performance import Launch, build_performance_model

PROFILE = load_profile("seed-ct200")
LAUNCHES = {
    "ep4": Launch(tp=8, ep=4),
    "ep8": Launch(tp=8, ep=8),
    "pp8": Launch(pp=8),
    "dflash_ep4": Launch(tp=8, ep=4, speculative_algorithm="DFLASH"),
}


@pytest.mark.parametrize("name", list(LAUNCHES))
def test_the_curve_goes_through_its_points_and_stays_sensible_between_and_beyond(name):
    model = build_performance_model(PROFILE.serving, LAUNCHES[name], 8 if "dflash" in name else 1)
    config = model.choice.speculative or model.choice.parallel
    points = config.throughput.known_points()
    for concurrency, tok_s in points:
        assert model.step_time.throughput(concurrency) == pytest.approx(tok_s)
    # Between two points the figure lies between theirs (the curve is piecewise linear in step time).
    for (c0, t0), (c1, t1) in zip(points, points[1:], strict=False):
        middle = model.step_time.throughput((c0 + c1) / 2)
        assert min(t0, t1) * 0.999 <= middle <= max(t0, t1) * 1.001 or c0 == 1
    # Below the first point: fewer requests, less throughput, never zero.
    assert 0 < model.step_time.throughput(0.5) < points[0][1]
    # Beyond the last: still rising (more requests batch together) but saturating, not exploding.
    last_c, last = points[-1]
    beyond = [model.step_time.throughput(last_c * k) for k in (2, 4, 8)]
    assert last <= beyond[0] <= beyond[1] <= beyond[2]
    gains = [beyond[0] - last, beyond[1] - beyond[0], beyond[2] - beyond[1]]
    assert gains[0] >= gains[1] >= gains[2]  # each doubling of the load adds less
    assert beyond[2] < 2.5 * last
    # A step is never faster than at C=1.
    assert all(model.step_time(n) >= model.step_time(1) * 0.999 for n in (2, 16, 256, 2048))
