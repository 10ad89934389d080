"""Clock monitor: rate-limited polling and graceful failure of the vendor library."""

from __future__ import annotations

from timing_fakes import FakeClock

from gpuscope.timing.clocks import NullMonitor, PollingMonitor
from gpuscope.timing.measurement import ClockSample


def test_polls_at_most_once_per_interval_unless_forced() -> None:
    clock = FakeClock()
    monitor = PollingMonitor("fake", lambda: ClockSample(t_s=clock(), sm_mhz=1980.0), clock, 0.02)
    for step in range(10):
        clock.t = step * 0.005
        monitor.poll()
    monitor.poll(force=True)
    assert [s.t_s for s in monitor.samples()] == [0.0, 0.02, 0.04, 0.045]


def test_a_failing_reader_stops_polling_and_keeps_earlier_samples() -> None:
    clock = FakeClock()
    readings = iter([ClockSample(t_s=0.0)])

    def read() -> ClockSample:
        return next(readings)  # second call raises StopIteration

    monitor = PollingMonitor("fake", read, clock, 0.0)
    monitor.poll()
    monitor.poll()
    monitor.poll()
    assert monitor.source is None
    assert len(monitor.samples()) == 1


def test_null_monitor_records_nothing() -> None:
    monitor = NullMonitor()
    monitor.poll(force=True)
    assert (monitor.source, monitor.samples()) == (None, ())
