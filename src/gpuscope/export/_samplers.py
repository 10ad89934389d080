"""The power / VRAM sampler CSVs of a `gpuscope run` directory, read back as time series.

Layout (gpuscope.samplers.csvout): `time,<value> GPU0,…,utc,monotonic_ns,<extra> GPU0,…,mark`.
A CSV is recognised by its header (`utc`, `monotonic_ns` and `mark` columns), not its name, so a
renamed output (`POWER_OUTPUT_FILE`) is found too. Empty cells are samples not taken.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuscope.trace.model import F64, I64

_REQUIRED = ("utc", "monotonic_ns", "mark")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
# column name prefix -> (series label, unit)
_KNOWN = {
    "Power(Watt) GPU": ("power", "W"),
    "energy_J GPU": ("energy", "J"),
    "vram(%) GPU": ("VRAM", "%"),
    "vram_used_MiB GPU": ("VRAM used", "MiB"),
}
_GPU = re.compile(r"^(?P<prefix>.*GPU)(?P<index>\d+)$")


@dataclass(frozen=True)
class Series:
    """One column: `GPU0 power` in W, sampled at the file's rows (NaN where the cell is empty)."""

    name: str
    unit: str
    values: F64


@dataclass(frozen=True)
class Mark:
    label: str  # workload_start, workload_end
    monotonic_ns: int
    realtime_ns: int


@dataclass(frozen=True)
class SamplerFile:
    path: Path
    monotonic_ns: I64
    realtime_ns: I64
    series: tuple[Series, ...]
    marks: tuple[Mark, ...]

    def mark(self, label: str) -> Mark | None:
        return next((m for m in self.marks if m.label == label), None)


def find_sampler_files(run_dir: Path) -> list[Path]:
    """The sampler CSVs at the top of a run directory."""
    return [p for p in sorted(run_dir.glob("*.csv")) if _is_sampler_csv(p)]


def _is_sampler_csv(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            header = next(csv.reader(f), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return bool(header) and header[0] == "time" and all(c in header for c in _REQUIRED)


def read_sampler_file(path: Path) -> SamplerFile:
    """The rows of one sampler CSV (a row whose clocks cannot be read is skipped)."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
    col = {name: i for i, name in enumerate(header)}
    kept, monotonic, realtime = [], [], []
    for row in body:
        clocks = _clocks(row[col["monotonic_ns"]], row[col["utc"]])
        if clocks is not None:
            kept.append(row)
            monotonic.append(clocks[0])
            realtime.append(clocks[1])
    value_columns = [n for n in header if n not in ("time", *_REQUIRED)]
    series = tuple(_series(name, [r[col[name]] for r in kept]) for name in value_columns)
    marks = tuple(
        Mark(r[col["mark"]], m, t)
        for r, m, t in zip(kept, monotonic, realtime, strict=True)
        if r[col["mark"]]
    )
    return SamplerFile(
        path, np.asarray(monotonic, np.int64), np.asarray(realtime, np.int64), series, marks
    )


def _clocks(monotonic: str, utc: str) -> tuple[int, int] | None:
    try:
        return int(monotonic), utc_ns(utc)
    except ValueError:
        return None


def utc_ns(text: str) -> int:
    """ISO 8601 UTC (`2026-11-22T02:50:42.958840+00:00`) → epoch ns, exactly (no float)."""
    moment = dt.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def _series(column: str, cells: list[str]) -> Series:
    values = np.array([_number(c) for c in cells], np.float64)
    match = _GPU.match(column)
    if match and match["prefix"] in _KNOWN:
        label, unit = _KNOWN[match["prefix"]]
        return Series(f"GPU{match['index']} {label}", unit, values)
    return Series(column, "", values)


def _number(cell: str) -> float:
    try:
        return float(cell) if cell.strip() else float("nan")
    except ValueError:
        return float("nan")
