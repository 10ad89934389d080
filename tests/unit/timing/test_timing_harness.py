"""bench(): options, mode choice, the Measurement it builds and its JSON form."""

from __future__ import annotations

import math

import msgspec
import pytest
from timing_fakes import FakeClock, ScriptedTimer, constant

from gpuscope.errors import ConfigError, InputError, ToolError
from gpuscope.timing import _torch, harness
from gpuscope.timing.measurement import SCHEMA, Environment, Measurement, from_json
from gpuscope.timing.record import to_json

ENV = Environment(vendor="cpu", device="test-cpu", python="3", platform="test", gpuscope="0")


def _fake_bench(value: float = 2.0, **options: object) -> Measurement:
    clock = FakeClock()
    timer = ScriptedTimer(constant(value), clock)
    return harness.bench(print, timer=timer, clock=clock, env=ENV, name="fake", **options)


def test_bench_records_samples_first_call_and_provenance() -> None:
    m = _fake_bench()
    assert m.schema == SCHEMA
    assert (m.name, m.mode, m.timer) == ("fake", "fake", "scripted")
    assert m.samples_us == (2.0,) * 10
    assert m.calls_per_sample == 50
    assert m.first_call_us == 12345.0
    assert m.stop_reason == "ci"
    assert m.host_us_per_call == 7.0
    assert m.options["target_ci"] == 0.01
    assert m.env == ENV
    assert m.stats.median == 2.0


def test_work_gives_rates_without_peaks_off_gpu() -> None:
    m = _fake_bench(10.0, flops=1e6, bytes=2e4)
    assert m.rates is not None
    assert m.rates.tflops == pytest.approx(1e6 / 10e-6 / 1e12)
    assert m.rates.gbps == pytest.approx(2e4 / 10e-6 / 1e9)
    assert m.rates.tflops_fraction is None


def test_unknown_option_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ConfigError, match=r"unknown bench option.*budget_s"):
        harness.bench(print, budget=3)


@pytest.mark.parametrize(
    "options",
    [{"mode": "warm"}, {"target_ci": 5}, {"budget_s": 0}, {"flush": True, "mode": "cpu"}],
)
def test_bad_option_values_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        harness.bench(print, **options)


def test_non_callable_is_refused() -> None:
    with pytest.raises(InputError, match="needs a callable"):
        harness.bench(42)  # type: ignore[arg-type]


def test_auto_mode_falls_back_to_the_labelled_cpu_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "gpu_torch", lambda: None)
    m = harness.bench(sum, (1, 2, 3), budget_s=0.05, env=ENV)
    assert (m.mode, m.timer) == ("cpu", "cpu-wallclock")
    assert m.options["requested_mode"] == "auto"
    assert all(v > 0 for v in m.samples_us)


def test_gpu_mode_without_a_gpu_says_how_to_fix_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_torch, "gpu_torch", lambda: None)
    with pytest.raises(ToolError, match="use mode 'cpu'"):
        harness.bench(print, mode="graph")


def test_json_round_trip_keeps_the_raw_record_and_adds_derived_stats() -> None:
    m = _fake_bench()
    data = to_json(m)
    obj = msgspec.json.decode(data)
    assert obj["schema"] == "gpuscope.bench/1"
    assert obj["kind"] == "measurement"
    assert obj["stats_us"]["p50"] == 2.0
    assert obj["stats_us"]["n"] == 10
    assert isinstance(obj["warnings"], list)
    assert from_json(data) == m


def test_json_writes_null_for_an_unbounded_ci() -> None:
    clock = FakeClock()
    m = harness.bench(
        print,
        timer=ScriptedTimer(constant(1.0), clock),
        clock=clock,
        env=ENV,
        min_samples=3,
        max_samples=3,
    )
    obj = msgspec.json.decode(to_json(m))
    assert obj["stats_us"]["ci_low"] is None
    assert obj["stats_us"]["ci_halfwidth"] is None
    assert math.isinf(m.stats.ci_halfwidth)


def test_reading_another_schema_is_refused() -> None:
    with pytest.raises(InputError, match=r"expected schema 'gpuscope\.bench/1'"):
        from_json(b'{"schema": "gpuscope.analysis/1"}', where="old.json")
    with pytest.raises(InputError, match="not JSON"):
        from_json(b"{", where="old.json")
    with pytest.raises(InputError, match="not a valid"):
        from_json(b'{"schema": "gpuscope.bench/1", "name": 3}', where="old.json")
