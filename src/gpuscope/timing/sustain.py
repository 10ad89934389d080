"""Burst or sustained: keep the GPU loaded until a power-limited callable reaches its steady state.

Large GEMMs draw more than the board's power limit at boost clocks. On an H100 (700 W), 8192³
bf16 back to back (`benchmarks/timing/probe_power_state.py`, 2026-11-23): the SM clock falls
from 1980 to ~1440 MHz within 0.1–0.2 s (NVML reason 0x4, software power cap, acting on the
instantaneous power), to ~1150 MHz when the 1 s-average power reaches the limit at ~0.8 s, swings
with a ~1 s period, and settles at 1350–1380 MHz after 3–5 s: 1376 µs per call in a short run,
1613 µs sustained (+17 %), flat within 0.05 % from 5 to 22 s. A short run measures clocks that
no real loop of such kernels gets.

`run()` is the sampling pipeline with a load phase: calibrate → warm up → [burst samples] → load
→ samples. The load phase samples back to back in ~25 ms samples (the guard and the sync between
samples stay under 1 % of the time, so the duty cycle is a real loop's) and ends

* "no-limit" after `probe_s` without a signal of a limit (light work: burst = sustained);
* "stable" once a limit was signalled, `min_load_s` has passed, the means of two consecutive
  `window_s` windows agree within `tol` and the last window's median is within `spread` of its
  mean;
* "budget" after `budget_s` (the reported state is then "unsettled").

Signals (`limit_signals`), from recent readings only: NVML clock-event reasons (HW slowdown,
thermal, power brake, and the software power cap unless this work's instantaneous power stays
well under the limit: then earlier work left it); power ≥ 90 % of the enforced limit; an SM
clock 3 % under the burst clock where the library reports no reasons (amdsmi); a per-call time
2 % away from the burst median (any vendor, also without a monitor). The reported samples are
taken right after, with no pause (a pause of ~0.1 s lets the clock back up) and in the same long
samples.

Why means and a median-to-mean check: under the cap the per-call time swings with the power
controller (H100 8192³: 0.5 s at 1565 µs, 0.5 s at 1667 µs, 3–5 s after the start, decaying
to ±0.5 % by ~9 s). The mean over a whole second — a loop's real throughput — is within 1 % of
the settled value from the first second on; a median of such a window lands on either half
(−6 … −1 % in the first 5 s). Stopping when a window's median agrees with its mean keeps the
reported median (of the samples that follow) on the loop's throughput.

Pure logic over a `Timer`, a `Clock` and a `Monitor`: tested with scripted series.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gpuscope.timing import loop
from gpuscope.timing.clocks import SW_POWER_CAP, Monitor, slowdowns
from gpuscope.timing.measurement import ClockSample, PowerState
from gpuscope.timing.timer import Clock, Timer

STATES = ("sustained", "burst", "both")
DEFAULT_STATE = "sustained"

SUSTAINED, BURST, UNLIMITED, UNSETTLED = "sustained", "burst", "unlimited", "unsettled"
STOP_STABLE, STOP_NO_LIMIT, STOP_BUDGET, STOP_NOT_RUN = "stable", "no-limit", "budget", "not-run"


@dataclass(frozen=True)
class SustainRule:
    """When the load phase ends; seconds, fractions. Defaults from the H100/H200 series above."""

    probe_s: float = 0.5  # load before "no limit" may be decided (the power cap acts in ~0.2 s)
    probe_average_s: float = 1.5  # the same without an instantaneous power reading (1 s average)
    window_s: float = 1.0  # stability windows: the power controllers swing with a ~1 s period
    tol: float = 0.005  # consecutive window means agree within this
    spread: float = 0.01  # the last window's median is within this of its mean
    min_load_s: float = 2.0  # a limited callable loads at least this long (1 s-average control)
    budget_s: float = 15.0
    sample_us: float = 25_000.0  # sample length under load
    power_near: float = 0.90  # power at this share of the enforced limit is a signal
    clock_drop: float = 0.03  # SM clock this far under the burst clock is a signal (no reasons)
    drift: float = 0.02  # per-call time this far above the burst median is a signal


@dataclass(frozen=True)
class Load:
    """What the load phase saw: its samples, window medians, signals and why it ended."""

    stop: str
    calls: int
    values: tuple[float, ...]
    windows: tuple[float, ...]  # per-call mean of each window
    medians: tuple[float, ...]  # per-call median of each window
    signals: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class Outcome:
    sampled: loop.Sampled
    power: PowerState


def quartile_drift(values: Sequence[float]) -> float | None:
    """Median of the last quarter over the median of the first, minus 1 (None under 8 values)."""
    if len(values) < 8:
        return None
    q = len(values) // 4
    first, last = statistics.median(values[:q]), statistics.median(values[-q:])
    return last / first - 1 if first > 0 else None


def max_mhz(readings: Sequence[ClockSample]) -> float | None:
    return max((r.sm_mhz for r in readings if r.sm_mhz), default=None)


def median_mhz(readings: Sequence[ClockSample]) -> float | None:
    mhz = [r.sm_mhz for r in readings if r.sm_mhz]
    return statistics.median(mhz) if mhz else None


def limit_signals(
    readings: Sequence[ClockSample],
    burst_mhz: float | None,
    drift: float | None,
    limit_w: float | None,
    rule: SustainRule,
) -> list[str]:
    """What says the device is (or will be) held under its burst speed; [] when nothing does.

    `readings` are the monitor's during the load (or the run), `burst_mhz` the highest SM clock
    seen before it, `drift` the relative change of the per-call time against the burst.
    """
    out = []
    instant = [r.power_now_w for r in readings if r.power_now_w is not None]
    # a software power cap while this work draws well under the limit is left by earlier work
    # (the ~1 s average still holds it: seen for > 0.5 s after an 8192³ GEMM loop on an H100)
    residual = bool(instant and limit_w and max(instant) < rule.power_near * limit_w)
    reasons = slowdowns(tuple(readings), ignore=SW_POWER_CAP if residual else 0)
    if reasons:
        out.append("clock-event reasons: " + ", ".join(reasons))
    low = min((r.sm_mhz for r in readings if r.sm_mhz), default=None)
    no_reasons = all(r.reasons is None for r in readings)
    if no_reasons and burst_mhz and low is not None and low < (1 - rule.clock_drop) * burst_mhz:
        out.append(f"SM clock {burst_mhz:.0f} → {low:.0f} MHz")
    # the instantaneous power where the library reports it: the ~1 s average still carries the
    # work before (light work right after a heavy GEMM reads 665 W on an H100)
    watts = instant or [r.power_w for r in readings if r.power_w is not None]
    if limit_w and watts and max(watts) >= rule.power_near * limit_w:
        out.append(f"power {max(watts):.0f} W ≥ {rule.power_near:.0%} of the {limit_w:.0f} W limit")
    # slower than the burst: held under its speed; faster is no limit (light work on an H200
    # ran 2-3 % faster under load than in its burst, with no clock, power or reason signal)
    if drift is not None and drift > rule.drift:
        out.append(f"per-call time {drift:+.1%} against the burst")
    return out


def _agree(a: float, b: float, tol: float) -> bool:
    return abs(b - a) <= tol * abs(a) if a else b == a


class _LoadPhase:
    """The state of one load phase; `step()` takes a sample and says when to stop."""

    def __init__(
        self,
        timer: Timer,
        calls: int,
        burst_us: float,
        burst_mhz: float | None,
        rule: SustainRule,
        clock: Clock,
        monitor: Monitor,
    ) -> None:
        self.timer, self.calls, self.rule = timer, calls, rule
        self.burst_us, self.burst_mhz = burst_us, burst_mhz
        self.clock, self.monitor = clock, monitor
        self.start = clock()
        self.values: list[float] = []
        self.windows: list[float] = []
        self.medians: list[float] = []
        self.signals: list[str] = []
        self._mark = 0
        self._next_window = rule.window_s
        self._probed = False

    def elapsed(self) -> float:
        return self.clock() - self.start

    def readings(self, since: float = 0.0) -> list[ClockSample]:
        """The monitor's readings from `since` seconds into the load on."""
        return [r for r in self.monitor.samples() if r.t_s >= self.start + since]

    def _signals(self, current_us: float, since: float) -> list[str]:
        """Signals in the readings from `since` on: recent ones, so that a power average left
        by earlier work fades out of them."""
        drift = current_us / self.burst_us - 1 if self.burst_us > 0 else None
        limit = self.monitor.power_limit_w
        return limit_signals(self.readings(since), self.burst_mhz, drift, limit, self.rule)

    def _probe_s(self) -> float:
        instant = any(r.power_now_w is not None for r in self.readings())
        return self.rule.probe_s if instant else max(self.rule.probe_s, self.rule.probe_average_s)

    def step(self) -> str | None:
        self.values.append(self.timer.sample(self.calls))
        self.monitor.poll()
        t = self.elapsed()
        closed = t >= self._next_window
        opened = self._next_window - self.rule.window_s
        if closed:
            window = self.values[self._mark :]
            self.windows.append(statistics.fmean(window))
            self.medians.append(statistics.median(window))
            self._mark = len(self.values)
            self._next_window = t + self.rule.window_s
        probe = self._probe_s()
        if not self._probed and t >= probe:
            self._probed = True
            half = len(self.values) // 2
            self.signals = self._signals(statistics.median(self.values[half:]), probe / 2)
            if not self.signals:
                return STOP_NO_LIMIT
        if closed and self._probed:
            self.signals = self._signals(self.windows[-1], opened) or self.signals
            if self._stable(t):
                return STOP_STABLE
        return STOP_BUDGET if t >= self.rule.budget_s else None

    def _stable(self, t: float) -> bool:
        w, rule = self.windows, self.rule
        if t < rule.min_load_s or len(w) < 2 or not _agree(w[-2], w[-1], rule.tol):
            return False
        return _agree(w[-1], self.medians[-1], rule.spread)


