"""Scripted timer and fake clock: the loop's rules are checked exactly, with no real timing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


class FakeClock:
    """Seconds that advance only when a fake timer says so."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class ScriptedTimer:
    """Returns the scripted per-call values in order; each sample costs `cost_s` of fake time."""

    name = "scripted"
    min_sample_us = 100.0
    max_calls = 1000

    def __init__(
        self,
        values: Iterable[float],
        clock: FakeClock,
        cost_s: float = 0.01,
        mode: str = "fake",
        fixed_calls: int | None = None,
        log: list[str] | None = None,
        label: str = "",
    ) -> None:
        self._values: Iterator[float] = iter(values)
        self._clock = clock
        self._cost = cost_s
        self.mode = mode
        self.fixed_calls = fixed_calls
        self.calls_seen: list[int] = []
        self._log = log
        self._label = label

    def first_call(self) -> float:
        return 12345.0

    def sample(self, calls: int) -> float:
        self.calls_seen.append(calls)
        self._clock.t += self._cost
        if self._log is not None:
            self._log.append(self._label)
        return next(self._values)

    def host_us_per_call(self) -> float | None:
        return 7.0

    def guard_underruns(self) -> int:
        return 0


def constant(value: float) -> Iterator[float]:
    while True:
        yield value


def cycle(*values: float) -> Iterator[float]:
    while True:
        yield from values


class ModelTimer:
    """Per-call time given by a model of the fake time (a device whose speed changes under
    load); a sample of N calls advances the clock by N × that time plus `gap_us`."""

    name = "model+guard"  # the diagnostics look for the guard in a GPU mode's timer
    min_sample_us = 500.0
    max_calls = 256

    def __init__(
        self,
        per_call_us: Callable[[float], float],
        clock: FakeClock,
        mode: str = "hot",
        gap_us: float = 50.0,
    ) -> None:
        self._model, self._clock, self._gap = per_call_us, clock, gap_us
        self.mode = mode
        self.fixed_calls: int | None = None
        self.calls_seen: list[int] = []

    def first_call(self) -> float:
        return 5000.0

    def sample(self, calls: int) -> float:
        self.calls_seen.append(calls)
        value = self._model(self._clock.t)
        self._clock.t += (calls * value + self._gap) * 1e-6
        return value

    def host_us_per_call(self) -> float | None:
        return 5.0

    def guard_underruns(self) -> int:
        return 0
