"""Calibration, warm-up and stopping rules, driven by a scripted timer and a fake clock."""

from __future__ import annotations

import itertools

from timing_fakes import FakeClock, ScriptedTimer, constant, cycle

from gpuscope.timing import loop
from gpuscope.timing.loop import StopRule


def _nothing() -> None:
    return None


def test_calls_for_reaches_the_minimum_sample_length() -> None:
    assert loop.calls_for(2.0, 500.0, 256) == 250
    assert loop.calls_for(1.0, 500.0, 256) == 256  # capped
    assert loop.calls_for(600.0, 500.0, 256) == 1
    assert loop.calls_for(0.0, 500.0, 256) == 256


def test_calibrate_scales_up_then_settles() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(constant(1.0), clock)  # 1 µs per call, 100 µs wanted
    calls, seen = loop.calibrate(timer)
    assert calls == 100
    assert timer.calls_seen == [1, 100]
    assert seen == [1.0, 1.0]


def test_calibrate_keeps_a_fixed_call_count_without_sampling() -> None:
    timer = ScriptedTimer(constant(1.0), FakeClock(), fixed_calls=1)
    assert loop.calibrate(timer) == (1, [])
    assert timer.calls_seen == []


def test_converged_compares_medians_of_two_windows() -> None:
    assert not loop.converged([1.0] * 9, window=5, tol=0.02)
    assert loop.converged([1.0] * 10, window=5, tol=0.02)
    assert loop.converged([100.0] * 5 + [101.9] * 5, window=5, tol=0.02)
    assert not loop.converged([100.0] * 5 + [102.1] * 5, window=5, tol=0.02)


def test_warm_up_stops_when_timings_stop_drifting() -> None:
    values = [20.0, 18.0, 16.0, 14.0, 12.0, *[10.0] * 20]
    timer = ScriptedTimer(values, FakeClock())
    warm, ok = loop.warm_up(timer, 1, StopRule(), FakeClock(), _nothing)
    # window medians: 16 | 10 at 10 samples, 14 | 10 at 11, 12 | 10 at 12, 10 | 10 at 13
    assert ok
    assert len(warm) == 13


def test_warm_up_gives_up_at_its_budget() -> None:
    clock = FakeClock()
    timer = ScriptedTimer(cycle(1.0, 2.0), clock, cost_s=0.125)
    warm, ok = loop.warm_up(timer, 1, StopRule(warmup_budget_s=0.625), clock, _nothing)
    assert not ok
    assert len(warm) == 5


def test_collect_stops_at_min_samples_when_samples_agree() -> None:
    clock = FakeClock()
    values, reason = loop.collect(
        ScriptedTimer(constant(5.0), clock), 1, StopRule(), clock, _nothing
    )
    assert (len(values), reason) == (10, loop.STOP_CI)


def test_collect_stops_when_the_median_ci_is_tight_enough() -> None:
    # After 10 and 11 samples the CI ranks (2, 9) / (2, 10) reach 95 and 105 (±5 %);
    # at 12 samples the ranks are (3, 10) and both are 100: half-width 0.
    values = [90.0, 110.0, 95.0, 105.0, *itertools.repeat(100.0, 50)]
    clock = FakeClock()
    got, reason = loop.collect(ScriptedTimer(values, clock), 1, StopRule(), clock, _nothing)
    assert (len(got), reason) == (12, loop.STOP_CI)


def test_collect_stops_at_the_time_budget() -> None:
    clock = FakeClock()
    rule = StopRule(min_samples=3, budget_s=1.0)
    got, reason = loop.collect(
        ScriptedTimer(cycle(100.0, 200.0), clock, cost_s=0.125), 1, rule, clock, _nothing
    )
    assert (len(got), reason) == (8, loop.STOP_BUDGET)


def test_collect_takes_min_samples_even_past_the_budget() -> None:
    clock = FakeClock()
    rule = StopRule(min_samples=10, budget_s=0.1)
    got, reason = loop.collect(
        ScriptedTimer(cycle(100.0, 200.0), clock, cost_s=1.0), 1, rule, clock, _nothing
    )
    assert (len(got), reason) == (10, loop.STOP_BUDGET)


def test_collect_stops_at_the_sample_cap() -> None:
    clock = FakeClock()
    rule = StopRule(min_samples=3, max_samples=7, budget_s=100.0)
    got, reason = loop.collect(ScriptedTimer(cycle(100.0, 200.0), clock), 1, rule, clock, _nothing)
    assert (len(got), reason) == (7, loop.STOP_MAX)


def test_run_keeps_calibration_with_the_warm_up_and_ticks_every_sample() -> None:
    clock = FakeClock()
    ticks: list[float] = []
    got = loop.run(ScriptedTimer(constant(2.0), clock), StopRule(), clock, lambda: ticks.append(1))
    assert got.calls == 50
    assert got.warmup[:2] == (2.0, 2.0)  # calibration at 1 and 50 calls
    assert len(got.warmup) == 2 + 10  # then two agreeing windows of 5
    assert got.warmup_converged
    assert (len(got.samples), got.stop_reason) == (10, loop.STOP_CI)
    assert len(ticks) == 10 + 10  # warm-up and sampling; calibration is not ticked
    assert got.elapsed_s == clock.t