class Streamed:
    """A timer seen through its `stream()` (hot mode, device-bound calls: `gpu.EventTimer`):
    samples back to back with no gap, as in a real loop; `close()` waits for the one in flight.
    Any other timer passes through unchanged."""

    def __init__(self, timer: Timer) -> None:
        self.inner = timer
        self.streaming = bool(getattr(timer, "device_bound", False)) and hasattr(timer, "stream")
        self.mode, self.name = timer.mode, timer.name
        self.fixed_calls, self.max_calls = timer.fixed_calls, timer.max_calls
        self.min_sample_us = timer.min_sample_us

    def first_call(self) -> float:
        return self.inner.first_call()

    def sample(self, calls: int) -> float:
        if not self.streaming:
            return self.inner.sample(calls)
        stream = self.inner.stream  # type: ignore[attr-defined]
        value: float | None = stream(calls)
        while value is None:  # the first: one more behind it, then its time
            value = stream(calls)
        return value

    def close(self) -> None:
        if self.streaming:
            self.inner.stream_end()  # type: ignore[attr-defined]

    def host_us_per_call(self) -> float | None:
        return self.inner.host_us_per_call()

    def guard_underruns(self) -> int:
        return self.inner.guard_underruns()


def load(
    timer: Timer,
    calls: int,
    burst: Sequence[float],
    rule: SustainRule,
    clock: Clock,
    monitor: Monitor,
    burst_mhz: float | None = None,
) -> Load:
    """Sample back to back until the state is known and, if limited, stable (module doc)."""
    burst_us = statistics.median(burst) if burst else 0.0
    phase = _LoadPhase(timer, calls, burst_us, burst_mhz, rule, clock, monitor)
    stop = None
    while stop is None:
        stop = phase.step()
    return Load(
        stop=stop,
        calls=calls,
        values=tuple(phase.values),
        windows=tuple(phase.windows),
        medians=tuple(phase.medians),
        signals=tuple(phase.signals),
        seconds=phase.elapsed(),
    )


