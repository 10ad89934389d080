"""Burst vs sustained: the load phase on synthetic clock, throttle and sample series.

The device models are shaped like what `benchmarks/timing/probe_power_state.py` recorded on an
H100 (8192³ bf16: 1376 µs per call at boost, a dip when the 1 s-average power reaches the limit,
then 1580 → 1613 µs while the board heats): every expected number below is read off the model,
not computed by the code under test.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec
import pytest
from timing_fakes import FakeClock, ModelTimer

from gpuscope.errors import ConfigError
from gpuscope.timing import harness, loop, sustain
from gpuscope.timing.clocks import NullMonitor, PollingMonitor, amd_watts
from gpuscope.timing.diagnostics import warnings_for
from gpuscope.timing.layout import measurement_rows
from gpuscope.timing.measurement import ClockSample, Environment, Measurement, from_json
from gpuscope.timing.record import to_json
from gpuscope.timing.sustain import SustainRule

ENV = Environment(vendor="nvidia", device="H100", python="3", platform="test", gpuscope="0")
BOOST, STEADY = 1376.0, 1613.0
LIMIT_W = 700.0


def h100(t: float) -> float:
    """Per-call µs of an 8192³ GEMM at fake time t (the load starts at ~0.02 s)."""
    if t < 0.10:
        return BOOST
    if t < 0.75:
        return 1513.0
    if t < 1.10:
        return 1850.0
    if t < 1.60:
        return 1530.0
    if t < 2.00:
        return 1760.0
    if t < 5.00:
        return 1580.0 + (STEADY - 1580.0) * (t - 2.0) / 3.0
    return STEADY


def h100_reading(
    clock: FakeClock, capped_from: float = 0.15, drawing_from: float = 0.05
) -> Callable[[], ClockSample]:
    def read() -> ClockSample:
        t = clock.t
        return ClockSample(
            t_s=t,
            sm_mhz=round(1980.0 * BOOST / h100(t)),
            reasons=0x4 if t >= capped_from else 0,
            power_w=min(LIMIT_W, 120.0 + 600.0 * t),
            power_now_w=820.0 if t >= drawing_from else 120.0,
        )

    return read


def light_reading(clock: FakeClock) -> Callable[[], ClockSample]:
    def read() -> ClockSample:
        return ClockSample(t_s=clock.t, sm_mhz=1980.0, reasons=0, power_w=250.0, power_now_w=300.0)

    return read


def _bench(
    model: Callable[[float], float],
    reading: Callable[[FakeClock], Callable[[], ClockSample]] | None,
    **options: object,
) -> Measurement:
    clock = FakeClock()
    monitor = (
        PollingMonitor("fake", reading(clock), clock, 0.02, power_limit_w=LIMIT_W)
        if reading is not None
        else NullMonitor()
    )
    timer = ModelTimer(model, clock)
    return harness.bench(
        print, timer=timer, clock=clock, env=ENV, monitor=monitor, name="m", **options
    )


def test_a_power_capped_gemm_is_reported_at_its_sustained_time() -> None:
    m = _bench(h100, h100_reading)
    p = m.power
    assert p is not None
    assert (p.requested, p.reported, p.stop) == ("sustained", "sustained", "stable")
    assert m.stats.median == STEADY  # the model's settled value, not the 1376 µs burst
    assert p.burst_median_us == BOOST
    assert 5.0 <= p.load_s <= 7.0  # the model settles at 5 s; windows of 1 s must agree
    assert p.load_calls == math.ceil(25_000 / BOOST)  # ~25 ms samples under load
    assert m.calls_per_sample == p.load_calls
    assert "clock-event reasons: software power cap" in p.signals
    assert f"power 820 W ≥ 90% of the {LIMIT_W:.0f} W limit" in p.signals
    assert p.sampled_mhz == round(1980.0 * BOOST / STEADY)
    assert p.power_limit_w == LIMIT_W
    # sampling lasts at least one window after the load, with no pause
    assert m.stats.n * m.calls_per_sample * STEADY * 1e-6 >= 1.0


def test_no_stop_while_the_power_controller_still_swings() -> None:
    # 0.5 s at 1565 µs, 0.5 s at 1667 µs (H100 8192³, 3–5 s into the load): 1-s means agree
    # from the start, but a median of such a window lands on one half; from 6 s on it is flat
    def swinging(t: float) -> float:
        if t < 0.1:
            return BOOST
        if t >= 6.0:
            return STEADY
        return 1565.0 if (t % 1.0) < 0.5 else 1667.0

    m = _bench(swinging, h100_reading)
    p = m.power
    assert p is not None and p.reported == "sustained"
    assert p.load_s >= 6.0
    assert m.stats.median == STEADY
    pairs = zip(p.windows_us, p.window_medians_us, strict=True)
    swing_windows = [w for w, med in pairs if med != w]
    assert all(abs(w / 1616.0 - 1) < 0.01 for w in swing_windows[1:])  # means: throughput


def test_sustained_state_says_which_figure_the_median_is() -> None:
    m = _bench(h100, h100_reading)
    lines = warnings_for(m)
    assert lines[0].startswith("power-limited (clock-event reasons: software power cap")
    assert "the median is the SUSTAINED figure" in lines[0]
    assert f"a short burst gets 1376 µs ({BOOST / STEADY - 1:+.1%})" in lines[0]
    assert not any(line.startswith("throttling during the run") for line in lines)
    rows = dict(measurement_rows(m))
    assert rows["power state"].startswith("sustained (power-limited")
    assert rows["burst median"].startswith("1.376 ms  (-14.7%)")


def test_light_work_stops_after_the_probe_and_reports_unlimited() -> None:
    m = _bench(lambda t: 10.0, light_reading)
    p = m.power
    assert p is not None
    assert (p.reported, p.stop, p.signals) == ("unlimited", "no-limit", ())
    assert 0.5 <= p.load_s < 0.5 + 256 * 10e-6 * 2  # the probe, to within one sample
    assert m.calls_per_sample == 50  # back to the burst's 500 µs samples
    assert m.stats.median == 10.0
    assert warnings_for(m) == []


def test_a_cap_left_by_earlier_work_does_not_count() -> None:
    # light work right after a heavy GEMM (seen on an H100): the probe still reads the software
    # power cap and a 665 W one-second average; the instantaneous power is low
    def read_after_heavy(clock: FakeClock) -> Callable[[], ClockSample]:
        def read() -> ClockSample:
            left = clock.t < 0.7
            return ClockSample(
                t_s=clock.t,
                sm_mhz=1440.0 if left else 1980.0,
                reasons=0x4 if left else 0,
                power_w=665.0 - 300.0 * clock.t,
                power_now_w=300.0,
            )

        return read

    m = _bench(lambda t: 10.0, read_after_heavy)
    assert m.power is not None
    assert (m.power.reported, m.power.signals) == ("unlimited", ())


def test_without_a_monitor_drift_alone_finds_the_limit_after_a_longer_probe() -> None:
    m = _bench(lambda t: 100.0 if t < 0.3 else 110.0, None)
    p = m.power
    assert p is not None
    assert p.reported == "sustained"
    assert p.signals == ("per-call time +10.0% against the burst",)
    assert m.stats.median == 110.0
    assert p.load_s >= SustainRule().probe_average_s  # no instantaneous power: 1.5 s probe


def test_without_a_monitor_a_constant_time_is_unlimited_after_the_longer_probe() -> None:
    m = _bench(lambda t: 100.0, None)
    assert m.power is not None and m.power.reported == "unlimited"
    assert SustainRule().probe_average_s <= m.power.load_s < 1.6


def test_windows_that_never_agree_end_at_the_budget_as_unsettled() -> None:
    def swinging(t: float) -> float:
        return 1500.0 if t < 0.1 or int(t) % 2 == 0 else 1700.0

    m = _bench(swinging, h100_reading, sustain_budget_s=4.0)
    p = m.power
    assert p is not None
    assert (p.reported, p.stop) == ("unsettled", "budget")
    assert 4.0 <= p.load_s < 4.1
    assert "not settled after" in warnings_for(m)[0]


def test_state_both_keeps_a_collected_burst_beside_the_sustained_samples() -> None:
    m = _bench(h100, h100_reading, state="both")
    p = m.power
    assert p is not None
    assert (p.requested, p.reported) == ("both", "sustained")
    assert len(p.burst_us) >= 10 and set(p.burst_us) == {BOOST}
    assert m.stats.median == STEADY


def test_state_both_on_light_work_reports_the_burst_samples() -> None:
    m = _bench(lambda t: 10.0, light_reading, state="both")
    p = m.power
    assert p is not None
    assert p.reported == "unlimited"
    assert m.samples_us == p.burst_us
    assert p.sampled_from_s is None


def test_state_burst_runs_no_load_phase_and_says_so() -> None:
    m = _bench(h100, h100_reading, state="burst")
    p = m.power
    assert p is not None
    assert (p.reported, p.stop, p.load_s) == ("burst", "not-run", 0.0)
    assert m.stats.median == BOOST
    assert m.elapsed_s < 0.1
    assert "the median is the BURST figure of a short run;" in warnings_for(m)[0]


def test_state_burst_on_an_already_capped_device_names_the_limit() -> None:
    m = _bench(h100, lambda clock: h100_reading(clock, 0.0, 0.0), state="burst")
    assert m.power is not None and m.power.signals
    assert (
        "already showed a power limit (clock-event reasons: software power cap"
        in (warnings_for(m)[0])
    )


def test_the_power_state_survives_the_json_round_trip() -> None:
    m = _bench(h100, h100_reading)
    back = from_json(to_json(m))
    assert back.power == m.power
    assert back.clocks[-1].power_now_w == 820.0


def test_cpu_mode_has_no_power_state() -> None:
    clock = FakeClock()
    m = harness.bench(print, timer=ModelTimer(lambda t: 5.0, clock, mode="cpu"), clock=clock)
    assert m.power is None


@pytest.mark.parametrize(
    "options", [{"state": "steady"}, {"sustain_budget_s": 0}, {"sustain_budget_s": -1.0}]
)
def test_bad_state_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        harness.bench(print, **options)


# --- the signals, one by one -------------------------------------------------------------


def _r(t: float, mhz: float, reasons: int | None = None, **power: float) -> ClockSample:
    return ClockSample(t_s=t, sm_mhz=mhz, reasons=reasons, **power)


def test_signals_need_nothing_on_an_idle_looking_series() -> None:
    readings = [_r(0.0, 1980, 0, power_now_w=300.0), _r(0.1, 1980, 0, power_now_w=310.0)]
    assert sustain.limit_signals(readings, 1980.0, 0.001, LIMIT_W, SustainRule()) == []


def test_only_a_slower_call_than_the_burst_is_a_signal() -> None:
    """Held under the burst speed makes calls slower; light work ran 2-3 % faster under load on
    an H200 with nothing else to say so: no limit."""
    readings = [_r(0.0, 1980, 0, power_now_w=300.0), _r(0.1, 1980, 0, power_now_w=310.0)]
    rule = SustainRule()
    assert sustain.limit_signals(readings, 1980.0, -0.033, LIMIT_W, rule) == []
    assert sustain.limit_signals(readings, 1980.0, 0.033, LIMIT_W, rule) == [
        "per-call time +3.3% against the burst"
    ]


def test_thermal_and_hardware_slowdown_bits_are_signals() -> None:
    readings = [_r(0.0, 1700, 0x8 | 0x20)]
    assert sustain.limit_signals(readings, 1980.0, None, None, SustainRule()) == [
        "clock-event reasons: hardware slowdown, software thermal slowdown"
    ]


def test_a_clock_drop_counts_only_where_no_reasons_are_reported() -> None:
    amd = [_r(0.0, 2100), _r(0.1, 2000)]  # amdsmi: no reasons; 4.8 % under the burst clock
    assert sustain.limit_signals(amd, 2100.0, None, None, SustainRule()) == [
        "SM clock 2100 → 2000 MHz"
    ]
    nvidia = [_r(0.0, 2100, 0), _r(0.1, 2000, 0)]  # reasons say nothing slowed it: idle, boost
    assert sustain.limit_signals(nvidia, 2100.0, None, None, SustainRule()) == []


def test_the_one_second_average_power_near_the_limit_is_a_signal() -> None:
    readings = [_r(0.0, 1980, 0, power_w=640.0)]  # 91 % of 700 W
    assert sustain.limit_signals(readings, 1980.0, None, LIMIT_W, SustainRule()) == [
        "power 640 W ≥ 90% of the 700 W limit"
    ]
    assert sustain.limit_signals(readings, 1980.0, None, None, SustainRule()) == []


def test_quartile_drift_compares_first_and_last_quarters() -> None:
    values = [100.0] * 4 + [105.0] * 8 + [110.0] * 4
    assert sustain.quartile_drift(values) == pytest.approx(110.0 / 100.0 - 1)
    assert sustain.quartile_drift([100.0] * 7) is None


def test_amdsmi_power_fields_in_watts() -> None:
    assert amd_watts(550) == 550.0
    assert amd_watts(550_000_000) == 550.0  # versions that report µW
    assert amd_watts("N/A") is None
    assert amd_watts(0xFFFFFFFF) is None
    assert amd_watts(True) is None


def test_collect_samples_at_least_min_s() -> None:
    clock = FakeClock()
    timer = ModelTimer(lambda t: 1000.0, clock)  # 1 ms samples at 1 call
    rule = loop.StopRule(min_s=0.5, budget_s=0.1)
    values, reason = loop.collect(timer, 1, rule, clock, lambda: None)
    assert len(values) == math.ceil(0.5 / (1000e-6 + 50e-6))
    assert reason == "ci"


def test_power_state_is_optional_in_older_files() -> None:
    m = _bench(lambda t: 10.0, light_reading)
    record = msgspec.json.decode(to_json(m))
    del record["power"]
    assert from_json(msgspec.json.encode(record)).power is None
