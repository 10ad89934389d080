"""A fake backend: deterministic readings, no GPU needed (tests, demos, `POWER_BACKEND=fake`).

By default two devices: device d draws 100 + 50·d W plus a ramp of 1 W per reading, and its
energy counter advances by the watts of each reading (as if read once per second); VRAM use is
(d + 1) GiB + 1 MiB per reading, of 80 GiB. Tests pass their own functions and an `on_read` hook
(e.g. to advance a fake clock by the time a real read would take).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpuscope.samplers.backends.base import PowerReading, VramReading

GIB = 2**30


def _default_watts(device: int, reading: int) -> float | None:
    return 100.0 + 50.0 * device + reading


def _default_vram(device: int, reading: int) -> tuple[int, int]:
    return (device + 1) * GIB + reading * 2**20, 80 * GIB


class FakeBackend:
    """Readings computed from (device, how many readings came before)."""

    name = "fake"

    def __init__(
        self,
        devices: int = 2,
        *,
        watts: Callable[[int, int], float | None] = _default_watts,
        vram: Callable[[int, int], tuple[int, int]] = _default_vram,
        on_read: Callable[[], None] | None = None,
    ) -> None:
        self._devices = devices
        self._watts = watts
        self._vram = vram
        self._on_read = on_read
        self._readings = 0
        self._energy = [0.0] * devices
        self.closed = False

    def device_count(self) -> int:
        return self._devices

    def power(self, devices: Sequence[int], energy: bool = True) -> list[PowerReading]:
        n = self._tick()
        readings = []
        for d in devices:
            watts = self._watts(d, n)
            self._energy[d] += watts or 0.0
            readings.append(PowerReading(watts, self._energy[d] if energy else None))
        return readings

    def vram(self, devices: Sequence[int]) -> list[VramReading]:
        n = self._tick()
        return [VramReading(*self._vram(d, n)) for d in devices]

    def close(self) -> None:
        self.closed = True

    def _tick(self) -> int:
        if self._on_read is not None:
            self._on_read()
        self._readings += 1
        return self._readings - 1