def load_calls(timer: Timer, per_call_us: float, rule: SustainRule) -> int:
    """Calls per sample under load: samples of ~`rule.sample_us` (fixed-call modes keep theirs)."""
    if timer.fixed_calls is not None:
        return timer.fixed_calls
    return loop.calls_for(per_call_us, rule.sample_us, timer.max_calls)


def reported_state(stop: str) -> str:
    return {STOP_STABLE: SUSTAINED, STOP_NO_LIMIT: UNLIMITED, STOP_BUDGET: UNSETTLED}[stop]


def run(
    timer: Timer,
    rule: loop.StopRule,
    srule: SustainRule,
    state: str,
    clock: Clock,
    monitor: Monitor,
) -> Outcome:
    """calibrate → warm up → [burst samples] → load → samples, for `state` (STATES)."""
    start = clock()
    calls, seen = loop.calibrate(timer)
    warm, ok = loop.warm_up(timer, calls, rule, clock, monitor.poll)
    burst, burst_stop = warm, loop.STOP_FIXED
    if state in (BURST, "both"):
        burst, burst_stop = loop.collect(timer, calls, rule, clock, monitor.poll)
    before = [r for r in monitor.samples() if r.t_s < clock()]
    if state == BURST:
        power = burst_power(warm + burst, before, srule, monitor.power_limit_w)
        return Outcome(_sampled(burst, seen + warm, ok, calls, burst_stop, clock() - start), power)
    per_call = statistics.median(burst) if burst else 1.0
    loaded = Streamed(timer)
    calls_loaded = load_calls(timer, per_call, srule)
    phase = load(loaded, calls_loaded, burst, srule, clock, monitor, max_mhz(before))
    sampled_from = clock()
    if phase.stop == STOP_NO_LIMIT:
        loaded.close()
    if phase.stop == STOP_NO_LIMIT and state == "both":
        values, stop, n = burst, burst_stop, calls
    elif phase.stop == STOP_NO_LIMIT:
        values, stop = loop.collect(timer, calls, rule, clock, monitor.poll)
        n = calls
    else:  # right on, in the same samples: a pause lets the clock back up
        held = dataclasses.replace(
            rule, min_s=srule.window_s, budget_s=max(rule.budget_s, srule.window_s)
        )
        values, stop = loop.collect(loaded, phase.calls, held, clock, monitor.poll)
        loaded.close()
        n = phase.calls
    power = loaded_power(state, phase, srule, burst, before, monitor, sampled_from)
    return Outcome(_sampled(values, seen + warm, ok, n, stop, clock() - start), power)


