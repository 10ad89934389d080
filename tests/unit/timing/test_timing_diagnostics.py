"""Warnings derived from a Measurement."""

from __future__ import annotations

import msgspec

from gpuscope.timing.clocks import slowdowns
from gpuscope.timing.diagnostics import warnings_for
from gpuscope.timing.measurement import ClockSample, Environment, Measurement

ENV = Environment(vendor="nvidia", device="GPU", python="3", platform="test", gpuscope="0")
CLEAN = Measurement(
    name="x",
    mode="hot",
    timer="device-events+guard",
    samples_us=(10.0, 10.1, 9.9, 10.0, 10.05, 9.95),
    calls_per_sample=1,
    stop_reason="ci",
    target_ci=0.01,
    elapsed_s=0.1,
    env=ENV,
    host_us_per_call=5.0,
)


def _with(**changes: object) -> list[str]:
    return warnings_for(msgspec.structs.replace(CLEAN, **changes))


def test_a_clean_run_has_no_warnings() -> None:
    assert warnings_for(CLEAN) == []


def test_cpu_mode_is_labelled() -> None:
    assert _with(mode="cpu", timer="cpu-wallclock")[0].startswith("cpu-wallclock")


def test_unstable_and_outliers() -> None:
    lines = _with(samples_us=(10.0, 10.0, 10.0, 10.0, 10.0, 50.0))
    assert any(line.startswith("unstable: CV") for line in lines)
    assert any("outliers: max is 5.0×" in line for line in lines)


def test_budget_stop_reports_the_ci_reached() -> None:
    # n = 6: CI ranks (1, 6) = 9.9 and 10.1 around a median of 10.0 → ±1.0 %
    lines = _with(stop_reason="budget")
    assert lines == [
        "CI target ±1.0% not reached (±1.0% after 6 samples, time budget); "
        "raise the budget for a tighter result"
    ]


def test_unconverged_warm_up_guard_underruns_and_missing_guard() -> None:
    assert "warm-up did not converge" in _with(warmup_converged=False)[0]
    assert "ran out 3×" in _with(guard_underruns=3)[0]
    assert "no guard kernel" in _with(timer="device-events")[0]


def test_throttling_and_clock_drop() -> None:
    clocks = (
        ClockSample(t_s=0.0, sm_mhz=1980.0, reasons=0),
        ClockSample(t_s=0.1, sm_mhz=1600.0, reasons=0x4 | 0x1),
    )
    lines = _with(clocks=clocks)
    assert lines == [
        "throttling during the run: software power cap",
        "SM clock varied 1600–1980 MHz during the run",
    ]
    assert slowdowns(clocks) == ["software power cap"]


def test_host_bound_eager_code_and_the_launch_gap_of_us_scale_calls() -> None:
    lines = _with(samples_us=(2.0,) * 6, host_us_per_call=10.0)
    assert "host-bound" in lines[0]
    assert lines[1].startswith("µs-scale call (2.00 µs)")
    assert not any("µs-scale" in line for line in _with(mode="graph", samples_us=(2.0,) * 6))


def test_fractional_kernels_per_call() -> None:
    assert "2.50 kernels per call" in _with(kernels_per_call=2.5)[0]
