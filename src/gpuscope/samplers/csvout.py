"""The sampler CSVs: madengine's columns first, then gpuscope's.

    power: time,Power(Watt) GPU0,…,utc,monotonic_ns,energy_J GPU0,…,mark
    vram:  time,vram(%) GPU0,…,utc,monotonic_ns,vram_used_MiB GPU0,…,mark

`time` is UTC in madengine's format (`%Y-%m-%d %H:%M:%S.%f`); `utc` is the same instant in ISO 8601;
`monotonic_ns` is CLOCK_MONOTONIC (use it for intervals); `energy_J` is the energy each GPU used
since the sampler started (from the device's counter, empty where it has none); `mark` labels rows
taken when the runner marked an event (workload_start, workload_end). Empty cell = not reported.
Every row is flushed to the OS when written: a killed run keeps all rows taken so far.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TextIO

from gpuscope.samplers.backends.base import PowerReading, VramReading

Kind = Literal["power", "vram"]
HEAD = {"power": "Power(Watt) GPU", "vram": "vram(%) GPU"}
EXTRA = {"power": "energy_J GPU", "vram": "vram_used_MiB GPU"}


def header(kind: Kind, devices: Sequence[int]) -> list[str]:
    """The column names for these devices."""
    return [
        "time",
        *(f"{HEAD[kind]}{d}" for d in devices),
        "utc",
        "monotonic_ns",
        *(f"{EXTRA[kind]}{d}" for d in devices),
        "mark",
    ]


class EnergyBaseline:
    """Turns each device's cumulative counter into energy since the first reading.

    A counter that goes backwards was reset or wrapped: what it held so far is kept.
    """

    def __init__(self) -> None:
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._carried: dict[int, float] = {}

    def since_start(self, device: int, counter_j: float | None) -> float | None:
        if counter_j is None:
            return None
        if device not in self._first:
            self._first[device] = self._last[device] = counter_j
            self._carried[device] = 0.0
        if counter_j < self._last[device]:
            self._carried[device] += self._last[device] - self._first[device]
            self._first[device] = 0.0
        self._last[device] = counter_j
        return self._carried[device] + counter_j - self._first[device]


class SamplerCsv:
    """Writes and flushes one row per sample."""

    def __init__(self, path: Path, kind: Kind, devices: Sequence[int]) -> None:
        self._kind = kind
        self._devices = list(devices)
        self._energy = EnergyBaseline()
        self._file: TextIO = path.open("w", newline="", encoding="utf-8")
        self._writer = csv.writer(self._file)
        self._write(header(kind, self._devices))

    def row(
        self,
        time_ns: int,
        monotonic_ns: int,
        readings: Sequence[PowerReading] | Sequence[VramReading] | None,
        mark: str = "",
    ) -> None:
        """One sample; `readings` None (a failed read) leaves the value cells empty."""
        utc = _iso_utc(time_ns)
        values, extras = self._cells(readings)
        self._write([f"{utc[:10]} {utc[11:26]}", *values, utc, monotonic_ns, *extras, mark])

    def close(self) -> None:
        self._file.close()

    def _cells(
        self, readings: Sequence[PowerReading] | Sequence[VramReading] | None
    ) -> tuple[list[str], list[str]]:
        if readings is None:
            empty = [""] * len(self._devices)
            return empty, list(empty)
        values: list[str] = []
        extras: list[str] = []
        for device, reading in zip(self._devices, readings, strict=True):
            if isinstance(reading, PowerReading):
                values.append(_fmt(reading.watts, 3))
                extras.append(_fmt(self._energy.since_start(device, reading.energy_j), 3))
            elif isinstance(reading, VramReading):
                values.append(_fmt(reading.percent, 2))
                used = None if reading.used_bytes is None else reading.used_bytes / 2**20
                extras.append(_fmt(used, 1))
        return values, extras

    def _write(self, cells: Sequence[object]) -> None:
        self._writer.writerow(cells)
        self._file.flush()


def _iso_utc(time_ns: int) -> str:
    """`2026-11-22T01:45:02.123456+00:00` (always with microseconds: fixed-width slicing)."""
    seconds, nanos = divmod(time_ns, 1_000_000_000)
    when = dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc).replace(microsecond=nanos // 1000)
    return when.isoformat(timespec="microseconds")


def _fmt(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"