def _sampled(
    values: Sequence[float], warmup: list[float], ok: bool, calls: int, stop: str, elapsed: float
) -> loop.Sampled:
    return loop.Sampled(
        samples=tuple(values),
        warmup=tuple(warmup),
        warmup_converged=ok,
        calls=calls,
        stop_reason=stop,
        elapsed_s=elapsed,
    )


def loaded_power(
    state: str,
    phase: Load,
    srule: SustainRule,
    burst: Sequence[float],
    before: Sequence[ClockSample],
    monitor: Monitor,
    sampled_from: float,
) -> PowerState:
    """The PowerState of a run with a load phase."""
    after = [r for r in monitor.samples() if r.t_s >= sampled_from]
    unlimited = phase.stop == STOP_NO_LIMIT
    return PowerState(
        requested=state,
        reported=reported_state(phase.stop),
        stop=phase.stop,
        signals=phase.signals,
        load_s=round(phase.seconds, 4),
        load_calls=phase.calls,
        load_us=phase.values,
        window_s=srule.window_s,
        windows_us=phase.windows,
        window_medians_us=phase.medians,
        sampled_from_s=None if unlimited and state == "both" else sampled_from,
        burst_us=tuple(burst),
        burst_mhz=max_mhz(before),
        sampled_mhz=median_mhz(after) if after else None,
        power_limit_w=monitor.power_limit_w,
    )


def burst_power(
    values: Sequence[float],
    readings: Sequence[ClockSample],
    srule: SustainRule,
    limit_w: float | None,
) -> PowerState:
    """The PowerState of a short run: which signals of a limit it already showed."""
    first = next((r.sm_mhz for r in readings if r.sm_mhz), None)
    signals = limit_signals(readings, first, quartile_drift(values), limit_w, srule)
    return PowerState(
        requested=BURST,
        reported=BURST,
        stop=STOP_NOT_RUN,
        signals=tuple(signals),
        burst_mhz=median_mhz(readings),
        sampled_mhz=median_mhz(readings),
        power_limit_w=limit_w,
    )
