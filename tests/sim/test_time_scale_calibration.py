"""The quick run's time scale: the calibration rule on given figures, and a world that records its choice."""

from __future__ import annotations

import pytest

from specops.sim.profiles import load_profile
from specops.sim.world import calibration
from specops.sim.world.calibration import Measured, Peak, TimeScaleChoice, choose_time_scale, peak_load
from specops.sim.world.world import SimWorld

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)

PEAK = Peak(chunks_s=1000.0, config="busy", concurrency=256, single_stream_tok_s=128.0)  # a 64-token answer: 0.5 s


def measured(chunks_s: float, overhead_ms: float) -> Measured:
    return Measured(
        sustained_chunks_s=chunks_s,
        request_overhead_s=overhead_ms / 1000,
        tokens_per_chunk=4.0,
        client_cpu_fraction=0.5,
        seconds=3.0,
    )


def test_the_stream_bound_keeps_the_peak_within_the_headroom_of_what_was_sustained():
    # 20,000 chunks/s sustained, 40% of it for a peak of 1,000 per modelled second: 8x; requests allow far more.
    choice = choose_time_scale(PEAK, measured(20_000, overhead_ms=0.1), most=100)
    assert choice.by_stream == pytest.approx(8.0)
    assert choice.time_scale == 8.0 and choice.bound == "stream"


def test_the_request_bound_keeps_a_single_streams_overhead_a_small_share_of_an_answer():
    # 1.5% of a 0.5 s answer is 7.5 ms modelled; 1.5 ms of this machine's per request allows 5x.
    choice = choose_time_scale(PEAK, measured(1_000_000, overhead_ms=1.5), most=100)
    assert choice.by_requests == pytest.approx(5.0)
    assert choice.time_scale == 5.0 and choice.bound == "requests"


def test_the_scale_is_rounded_down_capped_by_the_profile_and_never_below_the_floor():
    assert choose_time_scale(PEAK, measured(16_000, overhead_ms=0.1), most=100).time_scale == 6.0  # 6.4x -> 6
    capped = choose_time_scale(PEAK, measured(1_000_000, overhead_ms=0.01), most=8)
    assert capped.time_scale == 8.0 and capped.bound == "profile"
    slow = choose_time_scale(PEAK, measured(500, overhead_ms=50), most=8)
    assert slow.time_scale == calibration.MIN_TIME_SCALE and slow.bound == "floor"


def test_the_choice_describes_its_measurement_and_rule():
    choice = choose_time_scale(PEAK, measured(20_000, overhead_ms=0.1), most=100)
    text = choice.describe()
    assert "20,000 chunks/s" in text and "8x (stream bound)" in text
    facts = choice.facts()
    assert facts["time_scale"] == 8.0 and facts["measured"]["sustained_chunks_s"] == 20_000
    assert facts["rule"]["stream_headroom"] == calibration.STREAM_HEADROOM


def test_the_profiles_peak_is_its_busiest_autoregressive_layout_and_fastest_single_stream():
    peak = peak_load(load_profile("seed-ct200"))
    assert (peak.config, peak.concurrency, peak.chunks_s) == ("ep8_dp_attention", 256, 1745.0)
    assert peak.single_stream_tok_s == 132.0  # eagle3_tp8 at C=1


def test_a_quick_world_records_the_scale_it_chose(monkeypatch):
    profile = load_profile("seed-ct200")
    choice = choose_time_scale(peak_load(profile), measured(9_000, overhead_ms=0.2), most=profile.sim.fast_time_scale)
    seen = []

    def fake(p):
        seen.append(p.name)
        return choice

    monkeypatch.setattr("specops.sim.world.world.calibrated_time_scale", fake)
    with SimWorld.start_fast(profile) as world:
        assert seen == ["seed-ct200"]
        assert world.state.time_scale == choice.time_scale == 2.0  # 40% of 9,000 / 1,745 = 2.06 -> 2
        summary = world.summary()
        assert summary["time_scale"] == 2.0 and "2x (stream bound)" in summary["time_scale_choice"]
        assert summary["calibration"]["measured"]["sustained_chunks_s"] == 9_000
        assert type(world.state).load(world.root).time_scale_choice == world.state.time_scale_choice  # world.json


def test_an_explicit_scale_is_kept_without_calibration(monkeypatch):
    def fail(_):
        raise AssertionError("an explicit scale must not calibrate")

    monkeypatch.setattr("specops.sim.world.world.calibrated_time_scale", fail)
    with SimWorld.start_fast("seed-ct200", time_scale=3.0) as world:
        assert world.state.time_scale == 3.0 and "time_scale_choice" not in world.summary()


def test_a_cached_calibration_is_reused_within_the_process(monkeypatch):
    profile = load_profile("seed-ct200")
    calls = []

    def fake_measure(p, peak):
        calls.append(peak)
        return measured(9_000, overhead_ms=0.2)

    monkeypatch.setattr(calibration, "measure", fake_measure)
    monkeypatch.setattr(calibration, "_cache", {})
    first = calibration.calibrated_time_scale(profile)
    assert isinstance(first, TimeScaleChoice)
    assert calibration.calibrated_time_scale(profile) is first and len(calls) == 1


def test_the_measurement_runs_the_simulator_and_the_benchmark_client_here():
    profile = load_profile("seed-ct200")
    figures = calibration.measure(profile, peak_load(profile))  # a few seconds; the figures are this machine's
    assert figures.sustained_chunks_s > 0 and figures.request_overhead_s >= 0 and figures.tokens_per_chunk >= 1
