"""The guard kernel of hot mode, on a fake torch whose device timeline is simulated.

For device-bound calls the guard only has to cover the first call (a guard sized for every call
idles the device and lowers its power draw below a real loop's: for power-capped GEMMs that
reads faster than any loop of them runs); host-bound calls keep a guard for the whole batch.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpuscope.timing.gpu import EventTimer
from gpuscope.timing.sustain import Streamed

CYCLES_PER_US = 1000.0  # the fake device's spin rate


class FakeDevice:
    """One stream: kernels run back to back; events stamp the time the stream reaches them."""

    def __init__(self, call_us: float) -> None:
        self.t = 0.0
        self.call_us = call_us
        self.log: list[str] = []

    def sleep(self, cycles: int) -> None:
        self.log.append("guard")
        self.sleeps.append(cycles)
        self.t += cycles / CYCLES_PER_US

    def call(self) -> None:
        self.log.append("call")
        self.t += self.call_us

    sleeps: list[int]


class FakeEvent:
    def __init__(self, device: FakeDevice, enable_timing: bool = False) -> None:
        del enable_timing
        self._device, self.t = device, 0.0

    def record(self) -> None:
        self._device.log.append("event")
        self.t = self._device.t

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        self._device.log.append("query")
        return False  # the guard is still spinning

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.t - self.t) / 1000.0  # ms


def _timer(call_us: float) -> tuple[EventTimer, FakeDevice]:
    device = FakeDevice(call_us)
    device.sleeps = []
    cuda = SimpleNamespace(
        Event=lambda enable_timing=False: FakeEvent(device, enable_timing),
        _sleep=device.sleep,
        current_stream=lambda: SimpleNamespace(synchronize=lambda: None),
    )
    timer = EventTimer(SimpleNamespace(cuda=cuda), device.call)  # type: ignore[arg-type]
    device.log.clear()
    device.sleeps.clear()  # the guard's own calibration
    return timer, device


def test_device_bound_calls_need_the_guard_for_the_first_call_only() -> None:
    timer, device = _timer(call_us=1500.0)
    assert timer.sample(10) == pytest.approx(
        1500.0
    )  # first sample: no history, the guard covers all ten
    assert device.sleeps[0] == int((2.0 * 50.0 * 10 + 20.0) * CYCLES_PER_US)
    device.log.clear()
    assert timer.sample(10) == pytest.approx(1500.0)
    host = timer.host_us_per_call()
    assert host is not None and host < 1500.0 / 4
    assert device.log == ["guard", "event", "event", "call", "query"] + ["call"] * 9 + ["event"]
    # sized for one call: 2 × (last host time per call) + 20 µs
    assert device.sleeps[1] < (2.0 * 1500.0 / 4 + 20.0) * CYCLES_PER_US


def test_host_bound_calls_keep_a_guard_for_the_whole_batch() -> None:
    timer, device = _timer(call_us=0.01)
    timer.sample(10)
    device.log.clear()
    timer.sample(10)
    assert device.log == ["guard", "event", "event"] + ["call"] * 10 + ["query", "event"]


def test_streamed_samples_follow_each_other_with_no_guard_and_no_wait() -> None:
    timer, device = _timer(call_us=1500.0)
    timer.sample(4)  # a guarded sample: now known to be device-bound
    assert timer.device_bound
    loaded = Streamed(timer)
    assert loaded.streaming
    device.log.clear()
    device.sleeps.clear()
    assert loaded.sample(4) == pytest.approx(1500.0)  # primes one behind it, returns the first
    assert loaded.sample(4) == pytest.approx(1500.0)
    loaded.close()
    # three samples enqueued back to back (start, 4 calls, end), never a guard in between
    assert device.log == (["event"] + ["call"] * 4 + ["event"]) * 3
    assert device.sleeps == []


def test_host_bound_samplers_are_not_streamed() -> None:
    timer, device = _timer(call_us=0.01)
    timer.sample(10)
    loaded = Streamed(timer)
    assert not loaded.streaming
    device.log.clear()
    loaded.sample(10)
    assert device.log[0] == "guard"
