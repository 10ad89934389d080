"""The sampler CSVs: madengine's columns first, then gpuscope's.

    power: time,Power(Watt) GPU0,…,utc,monotonic_ns,energy_J GPU0,…,mark
    vram:  time,vram(%) GPU0,…,utc,monotonic_ns,vram_used_MiB GPU0,…,mark

`time` is UTC in madengine's format (`%Y-%m-%d %H:%M:%S.%f`); `utc` is the same instant in ISO 8601;
`monotonic_ns` is CLOCK_MONOTONIC (use it for intervals); `energy_J` is the energy each GPU used
since the sampler started, from the device's counter, filled on marked rows and once per second
(empty in between, and where a device has no counter); `mark` labels rows
taken when the runner marked an event (workload_start, workload_end). Empty cell = not reported.
Every row reaches the OS when written (one write call): a killed run keeps all rows taken so far.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

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
    """Writes and flushes one row per sample.

    Rows are formatted by hand (not with `csv`) and written with one `os.write` each (no buffer
    to flush): at 100 Hz the row costs as much as the wakeup, so the date part of the timestamps is
    formatted once per second.
    """

    def __init__(self, path: Path, kind: Kind, devices: Sequence[int]) -> None:
        self._devices = list(devices)
        self._energy = EnergyBaseline()
        self._second = -1
        self._date = ""
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        head = io.StringIO()
        csv.writer(head, lineterminator="\n").writerow(header(kind, self._devices))
        os.write(self._fd, head.getvalue().encode())

    def row(
        self,
        time_ns: int,
        monotonic_ns: int,
        readings: Sequence[PowerReading] | Sequence[VramReading] | None,
        mark: str = "",
    ) -> None:
        """One sample; `readings` None (a failed read) leaves the value cells empty."""
        second, nanos = divmod(time_ns, 1_000_000_000)
        if second != self._second:
            self._second = second
            self._date = dt.datetime.fromtimestamp(second, tz=dt.timezone.utc).isoformat()[:19]
        micros = f"{nanos // 1000:06d}"
        values, extras = self._cells(readings)
        cells = [
            f"{self._date[:10]} {self._date[11:]}.{micros}",
            *values,
            f"{self._date}.{micros}+00:00",
            str(monotonic_ns),
            *extras,
            _quoted(mark),
        ]
        os.write(self._fd, (",".join(cells) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)

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


def _quoted(text: str) -> str:
    """A CSV cell (quoted only when it needs to be)."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _fmt(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"
